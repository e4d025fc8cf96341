// Issue 13: Berth's lifecycle rules run by real Crossplane Operations. A CronOperation like the
// shipped one (operations/lifecycle.yaml), with time compressed through its input alone
// (secondsPerMinute: 1, so a class's 20 idle minutes last 20 seconds), runs Berth's function
// once a minute against the real API server: an idle Durable workspace is suspended and says
// which rule acted and when, an active one and one whose class forbids suspend are never
// touched, and an activity signal resumes the suspended one at once (its annotation change
// reconciles it; nothing waits for the Operation or the composition's requeue). The cluster
// also holds 24 classes of about 240 KB each, so every Operation's request here is past gRPC's
// default 4 MiB bound, as it is for a fleet of 500 or more ExecutionWorkspaces (about 8.5 KB
// each): what bench:system found the function refusing before it served with its own bound.
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DETACHED_AT, EXPIRED_AT, LAST_ACTIVITY, RELEASED_AT, rfc3339, SUSPENDED_AT, SUSPENDED_BY } from "../../functions/berth/lifecycle/signals.js";
import { classPermitsInEffect, Cluster, compressedLifecycle, condition, hasRunningStatus, load, loadOne, type Obj, operationsOf, printedColumns, standInRunning, standInSuspended, waitFor } from "./setup.js";

const c = new Cluster(inject("kubeconfig"));
const API = "workspaces.berth.dev/v1alpha1";
const OPS = "ops.crossplane.io/v1alpha1";
const SANDBOX_API = "agents.x-k8s.io/v1beta1";
const LABEL = { "berth.dev/conformance": "lifecycle" };
const log = (m: string) => console.log(`[lifecycle ${new Date().toISOString().slice(11, 19)}] ${m}`);

const example = loadOne("examples/class-sandbox.yaml");
const DURABLE: Obj = { ...structuredClone(example), metadata: { name: "lifecycle-durable" } };
DURABLE.spec.lifecycle.idleTimeoutMinutes = 20;
const EPHEMERAL: Obj = { ...structuredClone(DURABLE), metadata: { name: "lifecycle-ephemeral" } };
Object.assign(EPHEMERAL.spec, { mode: "Ephemeral", permits: { ...EPHEMERAL.spec.permits, checkpoint: false, restore: false, fork: false } });
EPHEMERAL.spec.lifecycle.onDetach = { default: "Keep", allowed: ["Keep", "Delete"] };
/** A class whose workspaces live 45 (compressed) minutes and are never idle long enough to suspend. */
const BRIEF: Obj = { ...structuredClone(DURABLE), metadata: { name: "lifecycle-brief" } };
Object.assign(BRIEF.spec.lifecycle, { idleTimeoutMinutes: 600, maxLifetimeMinutes: 45 });

function workspace(name: string, cls: Obj): Obj {
  const w = structuredClone(loadOne("examples/executionworkspace-sandbox.yaml"));
  w.metadata = { name, labels: LABEL };
  w.spec.classRef = { name: cls.metadata!.name };
  w.spec.sessionRef = { name, namespace: "team-payments" };
  delete w.spec.requests.capabilities;
  return w;
}
const IDLE = workspace("lc-idle", DURABLE);
const BUSY = workspace("lc-busy", DURABLE);
const SCRATCH = workspace("lc-scratch", EPHEMERAL);
// Ephemeral too, but its onDetach action is Delete: when idle, the rule releases it.
const THROWAWAY = workspace("lc-throwaway", EPHEMERAL);
THROWAWAY.spec.onDetach = "Delete";
// Out of the compressed CronOperation's reach (no label): the detach signal alone acts on them.
const AWAY = { ...workspace("lc-away", DURABLE), metadata: { name: "lc-away" } };
const GONE = { ...workspace("lc-gone", DURABLE), metadata: { name: "lc-gone" } };
GONE.spec.onDetach = "Delete";
const SHORT = workspace("lc-short", BRIEF);
const ALL = [IDLE, BUSY, SCRATCH, THROWAWAY, AWAY, GONE, SHORT];
/** Classes that carry 240 KB each (an annotation near the API server's 256 KB limit), so the Operation's request is past 4 MiB. */
const PADDING = Array.from({ length: 24 }, (_, i): Obj => {
  const cls = structuredClone(DURABLE);
  cls.metadata = { name: `lifecycle-padding-${i}`, labels: LABEL, annotations: { "berth.dev/conformance-padding": "x".repeat(240_000) } };
  return cls;
});
const FOUR_MIB = 4 * 1024 * 1024;

const CRON = compressedLifecycle("berth-lifecycle-conformance", 1, { matchLabels: LABEL });

const ew = (name: string) => c.get(API, "ExecutionWorkspace", name);
const sandboxOf = (name: string) => c.get(SANDBOX_API, "Sandbox", "workspace", `ws-${name}`);
const nowRFC3339 = () => rfc3339(new Date());
/** A second past now: activity must be after a detach written within the same second. */
const nowRFC3339Later = () => rfc3339(new Date(Date.now() + 1000));

/** Stands in for the node and agent-sandbox: every composed object that has a running status gets it. */
async function runningStandIn(name: string): Promise<void> {
  const xr = await ew(name);
  for (const r of xr?.spec?.crossplane?.resourceRefs ?? []) {
    const o = await c.get(r.apiVersion, r.kind, r.name, r.namespace);
    if (o && hasRunningStatus(o)) await standInRunning(c, o);
  }
}

async function phaseOf(name: string, phase: string, timeoutMs = 90_000): Promise<Obj> {
  return waitFor(`${name} phase ${phase}`, async () => {
    await runningStandIn(name);
    const x = await ew(name);
    return x?.status?.phase === phase && condition(x, "Synced")?.status === "True" && x;
  }, timeoutMs, 1000);
}

// The file stands in for the kubelet, the volume provisioner and agent-sandbox by writing the
// status they would write (a running workspace is the only kind the idle rule judges). On a
// cluster that runs those controllers they revert it, so the file runs on the local control
// plane only; test/live proves the same lifecycle on a real node with real pods and files.
const local = inject("clusterMode") === "local";
if (!local) console.log("[lifecycle] skipped on this cluster: its controllers revert the stand-in status these checks write; CI runs them on the local control plane, and test/live runs the lifecycle on a real node");

describe.runIf(local)("the lifecycle, run by Crossplane Operations", () => {
  let keepBusy: NodeJS.Timeout | undefined;
  let cronAppliedAt = 0;

  beforeAll(async () => {
    for (const ns of ["ai-gateway", "mcp"]) await c.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    for (const o of [...load("examples/cluster/storageclass.yaml"), ...load("examples/cluster/services.yaml"), loadOne("examples/profile.yaml"), DURABLE, EPHEMERAL, BRIEF]) await c.apply(o);
    for (const cls of [DURABLE, EPHEMERAL, BRIEF]) {
      await waitFor(`ExecutionWorkspaceClass ${cls.metadata!.name} Ready`, async () => condition(await c.getOf(cls), "Ready")?.status === "True", 120_000);
      await classPermitsInEffect(c, cls.metadata!.name!);
    }
    for (const cls of PADDING) await c.apply(cls);
    for (const w of ALL) await c.apply(w);
    for (const w of ALL) await phaseOf(w.metadata!.name!, "Ready", 120_000);
    // Whatever drives lc-busy's agent reports activity every few seconds.
    const signal = () => c.mergePatch({ apiVersion: API, kind: "ExecutionWorkspace", metadata: { name: BUSY.metadata!.name!, annotations: { [LAST_ACTIVITY]: nowRFC3339() } } }).catch(() => undefined);
    await signal();
    keepBusy = setInterval(signal, 5000);
    await c.apply(CRON);
    cronAppliedAt = Date.now();
    log("seven workspaces Ready; CronOperation berth-lifecycle-conformance applied (every minute, secondsPerMinute 1, idleTimeoutMinutes 20)");
  });

  afterAll(async () => {
    clearInterval(keepBusy);
    await c.delete(OPS, "CronOperation", CRON.metadata!.name!).catch(() => undefined);
    for (const w of ALL) await c.delete(API, "ExecutionWorkspace", w.metadata!.name!).catch(() => undefined);
    for (const cls of PADDING) await c.delete(API, "ExecutionWorkspaceClass", cls.metadata!.name!).catch(() => undefined);
  });

  it("the shipped CronOperation runs Berth's function every minute and its Operations succeed, with requests past gRPC's default 4 MiB bound", async () => {
    const shipped = loadOne("operations/lifecycle.yaml").metadata!.name!;
    // What the Operation's request carries: every ExecutionWorkspace and class as the API server lists them.
    const listed = async (plural: string) => Buffer.byteLength(JSON.stringify((await c.request("GET", `/apis/${API}/${plural}`)).body.items));
    const bytes = (await listed("executionworkspaces")) + (await listed("executionworkspaceclasses"));
    log(`the Operation's required resources: ${(bytes / 1024 / 1024).toFixed(2)} MiB as JSON`);
    expect(bytes).toBeGreaterThan(FOUR_MIB * 1.2);
    const after = Date.now();
    const op = await waitFor(`an Operation of CronOperation ${shipped} made after that Succeeded`, async () => {
      return (await operationsOf(c, shipped)).find((o) => Date.parse(String(o.metadata!.creationTimestamp)) >= after - 1000 && condition(o, "Succeeded")?.status === "True");
    }, 150_000, 2000).catch(async (e: Error) => {
      // Says why the Operations failed (a refused request names both sizes).
      const last = (await operationsOf(c, shipped)).at(-1);
      throw new Error(`${e.message}; the last Operation says: ${JSON.stringify(last?.status?.conditions ?? [])}`);
    });
    expect(op.status.pipeline?.[0]?.step).toBe("lifecycle");
  });

  let suspendedOp: Obj;
  it("an idle workspace is suspended by the idle rule: the Operation's output and event say so, and the status names the rule and the time", async () => {
    const xr = await waitFor(`${IDLE.metadata!.name} carries Berth's suspension`, async () => {
      const x = await ew(IDLE.metadata!.name!);
      return x?.metadata?.annotations?.[SUSPENDED_AT] !== undefined && x;
    }, 150_000, 1000);
    const annotations = xr.metadata!.annotations!;
    const at = annotations[SUSPENDED_AT]!;
    expect(annotations[SUSPENDED_BY]).toBe("IdleTimeout");
    log(`lc-idle suspended by the Operation ${((Date.now() - cronAppliedAt) / 1000).toFixed(1)} s after the CronOperation was applied, at ${at}`);

    await waitFor("lc-idle's Sandbox operatingMode Suspended", async () => (await sandboxOf(IDLE.metadata!.name!))?.spec.operatingMode === "Suspended", 60_000);
    // Stands in for agent-sandbox: the pod is gone, the Sandbox no longer Ready.
    await standInSuspended(c, { namespace: `ws-${IDLE.metadata!.name}` });
    // Crossplane writes a reconcile's result in two steps: the function's status fields (phase)
    // with one apply, then the conditions (Berth's among them) with an update; wait for both.
    const suspended = await waitFor("lc-idle phase Suspended and condition Suspended True", async () => {
      const x = await ew(IDLE.metadata!.name!);
      return x?.status?.phase === "Suspended" && condition(x, "Suspended")?.status === "True" && x;
    }, 60_000);
    expect(suspended.status.reason).toBe("IdleTimeout");
    expect(suspended.status.message).toContain(`Berth's IdleTimeout rule suspended the workspace at ${at}`);
    expect(suspended.status.lifecycle).toMatchObject({ suspendedAt: at, suspendedBy: "IdleTimeout" });
    // Berth's own conditions, set through the function's response, beside Crossplane's.
    expect(condition(suspended, "Suspended")).toMatchObject({ status: "True", reason: "IdleTimeout" });
    expect(condition(suspended, "ClassBound")).toMatchObject({ status: "True", reason: "Bound" });
    expect(condition(suspended, "EgressResolved")?.status).toBe("True");
    expect(condition(suspended, "CapacityEnforced")?.status).toBe("True");
    const columns = await printedColumns(c, API, "ExecutionWorkspace", IDLE.metadata!.name!);
    expect(columns).toMatchObject({ PHASE: "Suspended", REASON: "IdleTimeout" });
    expect(columns["IDLE-SINCE"]).toMatch(/^\d+[smh]/);
    log(`lc-idle Suspended: ${suspended.status.message}; kubectl get prints ${JSON.stringify(columns)}`);

    suspendedOp = (await operationsOf(c, CRON.metadata!.name!)).find((o) => (o.status?.appliedResourceRefs ?? []).some((r: { name: string }) => r.name === IDLE.metadata!.name))!;
    expect(suspendedOp, "the Operation that applied the suspension").toBeDefined();
    expect(condition(suspendedOp, "Succeeded")?.status).toBe("True");
    const output = suspendedOp.status.pipeline[0].output;
    // The same run may also have released lc-throwaway and expired lc-short (see below).
    expect(output.acted.find((a: { workspace: string }) => a.workspace === IDLE.metadata!.name)).toMatchObject({ rule: "IdleTimeout", at });
    const events = await c.request("GET", `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${suspendedOp.metadata!.name}`);
    const messages = (events.body.items as { message: string }[]).map((e) => e.message);
    expect(messages.some((m) => m.includes(`suspended ExecutionWorkspace "${IDLE.metadata!.name}" at ${at}`)), messages.join("\n")).toBe(true);
    log(`Operation ${suspendedOp.metadata!.name}: ${JSON.stringify(output)}`);
  });

  it("a workspace past its class's maximum lifetime is expired: its runtime removed, its volume kept", async () => {
    const name = SHORT.metadata!.name!;
    const pvc = await c.get("v1", "PersistentVolumeClaim", "workspace", `ws-${name}`);
    const xr = await waitFor(`${name} carries Berth's expiry`, async () => {
      const x = await ew(name);
      return x?.metadata?.annotations?.[EXPIRED_AT] !== undefined && x;
    }, 150_000, 1000);
    await waitFor(`${name}'s Sandbox removed`, async () => (await sandboxOf(name)) === undefined, 60_000);
    const expired = await waitFor(`${name} phase Expired`, async () => {
      const x = await ew(name);
      return x?.status?.phase === "Expired" && x;
    }, 60_000);
    expect(expired.status.reason).toBe("MaxLifetime");
    expect(expired.status.lifecycle.expiredAt).toBe(xr.metadata!.annotations![EXPIRED_AT]);
    expect((await c.get("v1", "PersistentVolumeClaim", "workspace", `ws-${name}`))?.metadata?.uid, "the same volume").toBe(pvc?.metadata?.uid);
    const op = (await operationsOf(c, CRON.metadata!.name!)).find((o) => (o.status?.appliedResourceRefs ?? []).some((r: { name: string }) => r.name === name))!;
    expect(op.status.pipeline[0].output.acted.find((a: { workspace: string }) => a.workspace === name)).toMatchObject({ rule: "MaxLifetime" });
    log(`${name} expired at ${xr.metadata!.annotations![EXPIRED_AT]} (created ${xr.metadata!.creationTimestamp}): Sandbox removed, PVC kept, ${expired.status.message}`);
  });

  it("an idle Ephemeral workspace whose onDetach action is Delete is released: its Namespace goes, the XR says why", async () => {
    const name = THROWAWAY.metadata!.name!;
    const xr = await waitFor(`${name} carries Berth's release`, async () => {
      const x = await ew(name);
      return x?.metadata?.annotations?.[RELEASED_AT] !== undefined && x;
    }, 150_000, 1000);
    await waitFor(`Namespace ws-${name} removed`, async () => (await c.get("v1", "Namespace", `ws-${name}`)) === undefined, 150_000, 1000);
    const released = await waitFor(`${name} phase Released`, async () => {
      const x = await ew(name);
      return x?.status?.phase === "Released" && condition(x, "Synced")?.status === "True" && x;
    }, 60_000);
    expect(released.status.reason).toBe("IdleTimeout");
    expect(released.status.lifecycle.releasedAt).toBe(xr.metadata!.annotations![RELEASED_AT]);
    log(`${name} released at ${xr.metadata!.annotations![RELEASED_AT]}: ${released.status.message}`);
  });

  it("a workspace whose class forbids suspend and an active workspace are never touched", async () => {
    // An Operation run that judged lc-scratch (running and idle by then) refused it. The run that
    // suspended lc-idle usually did too, but under load lc-scratch may not have been running yet.
    const refusing = await waitFor("an Operation run that refused lc-scratch", async () =>
      (await operationsOf(c, CRON.metadata!.name!)).find((o) => (o.status?.pipeline?.[0]?.output?.refused ?? []).some((r: { workspace: string }) => r.workspace === SCRATCH.metadata!.name)),
    120_000, 1000);
    const output = refusing.status.pipeline[0].output;
    expect(output.refused.map((r: { workspace: string }) => r.workspace)).toEqual([SCRATCH.metadata!.name]);
    expect(output.refused[0].message).toContain(`ExecutionWorkspaceClass "lifecycle-ephemeral" is Ephemeral and the workspace's onDetach action is Keep`);
    for (const w of [SCRATCH, BUSY]) {
      const name = w.metadata!.name!;
      const x = await ew(name);
      expect(x?.metadata?.annotations?.[SUSPENDED_AT], `${name} carries no suspension`).toBeUndefined();
      // No Operation ever applied anything to it: no field of it is owned by an Operation's manager.
      expect((x?.metadata?.managedFields ?? []).map((f) => f.manager ?? "").filter((m) => m.startsWith("ops.crossplane.io/"))).toEqual([]);
      expect(x?.status?.phase, name).toBe("Ready");
      expect((await sandboxOf(name))?.spec.operatingMode, name).toBe("Running");
    }
  });

  it("activity resumes the suspended workspace at once, with its volume: Suspended, Resuming, Ready", async () => {
    const name = IDLE.metadata!.name!;
    const pvc = await c.get("v1", "PersistentVolumeClaim", "workspace", `ws-${name}`);
    // Stops the rule, so that the resumed workspace is not suspended again while this test reads it.
    await c.delete(OPS, "CronOperation", CRON.metadata!.name!);
    const t = Date.now();
    await c.mergePatch({ apiVersion: API, kind: "ExecutionWorkspace", metadata: { name, annotations: { [LAST_ACTIVITY]: nowRFC3339() } } });
    await waitFor(`${name}'s Sandbox operatingMode Running`, async () => (await sandboxOf(name))?.spec.operatingMode === "Running", 30_000, 250);
    const resumedIn = (Date.now() - t) / 1000;
    const resuming = await waitFor(`${name} phase Resuming`, async () => {
      const x = await ew(name);
      return x?.status?.phase === "Resuming" && x;
    }, 30_000, 250);
    expect(resuming.status.lifecycle.suspendedAt, "activity after the suspension lifts it").toBeUndefined();
    const ready = await phaseOf(name, "Ready", 60_000);
    expect(ready.status.reason).toBe("Available");
    expect(condition(ready, "Suspended")).toMatchObject({ status: "False", reason: "Running" });
    expect((await c.get("v1", "PersistentVolumeClaim", "workspace", `ws-${name}`))?.metadata?.uid, "the same volume").toBe(pvc?.metadata?.uid);
    log(`lc-idle resumed by activity: Sandbox Running ${resumedIn.toFixed(1)} s after the annotation, then Resuming, then Ready (${((Date.now() - t) / 1000).toFixed(1)} s)`);
    expect(resumedIn, "reconciled by the annotation change, not by a requeue").toBeLessThan(15);
  });

  it("a detach applies the workspace's onDetach action at once: Suspend stops the runtime and keeps the volume, Delete removes everything it owned", async () => {
    const pvc = await c.get("v1", "PersistentVolumeClaim", "workspace", "ws-lc-away");
    const t = Date.now();
    for (const w of [AWAY, GONE]) await c.mergePatch({ apiVersion: API, kind: "ExecutionWorkspace", metadata: { name: w.metadata!.name!, annotations: { [DETACHED_AT]: nowRFC3339() } } });
    await waitFor("lc-away's Sandbox operatingMode Suspended", async () => (await sandboxOf("lc-away"))?.spec.operatingMode === "Suspended", 30_000, 250);
    const suspendedIn = (Date.now() - t) / 1000;
    await standInSuspended(c, { namespace: "ws-lc-away" });
    const away = await waitFor("lc-away phase Suspended", async () => {
      const x = await ew("lc-away");
      return x?.status?.phase === "Suspended" && x;
    }, 60_000);
    expect(away.status.reason).toBe("Detached");
    expect(away.status.message).toContain("the session detached at");
    expect(away.status.message).toContain("onDetach action is Suspend");
    expect((await c.get("v1", "PersistentVolumeClaim", "workspace", "ws-lc-away"))?.metadata?.uid, "the same volume").toBe(pvc?.metadata?.uid);

    await waitFor("Namespace ws-lc-gone removed", async () => (await c.get("v1", "Namespace", "ws-lc-gone")) === undefined, 150_000, 1000);
    const goneIn = (Date.now() - t) / 1000;
    const gone = await waitFor("lc-gone phase Released, Synced", async () => {
      const x = await ew("lc-gone");
      return x?.status?.phase === "Released" && condition(x, "Synced")?.status === "True" && x;
    }, 60_000);
    expect(gone.status.reason).toBe("DeletedOnDetach");
    expect(gone.spec.crossplane?.resourceRefs ?? []).toEqual([]);
    log(`detached: lc-away's Sandbox Suspended ${suspendedIn.toFixed(1)} s after the annotation (reason Detached, the same PVC); lc-gone's Namespace and everything in it gone ${goneIn.toFixed(1)} s after (phase Released, reason DeletedOnDetach)`);
    expect(suspendedIn, "reconciled by the annotation change, not by a requeue").toBeLessThan(15);

    // A new session attaching (activity after the detach) resumes the suspended one.
    await c.mergePatch({ apiVersion: API, kind: "ExecutionWorkspace", metadata: { name: "lc-away", annotations: { [LAST_ACTIVITY]: nowRFC3339Later() } } });
    await waitFor("lc-away's Sandbox operatingMode Running", async () => (await sandboxOf("lc-away"))?.spec.operatingMode === "Running", 30_000, 250);
    expect((await phaseOf("lc-away", "Ready", 60_000)).status.lifecycle.detachedAt, "the detach no longer holds").toBeUndefined();
  });
});
