import type { ILimitRange } from "kubernetes-models/v1/LimitRange";
import type { ILimitRangeItem } from "kubernetes-models/v1/LimitRangeItem";
import type { KubeObject } from "../model.js";
import { quantityValue } from "../schema/quantity.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { gateResources } from "./mcp-gate.js";
import { kube } from "./objects.js";

const smaller = (a: string, b: string) => (quantityValue(a) <= quantityValue(b) ? a : b);
const larger = (a: string, b: string) => (quantityValue(a) >= quantityValue(b) ? a : b);

/**
 * Defaults for containers that set no resources, and a ceiling no container may pass. The
 * ceiling is the workspace's own size, and the profile's defaults are lowered to fit under it,
 * because the API server refuses a LimitRange whose default exceeds its max. A workspace with an
 * MCP gate has room for the gate's container too, which the profile may size above a small
 * workspace; the quota still holds the sum of the two.
 */
export function renderLimitRange(p: NamespaceProfile): KubeObject {
  const gate = gateResources(p);
  const max = gate ? { cpu: larger(p.resources.cpu, gate.cpu), memory: larger(p.resources.memory, gate.memory) } : p.resources;
  const def = { cpu: smaller(p.profile.limits.default.cpu, max.cpu), memory: smaller(p.profile.limits.default.memory, max.memory) };
  const defaultRequest = {
    cpu: smaller(p.profile.limits.defaultRequest.cpu, def.cpu),
    memory: smaller(p.profile.limits.defaultRequest.memory, def.memory),
  };
  const limits: ILimitRangeItem[] = [{ type: "Container", default: def, defaultRequest, max }];
  if (p.volume.mode === "persistent") limits.push({ type: "PersistentVolumeClaim", max: { storage: p.volume.size } });
  return kube<ILimitRange>({
    apiVersion: "v1",
    kind: "LimitRange",
    metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
    spec: { limits },
  });
}
