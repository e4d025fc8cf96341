import type { IConfigMap } from "kubernetes-models/v1/ConfigMap";
import type { KubeObject } from "../model.js";
import type { NamespaceProfile } from "../workspace.js";
import { kube } from "./objects.js";
import { RUNTIME_ENV } from "../../contracts/runtime-env.js";

/** The lease's composition resource name and the ConfigMap's name (the runtime reads it in BERTH_RUNTIME_LEASE). */
export const RUNTIME_LEASE = { resource: "runtime-lease", name: "runtime-lease" } as const;

/**
 * The runtime lease of a workspace whose runtime is granted edit: a ConfigMap that exists while
 * the runtime may run (an ExecutionWorkspace neither suspended nor expired, a DeveloperWorkspace
 * whose run has not ended) and is not rendered otherwise, so Crossplane deletes it. Admission
 * (admission/policies.yaml, berth-workspace-runtime) lets the runtime create, change or delete an
 * object only when the lease is its one owner, so the garbage collector deletes everything the
 * runtime made with the lease: a Deployment or CronJob of its making cannot outlive a suspend or
 * the end of the run. Only Crossplane writes it (berth-evidence-workloads).
 */
export function renderRuntimeLease(p: NamespaceProfile): Record<string, KubeObject> {
  if (p.kubernetesAccess !== "edit") return {};
  return {
    [RUNTIME_LEASE.resource]: kube<IConfigMap>({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: RUNTIME_LEASE.name, namespace: p.namespace, labels: p.labels },
      data: {
        owner: "What this workspace's runtime makes here must name this ConfigMap, by name and uid, as its only ownerReference; it is deleted, and with it all it owns, when the workspace is suspended or its run ends.",
      },
    }),
  };
}

/** BERTH_RUNTIME_LEASE: where a runtime granted edit finds the owner of what it makes. */
export function runtimeLeaseEnv(p: NamespaceProfile): { name: string; value: string }[] {
  return p.kubernetesAccess === "edit" ? [{ name: RUNTIME_ENV.runtimeLease, value: RUNTIME_LEASE.name }] : [];
}
