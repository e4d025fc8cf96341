import {
  fatal,
  Ready,
  type Resource,
  type RunFunctionRequest,
  type RunFunctionResponse,
  Status,
  Target,
  to,
  warning,
} from "@crossplane-org/function-sdk-typescript";
import type { Logger } from "pino";
import { RENDERERS } from "./kinds/index.js";
import { judgeLifecycle, respondLifecycle } from "./lifecycle/operation.js";
import type { KubeObject, Observed, Verdict } from "./model.js";
import { LIFECYCLE_RULES_KIND } from "./schema/lifecycle.js";
import { DEFAULT_TTLS, type ResponseTTLs, responseTTL } from "./respond/ttl.js";
import { describeComposite } from "./respond/verdicts.js";

const readiness = (ready: boolean) => (ready ? Ready.READY_TRUE : Ready.READY_FALSE);

function object(resource: Resource | undefined): KubeObject | undefined {
  return resource?.resource as KubeObject | undefined;
}

/** What the request says about the world, in the plain shapes the renderers take. */
export function observedFrom(req: RunFunctionRequest): Observed | undefined {
  const composite = object(req.observed?.composite);
  if (composite === undefined) return undefined;
  const resources: Record<string, KubeObject> = {};
  for (const [name, r] of Object.entries(req.observed?.resources ?? {})) {
    const o = object(r);
    if (o !== undefined) resources[name] = o;
  }
  const required: Record<string, KubeObject[]> = {};
  for (const [key, list] of Object.entries(req.requiredResources ?? {})) {
    required[key] = (list?.items ?? []).map(object).filter((o): o is KubeObject => o !== undefined);
  }
  return { composite, resources, required };
}

/** Picks the renderer for the XR's kind and renders. */
export function render(observed: Observed): Verdict {
  const renderer = RENDERERS[observed.composite.kind];
  if (renderer === undefined) {
    return {
      type: "fatal",
      requirements: {},
      message: `cannot render ${describeComposite(observed)}: Berth renders ${Object.keys(RENDERERS).join(", ")}, not ${observed.composite.kind}`,
    };
  }
  return renderer(observed);
}

/** Writes a verdict into a response. A fatal verdict leaves the desired state as it came. */
export function respond(req: RunFunctionRequest, verdict: Verdict, ttls: ResponseTTLs = DEFAULT_TTLS): RunFunctionResponse {
  const rsp = to(req, { seconds: responseTTL(verdict, ttls, req.observed?.composite?.resource as KubeObject | undefined), nanos: 0 });
  const resources: Record<string, { apiVersion: string; kind: string; matchName?: string; matchLabels?: { labels: Record<string, string> }; namespace?: string }> = {};
  for (const [key, r] of Object.entries(verdict.requirements)) {
    const match = "matchLabels" in r ? { matchLabels: { labels: r.matchLabels } } : { matchName: r.name };
    resources[key] = { apiVersion: r.apiVersion, kind: r.kind, ...match, ...(r.namespace !== undefined ? { namespace: r.namespace } : {}) };
  }
  rsp.requirements = { extraResources: {}, resources, schemas: {} };
  if (verdict.type === "fatal") return fatal(rsp, verdict.message);

  // Built afresh rather than written into rsp.desired, which is the request's own object.
  const composite = object(req.observed?.composite)!;
  const desired: Record<string, Resource> = { ...(req.desired?.resources ?? {}) };
  for (const [name, r] of Object.entries(verdict.resources)) {
    desired[name] = { resource: r.object, connectionDetails: {}, ready: readiness(r.ready) };
  }
  rsp.desired = {
    composite: {
      resource: { apiVersion: composite.apiVersion, kind: composite.kind, status: verdict.status },
      connectionDetails: {},
      ready: verdict.compositeReady === undefined ? Ready.READY_UNSPECIFIED : readiness(verdict.compositeReady),
    },
    resources: desired,
  };
  rsp.conditions = (verdict.conditions ?? []).map((c) => ({
    type: c.type,
    status: c.status ? Status.STATUS_CONDITION_TRUE : Status.STATUS_CONDITION_FALSE,
    reason: c.reason,
    message: c.message,
    target: Target.TARGET_COMPOSITE,
  }));
  for (const message of verdict.warnings) warning(rsp, message);
  return rsp;
}

/** Berth's lifecycle Operation: the rules judged against the clock, the changes out. */
function runLifecycle(req: RunFunctionRequest, now: Date, logger: Logger | undefined, elapsedMs: () => number): RunFunctionResponse {
  const verdict = judgeLifecycle(req, now);
  const rsp = respondLifecycle(req, verdict);
  logger?.debug(
    {
      operation: "lifecycle",
      verdict: verdict.type,
      ...(verdict.type === "decided"
        ? {
            workspaces: verdict.workspaces,
            acted: verdict.decision.acted.map((a) => `${a.workspace}: ${a.rule}`),
            refused: verdict.decision.refused.length + verdict.decision.unlistedRefusals,
            deferred: verdict.decision.deferred,
          }
        : {}),
      durationMs: elapsedMs(),
    },
    "judged",
  );
  return rsp;
}

/**
 * The function: a composition request in, the desired state out; or, for the lifecycle
 * Operation (told apart by its input's kind, since an Operation has no composite), the
 * workspaces its rules change. `now` is the Operation's clock; the composition reads none.
 */
export function runFunction(req: RunFunctionRequest, logger?: Logger, ttls: ResponseTTLs = DEFAULT_TTLS, now: () => Date = () => new Date()): RunFunctionResponse {
  const started = performance.now();
  const elapsedMs = () => Math.round((performance.now() - started) * 1000) / 1000;
  if ((req.input as { kind?: unknown } | undefined)?.kind === LIFECYCLE_RULES_KIND) return runLifecycle(req, now(), logger, elapsedMs);
  const observed = observedFrom(req);
  if (observed === undefined) {
    logger?.debug({ composite: null, verdict: "fatal", durationMs: elapsedMs() }, "rendered");
    return fatal(to(req), "cannot render: the request has no observed composite resource");
  }
  const verdict = render(observed);
  const rsp = respond(req, verdict, ttls);
  // One line per call, naming the XR and the verdict only: never the request's objects, which
  // can carry Secret data and credentials.
  logger?.debug(
    {
      composite: describeComposite(observed),
      verdict: verdict.type,
      resources: verdict.type === "rendered" ? Object.keys(verdict.resources).length : 0,
      ttlSeconds: rsp.meta?.ttl?.seconds,
      durationMs: elapsedMs(),
    },
    "rendered",
  );
  return rsp;
}
