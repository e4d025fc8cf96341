// The requests `npm run bench` sends: a full DeveloperWorkspace as Crossplane would send it once
// everything exists, built by running the function itself (the requirement loop, then the
// rendered objects fed back as observed composed resources with a status).
import { existsSync, readdirSync } from "node:fs";
import {
  Ready,
  type Resource,
  RunFunctionRequest,
  type RunFunctionResponse,
  Severity,
} from "@crossplane-org/function-sdk-typescript";
import type { KubeObject } from "../functions/berth/model.js";
import { withComposedMetadata } from "../functions/berth/tooling/render-output.js";
import { edited, loadObject, loadObjects } from "../test/fixtures.js";

/** A RunFunction implementation called in-process (the compiled functions/berth/function.js). */
export type RunFunc = (req: RunFunctionRequest) => RunFunctionResponse | Promise<RunFunctionResponse>;

export const EXECUTION_EXAMPLE = "examples/executionworkspace-sandbox.yaml";

/**
 * Every object the examples provide (profiles, classes, cluster objects), for answering required
 * resources the way `crossplane render --required-resources` takes them: a requirement matches
 * by apiVersion, kind, name and namespace, so workspaces in the pool are never picked by mistake.
 */
export function clusterObjects(): KubeObject[] {
  const yaml = (dir: string) => readdirSync(dir).filter((f) => f.endsWith(".yaml")).map((f) => `${dir}/${f}`);
  return [...yaml("examples"), ...yaml("examples/cluster")].flatMap(loadObjects);
}

/** The workspace the bench renders: the persistent example with all five kinds of capability. */
export function fullWorkspace(): KubeObject {
  return edited(loadObject("examples/developerworkspace-persistent.yaml"), (w) => {
    const caps = (w.spec as { capabilities: Record<string, unknown> }).capabilities;
    caps.kubernetes = { access: "read", destination: "kube-api" };
  });
}

const wrap = (o: KubeObject): Resource => ({ resource: o, connectionDetails: {}, ready: Ready.READY_UNSPECIFIED });

export function makeRequest(opts: {
  composite: KubeObject;
  observed?: Record<string, KubeObject>;
  required?: Record<string, KubeObject[]>;
}): RunFunctionRequest {
  return RunFunctionRequest.fromPartial({
    meta: { tag: "bench" },
    observed: {
      composite: wrap(opts.composite),
      resources: Object.fromEntries(Object.entries(opts.observed ?? {}).map(([k, o]) => [k, wrap(o)])),
    },
    requiredResources: Object.fromEntries(Object.entries(opts.required ?? {}).map(([k, items]) => [k, { items: items.map(wrap) }])),
  });
}

export function fatalResults(rsp: RunFunctionResponse): string[] {
  return (rsp.results ?? []).filter((r) => r.severity === Severity.SEVERITY_FATAL).map((r) => r.message);
}

/** Crossplane's requirement loop: answer what the function asks for from `pool`, until it asks for nothing new. */
export async function answerRequirements(run: RunFunc, composite: KubeObject, pool: KubeObject[]): Promise<Record<string, KubeObject[]>> {
  let required: Record<string, KubeObject[]> = {};
  for (let round = 0; round < 8; round++) {
    const rsp = await run(makeRequest({ composite, required }));
    const selectors = rsp.requirements?.resources ?? {};
    const next: Record<string, KubeObject[]> = {};
    for (const [key, sel] of Object.entries(selectors)) {
      next[key] = pool.filter(
        (o) =>
          o.apiVersion === sel.apiVersion &&
          o.kind === sel.kind &&
          (sel.matchName === undefined || o.metadata?.name === sel.matchName) &&
          (sel.namespace === undefined || o.metadata?.namespace === sel.namespace),
      );
    }
    const settled = Object.keys(next).every((k) => k in required) && Object.keys(required).length === Object.keys(next).length;
    required = next;
    if (settled) return required;
  }
  throw new Error("the requirement loop did not settle in 8 rounds");
}

const XR_UID = "7d4b2c3e-0000-4000-8000-00000000b347";
const CREATED = "2026-11-01T09:00:00Z";

/** A composed resource as the API server would report it: the rendered object, metadata Crossplane and Kubernetes add, and a status. */
export function observedAs(name: string, rendered: KubeObject, composite: KubeObject, i: number): KubeObject {
  const controller = { apiVersion: composite.apiVersion, kind: composite.kind, name: composite.metadata!.name!, uid: XR_UID };
  const o = withComposedMetadata(structuredClone(rendered), name, controller.name, controller);
  const md = o.metadata as Record<string, unknown>;
  md.uid = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
  md.resourceVersion = String(100_000 + i);
  md.generation = 1;
  md.creationTimestamp = CREATED;
  switch (o.kind) {
    case "Namespace":
      o.status = { phase: "Active" };
      break;
    case "PersistentVolumeClaim": {
      const size = (o.spec as { resources?: { requests?: { storage?: string } } } | undefined)?.resources?.requests?.storage ?? "1Gi";
      o.status = { phase: "Bound", accessModes: ["ReadWriteOnce"], capacity: { storage: size } };
      md.annotations = { ...(md.annotations as object), "pv.kubernetes.io/bind-completed": "yes", "volume.kubernetes.io/selected-node": "node-1" };
      break;
    }
    case "Job":
      o.status = { active: 1, ready: 1, startTime: CREATED, uncountedTerminatedPods: {} };
      break;
    case "ResourceQuota":
      o.status = { hard: (o.spec as { hard?: object } | undefined)?.hard ?? {}, used: {} };
      break;
  }
  return o;
}

/** The XR as Crossplane holds it after a render: its status, Crossplane's spec fields and conditions. */
export function observedComposite(composite: KubeObject, status: Record<string, unknown> | undefined, names: string[], resources: Record<string, KubeObject>): KubeObject {
  const xr = structuredClone(composite);
  xr.metadata = { ...xr.metadata, uid: XR_UID, generation: 1, resourceVersion: "99999", creationTimestamp: CREATED };
  (xr.spec as Record<string, unknown>).crossplane = {
    compositionRef: { name: `${composite.kind.toLowerCase()}s.workspaces.berth.dev` },
    compositionRevisionRef: { name: `${composite.kind.toLowerCase()}s.workspaces.berth.dev-1a2b3c4` },
    compositionUpdatePolicy: "Automatic",
    resourceRefs: names.map((n) => ({ apiVersion: resources[n]!.apiVersion, kind: resources[n]!.kind, name: resources[n]!.metadata?.name, namespace: resources[n]!.metadata?.namespace })),
  };
  xr.status = {
    ...(status ?? {}),
    conditions: [
      { type: "Synced", status: "True", reason: "ReconcileSuccess", lastTransitionTime: CREATED, observedGeneration: 1 },
      { type: "Ready", status: "True", reason: "Available", lastTransitionTime: CREATED, observedGeneration: 1 },
    ],
  };
  return xr;
}

export interface Scenario {
  name: string;
  /** The request, as the object the in-process function takes. */
  req: RunFunctionRequest;
  /** The same request on the wire. */
  bytes: Buffer;
  /** What the function answered to it in-process (for checks). */
  rsp: RunFunctionResponse;
  rendered: number;
  observed: number;
}

/**
 * A request for `composite` with every requirement answered and the whole render observed:
 * the steady state Crossplane calls the function in for as long as the workspace exists.
 * `extraObserved` adds bogus composed resources under other names; `limitObserved` observes
 * only the first N rendered objects.
 */
export async function steadyState(
  run: RunFunc,
  name: string,
  composite: KubeObject,
  opts: { pool?: KubeObject[]; extraObserved?: number; limitObserved?: number } = {},
): Promise<Scenario> {
  const required = await answerRequirements(run, composite, opts.pool ?? clusterObjects());
  // The first reconcile asks only for the Namespace; reconcile until the set stops growing.
  let first = await run(makeRequest({ composite, required }));
  for (let reconcile = 1; reconcile < 4; reconcile++) {
    const asked = first.desired?.resources ?? {};
    const existing = Object.fromEntries(Object.entries(asked).map(([n, r], i) => [n, observedAs(n, r.resource as KubeObject, composite, i)]));
    const next = await run(makeRequest({ composite, required, observed: existing }));
    const grew = Object.keys(next.desired?.resources ?? {}).length > Object.keys(asked).length;
    first = next;
    if (!grew) break;
  }
  const fatal = fatalResults(first);
  if (fatal.length > 0) throw new Error(`${name}: the function refused the workspace: ${fatal.join("; ")}`);
  const names = Object.keys(first.desired?.resources ?? {});
  if (names.length === 0) throw new Error(`${name}: the function rendered nothing (status ${JSON.stringify(first.desired?.composite?.resource?.status)})`);

  const observed: Record<string, KubeObject> = {};
  names.slice(0, opts.limitObserved ?? names.length).forEach((n, i) => {
    observed[n] = observedAs(n, first.desired!.resources[n]!.resource as KubeObject, composite, i);
  });
  const namespace = Object.values(observed).find((o) => o.kind !== "Namespace")?.metadata?.namespace ?? "default";
  for (let i = 0; i < (opts.extraObserved ?? 0); i++) {
    const bogus: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: `bogus-${i}`, namespace, labels: { app: "bogus" } },
      data: { "config.json": JSON.stringify({ index: i, description: "a composed resource another step of the pipeline owns", values: [1, 2, 3, 4, 5, 6, 7, 8] }) },
    };
    observed[`bogus-${i}`] = observedAs(`bogus-${i}`, bogus, composite, 10_000 + i);
  }
  const settledXR = observedComposite(composite, first.desired?.composite?.resource?.status as Record<string, unknown> | undefined, Object.keys(observed), observed);
  // Render once more so that the XR carries the status this observed state produces.
  const second = await run(makeRequest({ composite: settledXR, observed, required }));
  const xr = observedComposite(composite, second.desired?.composite?.resource?.status as Record<string, unknown> | undefined, Object.keys(observed), observed);
  const req = makeRequest({ composite: xr, observed, required });
  const rsp = await run(req);
  const fatal2 = fatalResults(rsp);
  if (fatal2.length > 0) throw new Error(`${name}: fatal result with observed state: ${fatal2.join("; ")}`);
  return {
    name,
    req,
    bytes: Buffer.from(RunFunctionRequest.encode(req).finish()),
    rsp,
    rendered: Object.keys(rsp.desired?.resources ?? {}).length,
    observed: Object.keys(observed).length,
  };
}

/** The ExecutionWorkspace slot: its example, when it exists. */
export function executionWorkspace(): KubeObject | undefined {
  return existsSync(EXECUTION_EXAMPLE) ? loadObject(EXECUTION_EXAMPLE) : undefined;
}

/** The bench profile for the scaling series: the example profile plus N reviewed MCP servers and registries. */
export function scalingPool(n: number): KubeObject[] {
  return clusterObjects().map((o) => {
    if (o.kind !== "WorkspaceProfile") return o;
    return edited(o, (p) => {
      const spec = p.spec as { destinations: object[] };
      for (let i = 0; i < n; i++) {
        spec.destinations.push({ name: `mcp-${i}`, cidrs: [`10.50.${i}.0/24`], ports: [{ port: 443 }] });
        spec.destinations.push({ name: `registry-${i}`, cidrs: [`10.60.${i}.0/24`, `10.61.${i}.0/24`], ports: [{ port: 443 }, { port: 80 }] });
      }
    });
  });
}

/** The full workspace with `mcp` MCP servers (the first is the example's docs server) and `registries` registries. */
export function workspaceWith(mcp: number, registries: number): KubeObject {
  return edited(fullWorkspace(), (w) => {
    const caps = (w.spec as { capabilities: { mcp: object[]; registries: object[] } }).capabilities;
    caps.mcp = caps.mcp.slice(0, 1);
    for (let i = 1; i < mcp; i++) caps.mcp.push({ name: `tools-${i}`, destination: `mcp-${i}`, tools: ["search", "read", "write"] });
    caps.registries = caps.registries.slice(0, 1);
    for (let i = 1; i < registries; i++) caps.registries.push({ destination: `registry-${i}` });
  });
}
