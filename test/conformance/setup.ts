// The conformance suite's globalSetup, and the small cluster helpers its test files share.
//
// With BERTH_CONFORMANCE_KUBECONFIG set, the suite uses that cluster as it is: Berth (its
// Function and Configuration, the admission manifests) and the third-party CRDs are expected to
// be installed already (install/install.sh does it: `npm run test:conformance:live` on the live
// cluster, test/conformance/kind/run.sh on kind). Otherwise globalSetup starts the
// local control plane (test/conformance/controlplane: etcd, kube-apiserver,
// kube-controller-manager and Crossplane core as plain processes), starts function-berth on
// loopback with a certificate from Crossplane's CA, and installs what a cluster operator would:
// the upstream CRDs pinned in test/upstream-crds.yaml, Berth's XRDs and Compositions, and admission/*.yaml.
//
// Test files get the kubeconfig path through vitest's inject("kubeconfig").
//
// Only the default export runs as globalSetup; everything else here is plain helpers that
// test files import (importing this module has no side effects).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { request as httpsRequest, type RequestOptions } from "node:https";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from "@kubernetes/client-node";
import type { TestProject } from "vitest/node";
import { parseAllDocuments } from "yaml";
import { installedFunction } from "../support/function-name.js";
import { upstreamCRDs } from "../support/upstream-crds.js";
import { rfc3339 } from "../../functions/berth/lifecycle/signals.js";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const FIELD_MANAGER = "berth-conformance";

declare module "vitest" {
  export interface ProvidedContext {
    /** kubeconfig of the cluster under test (admin: system:masters or cluster-admin). */
    kubeconfig: string;
    /** "local": the control plane started here (no kubelet, no provisioners); "external": BERTH_CONFORMANCE_KUBECONFIG. */
    clusterMode: "local" | "external";
    /** Where the local control plane's process logs are (empty for an external cluster). */
    logDir: string;
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers for test files.

export type Obj = KubernetesObject & { spec?: any; status?: any; [k: string]: any };

/** Every YAML document in a file (or every .yaml under a folder, sorted), relative to the repo. */
export function load(path: string): Obj[] {
  const abs = resolve(REPO, path);
  if (statSync(abs).isDirectory()) {
    return readdirSync(abs)
      .sort()
      .flatMap((e) => (statSync(join(abs, e)).isDirectory() || /\.ya?ml$/.test(e) ? load(join(abs, e)) : []));
  }
  return parseAllDocuments(readFileSync(abs, "utf8"))
    .map((d) => d.toJS() as Obj)
    .filter((o) => o && typeof o === "object" && o.apiVersion && o.kind);
}

export function loadOne(path: string): Obj {
  const [o] = load(path);
  if (!o) throw new Error(`${path} holds no object`);
  return o;
}

export function condition(obj: any, type: string): { status?: string; reason?: string; message?: string; observedGeneration?: number } | undefined {
  return (obj?.status?.conditions ?? []).find((c: any) => c?.type === type);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long a watch-driven correction may take before the harness asks why. */
const WATCH_PROMPT_MS = 15_000;

/**
 * Waits for Crossplane to undo a change to an object the XR composes. It acts on the object's
 * watch event at once, unless its per-XR watch circuit breaker is open (condition
 * Responsive=False, reason WatchCircuitOpen): for 5 minutes after a burst of events on one XR
 * (its own status writes while it becomes Ready can be enough) Crossplane 2.4 lets one event
 * through every 30 s and drops the rest, and a dropped event waits for the XR's requeue, Berth's
 * TTL at rest (15 min). That case is Crossplane's: when the change is not undone within 15 s and
 * the XR says so, the harness logs it and checks what an operator would do, request a
 * reconcile, rather than wait a quarter of an hour; otherwise it waits out timeoutMs.
 */
export async function undoneByCrossplane(
  c: Cluster,
  xr: { apiVersion: string; kind: string; name: string },
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const promptly = await waitFor(what, check, WATCH_PROMPT_MS, 250).then(() => true, () => false);
  if (promptly) return;
  const conditionsNow = async () => (await c.get(xr.apiVersion, xr.kind, xr.name))?.status?.conditions ?? [];
  const responsive = (await conditionsNow()).find((x: any) => x.type === "Responsive");
  if (responsive?.reason === "WatchCircuitOpen") {
    process.stderr.write(`[conformance] ${what}: not within ${WATCH_PROMPT_MS / 1000} s; Crossplane's watch circuit breaker is open for ${xr.kind} ${xr.name} (${responsive.message}); requesting a reconcile\n`);
    await c.mergePatch({ ...xr, metadata: { name: xr.name, annotations: { "crossplane.io/reconcile-requested-at": new Date().toISOString() } } });
    await waitFor(`${what}, after a reconcile was requested`, check, 60_000, 500);
    return;
  }
  await waitFor(what, check, Math.max(1000, deadline - Date.now()), 500).catch(async (e) => {
    throw new Error(`${e instanceof Error ? e.message : e}; ${xr.kind} ${xr.name} conditions: ${JSON.stringify(await conditionsNow())}`);
  });
}

/** What `kubectl get` prints for one object: its printer columns by name (the API server's Table view), each named once. */
export async function printedColumns(c: Cluster, apiVersion: string, kind: string, name: string, namespace?: string): Promise<Record<string, unknown>> {
  const res = await c.request("GET", await c.path(apiVersion, kind, name, namespace), undefined, { accept: "application/json;as=Table;v=v1;g=meta.k8s.io" });
  if (res.status !== 200 || res.body?.kind !== "Table") throw new Error(`the Table of ${kind} ${name}: HTTP ${res.status}: ${res.text.slice(0, 300)}`);
  const names: string[] = res.body.columnDefinitions.map((d: { name: string }) => d.name);
  const twice = names.filter((n, i) => names.indexOf(n) !== i);
  if (twice.length > 0) throw new Error(`kubectl get ${kind} prints ${twice.join(", ")} twice: ${names.join(" ")}`);
  const cells: unknown[] = res.body.rows[0].cells;
  return Object.fromEntries(names.map((n, i) => [n, cells[i]]));
}

/** Polls fn until it returns something other than undefined/false; throws with the last value or error after timeoutMs. */
export async function waitFor<T>(what: string, fn: () => Promise<T>, timeoutMs = 60_000, intervalMs = 500): Promise<Exclude<T, undefined | false>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v as Exclude<T, undefined | false>;
      last = undefined;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(intervalMs);
  }
}

export interface RawResponse {
  status: number;
  body: any;
  text: string;
}

/** Who a raw request is made as (Impersonate-User / Impersonate-Group headers from the admin identity). */
export interface Identity {
  user: string;
  groups?: string[];
}

/**
 * The cluster, as the admin of the kubeconfig. Typed CRUD goes through @kubernetes/client-node's
 * KubernetesObjectApi; subresources, dry runs and impersonated requests (which client-node only
 * supports for a user, not for groups) are raw HTTPS requests with the kubeconfig's credentials.
 */
export class Cluster {
  readonly kc = new KubeConfig();
  readonly objects: KubernetesObjectApi;

  constructor(readonly kubeconfig: string) {
    this.kc.loadFromFile(kubeconfig);
    this.objects = KubernetesObjectApi.makeApiClient(this.kc);
  }

  /** Server-side apply (force) of a manifest; returns the live object. */
  async apply<T extends Obj>(obj: T): Promise<T> {
    const clean = { ...obj } as any;
    delete clean.status;
    return (await this.objects.patch(clean, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply)) as T;
  }

  /**
   * The live object as the API server sent it, or undefined if it does not exist. (A raw GET:
   * client-node's read() turns known kinds into its typed models, which rename fields such as
   * a LimitRange's `default` to `_default`.)
   */
  async get<T = Obj>(apiVersion: string, kind: string, name: string, namespace?: string): Promise<T | undefined> {
    const res = await this.request("GET", await this.path(apiVersion, kind, name, namespace));
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw new Error(`GET ${kind} ${name}: HTTP ${res.status}: ${res.text}`);
    return res.body as T;
  }

  async getOf<T = Obj>(o: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } }): Promise<T | undefined> {
    return this.get<T>(o.apiVersion!, o.kind!, o.metadata!.name!, o.metadata?.namespace);
  }

  /** Deletes (background propagation); true if it existed. */
  async delete(apiVersion: string, kind: string, name: string, namespace?: string): Promise<boolean> {
    try {
      await this.objects.delete({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) } }, undefined, undefined, undefined, undefined, "Background");
      return true;
    } catch (e: any) {
      if (e?.code === 404) return false;
      throw e;
    }
  }

  async mergePatch<T = Obj>(obj: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string | null>; annotations?: Record<string, string | null> } } & Record<string, unknown>): Promise<T> {
    // A merge patch's null removes a key; the client's type has no room for it.
    return (await this.objects.patch(obj as KubernetesObject, undefined, undefined, "conformance-editor", undefined, PatchStrategy.MergePatch)) as T;
  }

  /** One HTTPS request with the kubeconfig's credentials; never throws for an HTTP status. */
  async request(method: string, path: string, body?: unknown, opts: { contentType?: string; accept?: string; as?: Identity } = {}): Promise<RawResponse> {
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error(`${this.kubeconfig}: no current cluster`);
    const url = new URL(path, cluster.server);
    const options: RequestOptions = { method, headers: {} };
    await this.kc.applyToHTTPSOptions(options);
    const headers = (options.headers ?? {}) as Record<string, string | string[]>;
    headers.Accept = opts.accept ?? "application/json";
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) {
      headers["Content-Type"] = opts.contentType ?? "application/json";
      headers["Content-Length"] = String(Buffer.byteLength(payload));
    }
    if (opts.as) {
      headers["Impersonate-User"] = opts.as.user;
      if (opts.as.groups?.length) headers["Impersonate-Group"] = opts.as.groups;
    }
    options.headers = headers;
    options.timeout = 30_000;
    return new Promise((resolvePromise, reject) => {
      const req = httpsRequest(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = undefined;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = text;
          }
          resolvePromise({ status: res.statusCode ?? 0, body: parsed, text });
        });
        res.on("error", reject);
      });
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on("error", reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  private readonly discovery = new Map<string, { kind: string; name: string; namespaced: boolean }[]>();

  /** The REST path of an object (or its collection with name ""), found by discovery (re-read once on a miss: new CRDs). */
  async path(apiVersion: string, kind: string, name: string, namespace?: string): Promise<string> {
    const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const find = () => (this.discovery.get(apiVersion) ?? []).find((x) => x.kind === kind && !x.name.includes("/"));
    if (!find()) {
      const res = await this.request("GET", base);
      this.discovery.set(apiVersion, res.status === 200 ? res.body.resources : []);
    }
    const r = find();
    if (!r) throw new Error(`${kind} is not served at ${apiVersion}`);
    return `${base}${r.namespaced ? `/namespaces/${namespace ?? "default"}` : ""}/${r.name}${name ? `/${name}` : ""}`;
  }

  /** Merge-patches an object's status subresource (standing in for a controller this cluster lacks). */
  async patchStatus(apiVersion: string, kind: string, name: string, namespace: string | undefined, status: unknown): Promise<RawResponse> {
    const res = await this.request("PATCH", `${await this.path(apiVersion, kind, name, namespace)}/status`, { status }, { contentType: "application/merge-patch+json" });
    if (res.status !== 200) throw new Error(`status patch of ${kind} ${name}: HTTP ${res.status}: ${res.text}`);
    return res;
  }

  /** POST a new object, optionally as another identity and/or as a dry run; returns the raw answer. */
  async create(obj: Obj, opts: { as?: Identity; dryRun?: boolean } = {}): Promise<RawResponse> {
    const p = await this.path(obj.apiVersion!, obj.kind!, "", obj.metadata?.namespace);
    return this.request("POST", `${p}${opts.dryRun ? "?dryRun=All" : ""}`, obj, { as: opts.as });
  }
}

/** The API server's authorizer answer for one access by `as` (so a denial can be shown to be a policy's, or RBAC's). */
export async function can(c: Cluster, as: Identity, attrs: Record<string, string>): Promise<boolean> {
  const res = await c.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: { user: as.user, groups: as.groups, resourceAttributes: attrs },
  });
  return res.body?.status?.allowed === true;
}

/** A ClusterRoleBinding of `role` to a user, or to a ServiceAccount when `who` is one (`system:serviceaccount:<ns>:<name>`). */
export function clusterRoleBinding(name: string, role: string, who: Identity, labels: Record<string, string>): Obj {
  const [, , namespace, account] = who.user.split(":");
  const subject = who.user.startsWith("system:serviceaccount:") ? { kind: "ServiceAccount", name: account, namespace } : { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: who.user };
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name, labels },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects: [subject],
  };
}

export { subsetDiff } from "../../functions/berth/observe/subset.js";

/** The parts of a rendered object that the live one must carry: everything but metadata other than labels, and status. */
export function renderedFields(o: Obj): Record<string, unknown> {
  const { apiVersion: _a, kind: _k, metadata, status: _s, ...rest } = o as any;
  return { ...rest, metadata: { labels: metadata?.labels ?? {} } };
}

/**
 * Waits until the berth-class-permits policy is in effect for the class. Until then the API
 * server may deny every ExecutionWorkspace with "failed to configure policy: failed to find
 * resource referenced by paramKind": the policy's paramKind (the class's CRD, which Crossplane
 * creates from the XRD) resolves through a discovery cache the API server refreshes every 30 s,
 * so a denial naming the policy is not yet proof that it works. With `as` (a user the policy
 * applies to: not system:masters), waits for a dry-run asking for more CPU than any class
 * permits to be refused with the class's own message; without it (the admin, whom the policy
 * exempts), waits for that dry-run to be admitted, i.e. for the configuration error to clear.
 */
export async function classPermitsInEffect(c: Cluster, className: string, as?: Identity): Promise<void> {
  await waitFor(`binding berth-class-${className}`, () => c.get("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", `berth-class-${className}`), 60_000);
  const probe: Obj = {
    apiVersion: "workspaces.berth.dev/v1alpha1",
    kind: "ExecutionWorkspace",
    // Recording its creator (berth-workspace-owner), so that the class's binding is what answers.
    metadata: { name: `permits-probe-${className}`, ...(as ? { annotations: { "workspaces.berth.dev/created-by": as.user } } : {}) },
    // Session is the one reuse scope both example classes permit (the schema's default, None, is not).
    spec: { classRef: { name: className }, sessionRef: { name: "permits-probe", namespace: "default" }, reusePolicy: "Session", requests: { resources: { cpu: "1024" } } },
  };
  await waitFor(`ExecutionWorkspaceClass ${className}'s permits binding in effect${as ? ` for ${as.user}` : ""}`, async () => {
    const res = await c.create(probe, { as, dryRun: true });
    const answer = String(res.body?.message ?? res.text);
    const ok = as ? answer.includes(`exceeds what ExecutionWorkspaceClass "${className}" permits`) : res.status === 201;
    if (!ok) throw new Error(`the probe was answered ${res.status}: ${answer}`);
    return true;
  }, 120_000, 1000);
}

/**
 * What the node and the runtimes' controllers would report once a workspace runs: the PVC Bound
 * (no binder), the Job with a ready pod (no kubelet, no Job controller), the MCP gate's Deployment
 * available (no Deployment controller), the Sandbox Ready as
 * agent-sandbox v1.0.1 writes it (each condition for the Sandbox's current generation: Berth reads
 * no other). The local control plane runs none of them, so the conformance suite, the fault suite
 * and bench:system write it by hand through the status subresource; nothing there reverts it,
 * and everything after (Crossplane observing it, Berth's readiness checks) is the real thing.
 * (The live suite runs the real agent-sandbox controller instead.)
 */
const RUNNING_STATUS: Record<string, (now: string, generation: number) => unknown> = {
  PersistentVolumeClaim: () => ({ phase: "Bound" }),
  Job: (now) => ({ startTime: now, active: 1, ready: 1 }),
  Deployment: () => ({ replicas: 1, readyReplicas: 1, availableReplicas: 1 }),
  Sandbox: (now, generation) => ({
    conditions: [
      { type: "Ready", status: "True", reason: "DependenciesReady", message: "Pod is Ready (a test stands in for agent-sandbox)", observedGeneration: generation, lastTransitionTime: now },
      { type: "Suspended", status: "False", reason: "NotSuspended", message: "Sandbox is not suspended", observedGeneration: generation, lastTransitionTime: now },
    ],
  }),
};

/** Whether the stand-in has a running status for this object's kind. */
export const hasRunningStatus = (o: Obj): boolean => RUNNING_STATUS[o.kind!] !== undefined;

/** Writes the running status of an object whose kind has one (see hasRunningStatus). */
export async function standInRunning(c: Cluster, o: Obj): Promise<void> {
  const status = RUNNING_STATUS[o.kind!];
  if (!status) throw new Error(`no stand-in status for ${o.kind}`);
  // Only a Sandbox's conditions name the generation they speak for: read it (one GET) only there.
  const generation = o.kind === "Sandbox" ? (await c.getOf(o))?.metadata?.generation : 0;
  if (generation === undefined) throw new Error(`${o.kind} ${o.metadata!.namespace}/${o.metadata!.name}: not found for its stand-in status`);
  await c.patchStatus(o.apiVersion!, o.kind!, o.metadata!.name!, o.metadata!.namespace, status(rfc3339(new Date()), generation));
}

/**
 * Whether agent-sandbox's own controller runs on this cluster: the live cluster deploys its
 * release (test/live/agent-sandbox.ts); the bare control plane has none, and the tests stand in
 * for what it reports. A test must not stand in where the real controller answers.
 */
export async function agentSandboxControllerRuns(c: Cluster): Promise<boolean> {
  const deployment = await c.get("apps/v1", "Deployment", "agent-sandbox-controller", "agent-sandbox-system");
  return (deployment?.status?.availableReplicas ?? 0) > 0;
}

/** What agent-sandbox reports once a suspended Sandbox's pod is gone: not Ready, and Suspended, for its current generation. */
export async function standInSuspended(c: Cluster, sandbox: { namespace: string; name?: string }): Promise<void> {
  const name = sandbox.name ?? "workspace";
  const live = await c.get("agents.x-k8s.io/v1beta1", "Sandbox", name, sandbox.namespace);
  if (!live) throw new Error(`Sandbox ${sandbox.namespace}/${name}: not found for its stand-in status`);
  const now = rfc3339(new Date());
  const generation = live.metadata!.generation!;
  await c.patchStatus("agents.x-k8s.io/v1beta1", "Sandbox", name, sandbox.namespace, {
    conditions: [
      { type: "Ready", status: "False", reason: "SandboxSuspended", message: "Sandbox is suspended (a test stands in for agent-sandbox)", observedGeneration: generation, lastTransitionTime: now },
      { type: "Suspended", status: "True", reason: "PodTerminated", message: "Pod has been terminated. Sandbox is suspended", observedGeneration: generation, lastTransitionTime: now },
    ],
  });
}

/**
 * The shipped lifecycle CronOperation (operations/lifecycle.yaml) under another name, with time
 * compressed through its input and its workspaces narrowed by the requirement's own selector
 * (a label or a name), so a test's rules act on that test's workspaces alone.
 */
export function compressedLifecycle(name: string, secondsPerMinute: number, workspaces: { matchLabels: Record<string, string> } | { name: string }): Obj {
  const op = structuredClone(loadOne("operations/lifecycle.yaml"));
  op.metadata = { name };
  const step = op.spec.operationTemplate.spec.pipeline[0];
  step.input.secondsPerMinute = secondsPerMinute;
  Object.assign(step.requirements.requiredResources.find((r: { requirementName: string }) => r.requirementName === "workspaces"), workspaces);
  return op;
}

/** The Operations a CronOperation has made, newest last. */
export async function operationsOf(c: Cluster, cronOperation: string): Promise<Obj[]> {
  const res = await c.request("GET", `/apis/ops.crossplane.io/v1alpha1/operations?labelSelector=ops.crossplane.io/cronoperation=${cronOperation}`);
  return ((res.body?.items ?? []) as Obj[]).sort((a, b) => String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)));
}

export const ref = (o: Obj) => `${o.kind} ${o.metadata?.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata?.name}`;

// ---------------------------------------------------------------------------------------------
// globalSetup.

const log = (m: string) => process.stderr.write(`[conformance ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

/** The upstream CRDs Berth composes (pinned in test/upstream-crds.yaml), applied and Established. */
export async function installUpstreamCRDs(c: Cluster, say: (m: string) => void = log): Promise<Obj[]> {
  const upstream = await upstreamCRDs();
  if (!upstream.available) throw new Error(`the upstream CRDs are needed: ${upstream.reason}`);
  say(`upstream CRDs: ${upstream.source}`);
  const crds = upstream.paths.flatMap(load);
  for (const crd of crds) await c.apply(crd);
  for (const crd of crds) {
    await waitFor(`CRD ${crd.metadata!.name} Established`, async () => condition(await c.getOf(crd), "Established")?.status === "True", 60_000, 250);
  }
  return crds;
}

/** What the examples need that is not Berth's: the reviewed Services' namespaces, the StorageClass, the Services. */
export async function applyExampleCluster(c: Cluster): Promise<void> {
  for (const ns of ["ai-gateway", "mcp", "team-payments"]) await c.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  for (const o of [...load("examples/cluster/storageclass.yaml"), ...load("examples/cluster/services.yaml")]) await c.apply(o);
}

/** The example WorkspaceProfile and ExecutionWorkspaceClass, once the class says Ready (its admission binding rendered). */
export async function applyExampleProfileAndClass(c: Cluster, edit: (cls: Obj) => void = () => {}): Promise<void> {
  const cls = loadOne("examples/class-sandbox.yaml");
  edit(cls);
  for (const o of [loadOne("examples/profile.yaml"), cls]) await c.apply(o);
  await waitFor(`class ${cls.metadata!.name} Ready`, async () => condition(await c.getOf(cls), "Ready")?.status === "True", 120_000);
}

/** The CRDs, XRDs, Compositions and admission manifests a cluster operator installs, in order. */
export async function installBerth(c: Cluster, say: (m: string) => void = log): Promise<void> {
  const crds = await installUpstreamCRDs(c, say);
  const xrds = readdirSync(resolve(REPO, "apis")).sort().map((d) => loadOne(`apis/${d}/definition.yaml`));
  for (const x of xrds) await c.apply(x);
  for (const comp of load("compositions")) await c.apply(comp);
  for (const op of load("operations")) await c.apply(op);
  for (const f of ["admission/params.yaml", "admission/policies.yaml", "admission/rbac.yaml"]) for (const o of load(f)) await c.apply(o);
  say(`applied ${crds.length} CRDs, ${xrds.length} XRDs, compositions, operations and admission manifests`);

  for (const x of xrds) {
    await waitFor(`XRD ${x.metadata!.name} Established`, async () => condition(await c.getOf(x), "Established")?.status === "True", 120_000, 250);
  }
  // The generated CRDs are served once discovery lists every XR kind.
  const group = xrds[0]!.spec.group as string;
  const kinds = xrds.map((x) => x.spec.names.kind as string);
  const version = (xrds[0]!.spec.versions as { name: string }[])[0]!.name;
  await waitFor(`${kinds.join(", ")} served at ${group}/${version}`, async () => {
    const res = await c.request("GET", `/apis/${group}/${version}`);
    const served = new Set((res.body?.resources ?? []).map((r: any) => r.kind));
    return kinds.every((k) => served.has(k));
  }, 120_000, 250);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const external = process.env.BERTH_CONFORMANCE_KUBECONFIG;
  if (external) {
    log(`using the cluster of ${external} as it is`);
    project.provide("kubeconfig", resolve(external));
    project.provide("clusterMode", "external");
    project.provide("logDir", "");
    return async () => {};
  }

  const { startControlPlane } = await import("./controlplane/controlplane.js");
  let t = Date.now();
  const cp = await startControlPlane({ log });
  log(`control plane up in ${((Date.now() - t) / 1000).toFixed(1)} s; KUBECONFIG=${cp.kubeconfig}`);
  try {
    t = Date.now();
    const fn = await cp.startFunction({
      name: installedFunction().name,
      command: process.execPath,
      args: ["--import", "tsx", "functions/berth/main.ts"],
      cwd: REPO,
    });
    log(`function-berth on 127.0.0.1:${fn.port} (${((Date.now() - t) / 1000).toFixed(1)} s); log ${fn.logFile}`);
    t = Date.now();
    await installBerth(new Cluster(cp.kubeconfig));
    log(`Berth installed in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  } catch (e) {
    await cp.stop();
    throw e;
  }
  project.provide("kubeconfig", cp.kubeconfig);
  project.provide("clusterMode", "local");
  project.provide("logDir", cp.logDir);
  return async () => {
    log("stopping the control plane");
    await cp.stop();
  };
}
