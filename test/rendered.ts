import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import { runFunction } from "../functions/berth/function.js";
import { asObserved } from "../functions/berth/local-render.js";
import type { KubeObject } from "../functions/berth/model.js";
import { ALL_REQUIRED, request } from "./fixtures.js";

/**
 * Renders a workspace with everything its profile refers to, reconcile after reconcile (the
 * first creates only the Namespace), and returns the composed objects it converges to.
 */
export function renderObjects(workspace: KubeObject, required: Record<string, KubeObject[]> = ALL_REQUIRED): Record<string, KubeObject> {
  let observed: Record<string, KubeObject> = {};
  for (let reconcile = 0; reconcile < 4; reconcile++) {
    const rsp = runFunction(request(workspace, { required, observed }));
    const fatal = rsp.results.find((r) => r.severity === 1);
    if (fatal) throw new Error(fatal.message);
    const desired = asObserved(rsp);
    if (Object.keys(desired).length === Object.keys(observed).length) return desired;
    observed = desired;
  }
  throw new Error("the render did not converge in 4 reconciles");
}

export function ofKind(objects: Record<string, KubeObject>, kind: string): KubeObject[] {
  return Object.values(objects).filter((o) => o.kind === kind);
}

export function podSpec(objects: Record<string, KubeObject>): IPodSpec {
  const [job] = ofKind(objects, "Job");
  if (!job) throw new Error("no Job rendered");
  return (job.spec as { template: { spec: IPodSpec } }).template.spec;
}

export function allContainers(spec: IPodSpec): IContainer[] {
  return [...(spec.initContainers ?? []), ...spec.containers];
}
