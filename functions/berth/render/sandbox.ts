import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import type { KubeObject } from "../model.js";
import type { WorkspaceProfileSpec } from "../schema/profile.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { API_TOKEN_MOUNT, apiTokenVolume, hardenedContainerSecurityContext, hardenedPodSpec, SCRATCH_MOUNTS, SCRATCH_VOLUMES } from "./pod-security.js";
import { WORKSPACE_VOLUME, workspaceVolume } from "./storage.js";
import { WORKSPACE_DIR } from "./workload.js";
import { RUNTIME_PATHS } from "../../contracts/runtime-env.js";

type Runtime = WorkspaceProfileSpec["runtimes"][number];

export interface SandboxSettings {
  runtime: Runtime;
  runtimeClassName?: string;
  /** Suspended deletes the pod and keeps the volume; Running cold-boots it again. */
  operatingMode: "Running" | "Suspended";
  /** When the provider shuts the sandbox down: the class's maximum lifetime after creation. */
  shutdownTime?: string;
  env: { name: string; value: string }[];
}

/**
 * The pod an execution workspace runs in: the same hardening as every Berth pod, the
 * workspace's ServiceAccount (no token unless a declared capability grants one), and its
 * volume. No hostNetwork and no Service: Berth's NetworkPolicies stay the only way out.
 */
export function sandboxPodSpec(p: NamespaceProfile, s: Pick<SandboxSettings, "runtime" | "runtimeClassName" | "env">): IPodSpec {
  const withToken = p.kubernetesAccess !== "none";
  return {
    ...hardenedPodSpec(p),
    ...(s.runtimeClassName ? { runtimeClassName: s.runtimeClassName } : {}),
    restartPolicy: "Always",
    containers: [
      {
        name: "runtime",
        image: s.runtime.image,
        ...(s.runtime.command ? { command: s.runtime.command } : {}),
        ...(s.runtime.args ? { args: s.runtime.args } : {}),
        workingDir: WORKSPACE_DIR,
        env: [...s.env, { name: "HOME", value: RUNTIME_PATHS.home }],
        resources: { requests: p.resources, limits: p.resources },
        securityContext: hardenedContainerSecurityContext(),
        volumeMounts: [{ name: WORKSPACE_VOLUME, mountPath: WORKSPACE_DIR }, ...SCRATCH_MOUNTS, ...(withToken ? [API_TOKEN_MOUNT] : [])],
      },
    ],
    volumes: [workspaceVolume(p), ...SCRATCH_VOLUMES, ...(withToken ? [apiTokenVolume()] : [])],
  };
}

/** A kubernetes-sigs/agent-sandbox Sandbox dedicated to the workspace. */
export function renderSandbox(p: NamespaceProfile, s: SandboxSettings): KubeObject {
  return {
    apiVersion: "agents.x-k8s.io/v1beta1",
    kind: "Sandbox",
    metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
    spec: {
      operatingMode: s.operatingMode,
      podTemplate: { metadata: { labels: p.labels }, spec: sandboxPodSpec(p, s) },
      ...(s.shutdownTime ? { shutdownTime: s.shutdownTime } : {}),
      // The controller stops the pod at shutdownTime and keeps the Sandbox, saying it expired;
      // Berth then removes it itself when the class says Delete. Were the controller to delete
      // it (policy Delete), Crossplane would re-create it from the desired state until Berth's
      // own rule caught up, and the controller delete it again.
      shutdownPolicy: "Retain",
    },
  };
}
