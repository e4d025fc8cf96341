import type { IContainer } from "kubernetes-models/v1/Container";
import type { IPodSpec } from "kubernetes-models/v1/PodSpec";
import { runFunction } from "../functions/berth/function.js";
import { asObserved } from "../functions/berth/tooling/local-render.js";
import type { KubeObject } from "../functions/berth/model.js";
import { ALL_REQUIRED, request } from "./fixtures.js";

/**
 * Renders a workspace with everything its profile refers to, reconcile after reconcile, each
 * observing what the one before asked for, until the set of objects stops growing (the first
 * creates only the Namespace, the next its boundary, then its workload). Returns each
 * reconcile's observed and desired objects, first to last.
 */
export function renderReconciles(
  workspace: KubeObject,
  required: Record<string, KubeObject[]> = ALL_REQUIRED,
): { observed: Record<string, KubeObject>; desired: Record<string, KubeObject> }[] {
  const reconciles: { observed: Record<string, KubeObject>; desired: Record<string, KubeObject> }[] = [];
  let observed: Record<string, KubeObject> = {};
  for (let reconcile = 0; reconcile < 4; reconcile++) {
    const rsp = runFunction(request(workspace, { required, observed }));
    const fatal = rsp.results.find((r) => r.severity === 1);
    if (fatal) throw new Error(fatal.message);
    const desired = asObserved(rsp);
    reconciles.push({ observed, desired });
    if (Object.keys(desired).length === Object.keys(observed).length) return reconciles;
    observed = desired;
  }
  throw new Error("the render did not converge in 4 reconciles");
}

/** The composed objects a workspace converges to (renderReconciles). */
export function renderObjects(workspace: KubeObject, required: Record<string, KubeObject[]> = ALL_REQUIRED): Record<string, KubeObject> {
  return renderReconciles(workspace, required).at(-1)!.desired;
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

type LabelSelector = { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] };

/** Whether a NetworkPolicy's podSelector selects a pod with these labels, as Kubernetes evaluates it. */
export function selects(policy: KubeObject, labels: Record<string, string>): boolean {
  const selector = (policy.spec as { podSelector: LabelSelector }).podSelector;
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
    if (operator === "In") return key in labels && values.includes(labels[key]!);
    if (operator === "NotIn") return !(key in labels) || !values.includes(labels[key]!);
    if (operator === "Exists") return key in labels;
    if (operator === "DoesNotExist") return !(key in labels);
    throw new Error(`unknown operator ${operator}`);
  });
  return byLabel && byExpression;
}
