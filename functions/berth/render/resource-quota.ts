import type { IResourceQuota } from "kubernetes-models/v1/ResourceQuota";
import type { KubeObject } from "../model.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { kube } from "./objects.js";

/**
 * The workspace's whole budget. CPU and memory requests and limits both equal what the
 * document asked for; storage is the one volume (none for ephemeral workspaces); object
 * counts stop a workload with API access from multiplying itself or exposing Services.
 */
export function renderResourceQuota(p: NamespaceProfile): KubeObject {
  const persistent = p.volume.mode === "persistent";
  return kube<IResourceQuota>({
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
    spec: {
      hard: {
        "requests.cpu": p.resources.cpu,
        "limits.cpu": p.resources.cpu,
        "requests.memory": p.resources.memory,
        "limits.memory": p.resources.memory,
        "requests.storage": persistent ? p.volume.size : "0",
        persistentvolumeclaims: persistent ? "1" : "0",
        pods: "4",
        services: "0",
        "services.loadbalancers": "0",
        "services.nodeports": "0",
        configmaps: "16",
        secrets: "16",
      },
    },
  });
}
