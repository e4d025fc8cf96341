// The fleet the fault suite keeps alive: many workspaces of both kinds in mixed states, what
// each one owns (every composed object's UID), and the checks made after every fault: nothing
// owned deleted or re-created, and every workspace back where it was.
import { Cluster, condition, loadOne, standInRunning, hasRunningStatus, waitFor, sleep, type Obj } from "../conformance/setup.js";
import { pool } from "../support/processes.js";

export const API = "workspaces.berth.dev/v1alpha1";
export const KINDS = ["DeveloperWorkspace", "ExecutionWorkspace"] as const;

export interface Member {
  doc: Obj;
  kind: (typeof KINDS)[number];
  name: string;
  /** Its runtime is marked running (stand-in for the node), so it must be Ready; otherwise it stays provisioning. */
  running: boolean;
}

/** One workspace's state as its XR says it. */
export interface Seen {
  synced?: { status?: string; reason?: string; message?: string };
  /** Crossplane's Responsive condition: False, reason WatchCircuitOpen, while it drops the XR's watch events. */
  responsive?: { status?: string; reason?: string; message?: string };
  phase?: string;
  reason?: string;
  message?: string;
  refs: { apiVersion: string; kind: string; name: string; namespace?: string }[];
  uid: string;
}

const FLEET_PREFIX = "flt-";

/**
 * `dev` DeveloperWorkspaces (ephemeral and persistent in turn) and `exec` ExecutionWorkspaces on
 * the example class; every fifth DeveloperWorkspace and every third ExecutionWorkspace is left
 * provisioning (nothing marks its runtime running), the rest become Ready.
 */
export function fleetMembers(dev: number, exec: number, from = 0): Member[] {
  const ephemeral = loadOne("examples/developerworkspace-ephemeral.yaml");
  const persistent = loadOne("examples/developerworkspace-persistent.yaml");
  const sandbox = loadOne("examples/executionworkspace-sandbox.yaml");
  const out: Member[] = [];
  for (let i = from; i < from + dev; i++) {
    const id = `${FLEET_PREFIX}d${String(i).padStart(3, "0")}`;
    const base = i % 2 === 0 ? ephemeral : persistent;
    const doc = { ...structuredClone(base), metadata: { name: `${id}-xr` }, spec: { ...structuredClone(base.spec), workspaceID: id } };
    out.push({ doc, kind: "DeveloperWorkspace", name: `${id}-xr`, running: i % 5 !== 4 });
  }
  for (let i = from; i < from + exec; i++) {
    const name = `${FLEET_PREFIX}e${String(i).padStart(3, "0")}`;
    const doc = { ...structuredClone(sandbox), metadata: { name }, spec: { ...structuredClone(sandbox.spec), sessionRef: { name, namespace: "team-payments" } } };
    out.push({ doc, kind: "ExecutionWorkspace", name, running: i % 3 !== 2 });
  }
  return out;
}

/** Every fleet XR as the API server has it, by kind/name (one list per kind). */
export async function seeAll(c: Cluster): Promise<Map<string, Seen>> {
  const out = new Map<string, Seen>();
  for (const kind of KINDS) {
    const res = await c.request("GET", await c.path(API, kind, ""));
    if (res.status !== 200) throw new Error(`list ${kind}: HTTP ${res.status}: ${res.text.slice(0, 200)}`);
    for (const xr of res.body.items as Obj[]) {
      if (!xr.metadata!.name!.startsWith(FLEET_PREFIX)) continue;
      out.set(`${kind}/${xr.metadata!.name}`, {
        synced: condition(xr, "Synced"),
        responsive: condition(xr, "Responsive"),
        phase: xr.status?.phase,
        reason: xr.status?.reason,
        message: xr.status?.message,
        refs: xr.spec?.crossplane?.resourceRefs ?? [],
        uid: xr.metadata!.uid!,
      });
    }
  }
  return out;
}

export const memberKey = (m: Member) => `${m.kind}/${m.name}`;
const refKey = (r: { kind: string; name: string; namespace?: string }) => `${r.kind}/${r.namespace ?? ""}/${r.name}`;

/** UIDs of everything the members own (and of the XRs themselves), keyed "<xr> <Kind>/<ns>/<name>". */
export async function ownership(c: Cluster, members: Member[]): Promise<Map<string, string>> {
  const seen = await seeAll(c);
  const out = new Map<string, string>();
  const work: [string, Seen["refs"][number]][] = [];
  for (const m of members) {
    const s = seen.get(memberKey(m));
    if (!s) throw new Error(`${memberKey(m)} does not exist`);
    out.set(`${memberKey(m)} (XR)`, s.uid);
    for (const r of s.refs) work.push([memberKey(m), r]);
  }
  await pool(work, 16, async ([owner, r]) => {
    const o = await c.get(r.apiVersion, r.kind, r.name, r.namespace);
    out.set(`${owner} ${refKey(r)}`, o?.metadata?.uid ?? "(missing)");
  });
  return out;
}

/** What changed between two ownership snapshots: objects gone, re-created (new UID) or missing. */
export function losses(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, uid] of before) {
    const now = after.get(k);
    if (now === undefined) out.push(`${k}: no longer referenced by its workspace`);
    else if (now === "(missing)") out.push(`${k}: deleted`);
    else if (now !== uid) out.push(`${k}: re-created (uid ${uid} -> ${now})`);
  }
  return out;
}

/** Why a member is not (yet) where it should be, or undefined if it is. */
function notSettled(m: Member, s: Seen | undefined, want: number | undefined, readiness: boolean): string | undefined {
  if (!s) return "missing";
  if (s.synced?.status !== "True") return `Synced=${s.synced?.status} ${s.synced?.reason}: ${s.synced?.message?.slice(0, 300)}`;
  if (want !== undefined && s.refs.length !== want) return `${s.refs.length} of ${want} objects`;
  if (!readiness) return undefined;
  if (m.running && s.phase !== "Ready") return `phase ${s.phase} (${s.reason}: ${s.message})`;
  if (!m.running && s.phase === "Ready") return "Ready although nothing runs it";
  return undefined;
}

/**
 * Waits until every member is Synced, owns `want` objects (when known) and (unless readiness is
 * false) is Ready exactly when its runtime runs; returns the seconds it took. On a timeout, names
 * the members still out and why.
 */
export async function settled(c: Cluster, members: Member[], want: Map<string, number> | undefined, timeoutMs: number, { readiness = true } = {}): Promise<number> {
  const t0 = Date.now();
  let out: string[] = [];
  for (;;) {
    try {
      const seen = await seeAll(c);
      out = members.flatMap((m) => {
        const why = notSettled(m, seen.get(memberKey(m)), want?.get(memberKey(m)), readiness);
        return why ? [`${memberKey(m)}: ${why}`] : [];
      });
      if (out.length === 0) return (Date.now() - t0) / 1000;
    } catch (e) {
      out = [`the API server: ${String(e).slice(0, 200)}`];
    }
    if (Date.now() - t0 > timeoutMs) throw new Error(`not settled after ${timeoutMs / 1000} s; ${out.length} out:\n  ${out.slice(0, 12).join("\n  ")}`);
    await sleep(1000);
  }
}

/** Marks the runtime objects (PVC, Job, Sandbox) of the running members as running, standing in for the node and the runtimes' controllers. */
export async function standInForTheNode(c: Cluster, members: Member[]): Promise<number> {
  const seen = await seeAll(c);
  const refs = members.filter((m) => m.running).flatMap((m) => seen.get(memberKey(m))?.refs ?? []);
  const targets = refs.filter((r) => hasRunningStatus({ kind: r.kind } as Obj));
  // An XR lists an object in its resourceRefs as Crossplane applies it: wait for it to exist.
  await pool(targets, 16, async (r) => {
    await waitFor(`${r.kind} ${r.namespace}/${r.name}`, () => c.get(r.apiVersion, r.kind, r.name, r.namespace), 60_000, 250);
    await standInRunning(c, { apiVersion: r.apiVersion, kind: r.kind, metadata: { name: r.name, namespace: r.namespace } });
  });
  return targets.length;
}

/** Asks Crossplane to reconcile the members now (what an operator does with the reconcile-requested-at annotation). */
export async function requestReconcile(c: Cluster, members: Member[]): Promise<void> {
  const at = new Date().toISOString();
  await pool(members, 16, (m) => c.mergePatch({ apiVersion: API, kind: m.kind, metadata: { name: m.name, annotations: { "crossplane.io/reconcile-requested-at": at } } }));
}
