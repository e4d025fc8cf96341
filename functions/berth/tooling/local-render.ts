import { type Resource, RunFunctionRequest, type RunFunctionResponse, Severity } from "@crossplane-org/function-sdk-typescript";
import { runFunction } from "../function.js";
import type { KubeObject } from "../model.js";

/** Crossplane calls a function again while its requirements change, at most this many times. */
const MAX_REQUIREMENT_ITERATIONS = 5;

export interface LocalRender {
  response: RunFunctionResponse;
  /** The request of the last call, so callers can run the same one elsewhere (over gRPC). */
  request: RunFunctionRequest;
}

export type Selector = { apiVersion: string; kind: string; matchName?: string; matchLabels?: { labels?: Record<string, string> }; namespace?: string };

/** Whether an object is one a requirement asks for: by name, or (as Crossplane does) by all of some labels. */
export function matches(o: KubeObject, selector: Selector): boolean {
  const labels = (o.metadata?.labels ?? {}) as Record<string, string>;
  const wanted = selector.matchLabels?.labels;
  return (
    o.apiVersion === selector.apiVersion &&
    o.kind === selector.kind &&
    (wanted !== undefined ? Object.entries(wanted).every(([k, v]) => labels[k] === v) : o.metadata?.name === selector.matchName) &&
    (o.metadata?.namespace ?? undefined) === (selector.namespace || undefined)
  );
}

/**
 * Runs the function the way Crossplane does for one reconcile, with no cluster: the composite
 * and observed resources come from files, and each requirement is answered from `cluster`
 * (an empty answer where nothing matches), until the requirements stop changing.
 */
export async function renderLocally(
  composite: KubeObject,
  cluster: readonly KubeObject[],
  observed: Record<string, KubeObject> = {},
  call: (req: RunFunctionRequest) => Promise<RunFunctionResponse> = async (req) => runFunction(req),
): Promise<LocalRender> {
  const toResource = (o: KubeObject): Resource => ({ resource: o, connectionDetails: {}, ready: 0 });
  let request = RunFunctionRequest.fromPartial({
    meta: { tag: "" },
    observed: {
      composite: toResource(composite),
      resources: Object.fromEntries(Object.entries(observed).map(([name, o]) => [name, toResource(o)])),
    },
  });
  let response = await call(request);
  for (let i = 1; i < MAX_REQUIREMENT_ITERATIONS; i++) {
    const wanted = response.requirements?.resources ?? {};
    const answered = Object.keys(request.requiredResources);
    if (Object.keys(wanted).every((k) => answered.includes(k)) && Object.keys(wanted).length === answered.length) break;
    const requiredResources: RunFunctionRequest["requiredResources"] = {};
    for (const [key, selector] of Object.entries(wanted)) {
      requiredResources[key] = { items: cluster.filter((o) => selector !== undefined && matches(o, selector)).map(toResource) };
    }
    request = { ...request, requiredResources };
    response = await call(request);
  }
  return { response, request };
}

export function fatalMessages(response: RunFunctionResponse): string[] {
  return response.results.filter((r) => r.severity === Severity.SEVERITY_FATAL).map((r) => r.message);
}

/** Observed objects as a later reconcile would see them: what the last one asked for, now existing. */
export function asObserved(response: RunFunctionResponse): Record<string, KubeObject> {
  return Object.fromEntries(Object.entries(response.desired?.resources ?? {}).map(([name, r]) => [name, r.resource as KubeObject]));
}

/**
 * Renders reconcile after reconcile, each seeing the objects the previous one asked for as
 * existing, until the set of objects stops growing: what a workspace converges to (the first
 * reconcile creates only its Namespace). Returns every reconcile's result, first to last.
 */
export async function renderConverged(composite: KubeObject, cluster: readonly KubeObject[], maxReconciles = 4): Promise<LocalRender[]> {
  const reconciles = [await renderLocally(composite, cluster)];
  for (let i = 1; i < maxReconciles; i++) {
    const previous = reconciles.at(-1)!.response;
    const observed = asObserved(previous);
    const next = await renderLocally(composite, cluster, observed);
    reconciles.push(next);
    if (Object.keys(next.response.desired?.resources ?? {}).length === Object.keys(observed).length) break;
  }
  return reconciles;
}
