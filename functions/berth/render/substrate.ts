import type { KubeObject } from "../model.js";
import type { ExecutionWorkspaceClassSpec } from "../schema/execution.js";
import type { WorkspaceProfileSpec } from "../schema/profile.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_ID_LABEL, WORKSPACE_OBJECT_NAME } from "./labels.js";
import { WORKSPACE_VOLUME } from "./storage.js";
import { WORKSPACE_DIR } from "./workload.js";

type Runtime = WorkspaceProfileSpec["runtimes"][number];
type SubstrateSettings = NonNullable<ExecutionWorkspaceClassSpec["agentSubstrate"]>;

/**
 * What Agent Substrate lets Berth declare: a WorkerPool dedicated to the workspace and an
 * ActorTemplate that runs only on it, in gVisor, with a durable directory for the files and
 * data-only snapshots (files, never process memory). Creating, pausing and resuming the actor
 * itself are calls to Substrate's API; Berth says so in status rather than pretending.
 */
export function renderSubstrate(
  p: NamespaceProfile,
  settings: SubstrateSettings,
  runtime: Runtime,
  env: { name: string; value: string }[],
): Record<string, KubeObject> {
  const pool = { [WORKSPACE_ID_LABEL]: p.workspaceID };
  return {
    "runtime-pool": {
      apiVersion: "ate.dev/v1alpha1",
      kind: "WorkerPool",
      metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
      spec: {
        ateomImage: settings.ateomImage,
        replicas: settings.workerPool.replicas,
        sandboxClass: "gvisor",
        template: {
          ...(Object.keys(settings.workerPool.nodeSelector).length > 0 ? { nodeSelector: settings.workerPool.nodeSelector } : {}),
          resources: { requests: p.resources, limits: p.resources },
        },
      },
    },
    "runtime-template": {
      apiVersion: "ate.dev/v1alpha1",
      kind: "ActorTemplate",
      metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
      spec: {
        pauseImage: settings.pauseImage,
        sandboxClass: "gvisor",
        snapshotsConfig: { location: `${settings.snapshotLocation.replace(/\/+$/, "")}/${p.namespace}`, onCommit: "Data", onPause: "Data" },
        containers: [
          {
            name: "runtime",
            image: runtime.image,
            ...(runtime.command || runtime.args ? { command: [...(runtime.command ?? []), ...(runtime.args ?? [])] } : {}),
            env,
            volumeMounts: [{ name: WORKSPACE_VOLUME, mountPath: WORKSPACE_DIR }],
          },
        ],
        volumes: [{ name: WORKSPACE_VOLUME, durableDir: {} }],
        workerSelector: { matchLabels: pool },
      },
    },
  };
}

export const SUBSTRATE_NOT_DECLARABLE =
  "Berth declares the dedicated worker pool and the actor template; creating the actor, pausing it (a data-only snapshot of its files) and resuming it are calls to the provider's API made by the session's controller, which Berth cannot declare";
