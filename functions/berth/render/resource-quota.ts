import type { IResourceQuota } from "kubernetes-models/v1/ResourceQuota";
import type { KubeObject } from "../model.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { sumCpu, sumMemory } from "../schema/quantity.js";
import { componentResources } from "./components.js";
import { gateResources } from "./mcp-gate.js";
import { kube } from "./objects.js";

/**
 * The workspace's whole budget. CPU and memory requests and limits both equal what the
 * document asked for; storage is the one volume (none for ephemeral workspaces); object
 * counts stop a workload with API access from multiplying itself or exposing Services.
 * Containers Berth runs beside the workspace's (the MCP gate, the evidence collector and export)
 * have their CPU and memory on top; a gate has its one Service.
 */
export function renderResourceQuota(p: NamespaceProfile): KubeObject {
  const persistent = p.volume.mode === "persistent";
  const gate = gateResources(p);
  const components = componentResources(p);
  const cpu = components.reduce((sum, c) => sumCpu(sum, c.cpu), p.resources.cpu);
  const memory = components.reduce((sum, c) => sumMemory(sum, c.memory), p.resources.memory);
  return kube<IResourceQuota>({
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
    spec: {
      hard: {
        "requests.cpu": cpu,
        "limits.cpu": cpu,
        "requests.memory": memory,
        "limits.memory": memory,
        "requests.storage": persistent ? p.volume.size : "0",
        persistentvolumeclaims: persistent ? "1" : "0",
        pods: "4",
        services: gate ? "1" : "0",
        "services.loadbalancers": "0",
        "services.nodeports": "0",
        configmaps: "16",
        secrets: "16",
      },
    },
  });
}
