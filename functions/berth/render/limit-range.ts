import type { ILimitRange } from "kubernetes-models/v1/LimitRange";
import type { ILimitRangeItem } from "kubernetes-models/v1/LimitRangeItem";
import type { KubeObject } from "../model.js";
import { quantityValue } from "../schema/quantity.js";
import type { NamespaceProfile } from "../workspace.js";
import { WORKSPACE_OBJECT_NAME } from "./labels.js";
import { componentResources } from "./components.js";
import { kube } from "./objects.js";

/** The least a container may ask for: anything but nothing. */
const MIN = { cpu: "1m", memory: "1Mi" };
const smaller = (a: string, b: string) => (quantityValue(a) <= quantityValue(b) ? a : b);
const larger = (a: string, b: string) => (quantityValue(a) >= quantityValue(b) ? a : b);

/**
 * Defaults for containers that set no resources, and a ceiling no container may pass. The
 * ceiling is the workspace's own size, and the profile's defaults are lowered to fit under it,
 * because the API server refuses a LimitRange whose default exceeds its max. The containers Berth
 * runs beside the workspace's (MCP gate, evidence collector and export) fit under it too, as the
 * profile may size them above a small workspace; the quota still holds the sum.
 */
export function renderLimitRange(p: NamespaceProfile): KubeObject {
  const max = componentResources(p).reduce((m, c) => ({ cpu: larger(m.cpu, c.cpu), memory: larger(m.memory, c.memory) }), p.resources);
  const def = { cpu: smaller(p.profile.limits.default.cpu, max.cpu), memory: smaller(p.profile.limits.default.memory, max.memory) };
  const defaultRequest = {
    cpu: smaller(p.profile.limits.defaultRequest.cpu, def.cpu),
    memory: smaller(p.profile.limits.defaultRequest.memory, def.memory),
  };
  // A container that asks for no CPU or memory (0, not unset: unset takes the defaults) is
  // counted as nothing by the quota and, with a limit of 0, run unbounded by the kubelet.
  const min = { cpu: smaller(MIN.cpu, defaultRequest.cpu), memory: smaller(MIN.memory, defaultRequest.memory) };
  const limits: ILimitRangeItem[] = [{ type: "Container", default: def, defaultRequest, max, min }];
  if (p.volume.mode === "persistent") limits.push({ type: "PersistentVolumeClaim", max: { storage: p.volume.size } });
  return kube<ILimitRange>({
    apiVersion: "v1",
    kind: "LimitRange",
    metadata: { name: WORKSPACE_OBJECT_NAME, namespace: p.namespace, labels: p.labels },
    spec: { limits },
  });
}
