// Issue 3: DeveloperWorkspaces on a real API server with real Crossplane calling Berth's
// function over gRPC. Every object the function renders (computed here in-process, as
// `npm run render` does) must exist with the rendered fields; the XR becomes Synced and, once
// stand-ins for the missing kubelet and volume provisioner have reported, Ready; drift is
// corrected; deleting the XR removes the workspace; the XRD's schema rules hold at admission.
import { isDeepStrictEqual } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { fatalMessages, renderConverged } from "../../functions/berth/tooling/local-render.js";
import { PROVISIONING } from "../../functions/berth/observe/readiness.js";
import { Cluster, condition, hasRunningStatus, load, loadOne, type Obj, printedColumns, ref, renderedFields, standInRunning, subsetDiff, undoneByCrossplane, waitFor } from "./setup.js";

const c = new Cluster(inject("kubeconfig"));
const API = "workspaces.berth.dev/v1alpha1";
/**
 * How Crossplane lists unready resources in the Ready condition (crossplane-runtime's
 * StableNAndSomeMore with its default of 3): sorted, "a, b", "a, b, and c", "a, b, c, and 2 more".
 */
function crossplaneList(names: readonly string[]): string {
  const sorted = [...names].sort();
  if (sorted.length > 3) return `${sorted.slice(0, 3).join(", ")}, and ${sorted.length - 3} more`;
  if (sorted.length === 3) return `${sorted.slice(0, 2).join(", ")}, and ${sorted[2]}`;
  return sorted.join(", ");
}

const EXAMPLES = ["persistent", "ephemeral", "review"].map((name) => ({ name, doc: loadOne(`examples/developerworkspace-${name}.yaml`) }));
const PROFILE_DOC = loadOne("examples/profile.yaml");
const GC_TIMEOUT = 180_000; // the garbage collector rediscovers new kinds every 30 s, then Namespace deletion follows

/** The cluster objects the function asks for (profile, StorageClass, Services), as they are live. */
async function liveRequired(): Promise<Obj[]> {
  const wanted = [loadOne("examples/profile.yaml"), loadOne("examples/cluster/storageclass.yaml"), ...load("examples/cluster/services.yaml")];
  return (await Promise.all(wanted.map((o) => c.getOf(o)))).filter((o): o is Obj => o !== undefined);
}

/** What the function's render of the live XR converges to, keyed by composition resource name. */
async function expectedObjects(xr: Obj): Promise<Record<string, Obj>> {
  const { response } = (await renderConverged(xr as any, (await liveRequired()) as any)).at(-1)!;
  expect(fatalMessages(response), "the in-process render has no fatal results").toEqual([]);
  return Object.fromEntries(Object.entries(response.desired?.resources ?? {}).map(([k, r]) => [k, r.resource as Obj]));
}

const xrOf = (name: string) => c.get(API, "DeveloperWorkspace", name);


/** True on a cluster with nodes (kind, the live cluster): its job and volume controllers run. */
const hasNodes = async () => ((await c.request("GET", "/api/v1/nodes")).body?.items ?? []).length > 0;

/** Every rendered object exists and carries the rendered fields; returns the live objects. */
async function allRenderedLive(name: string, timeoutMs = 120_000): Promise<{ expected: Record<string, Obj>; live: Record<string, Obj> }> {
  return waitFor(`every object rendered for DeveloperWorkspace ${name} exists with the rendered fields`, async () => {
    const xr = await xrOf(name);
    if (!xr) return false;
    const expected = await expectedObjects(xr);
    const live: Record<string, Obj> = {};
    const problems: string[] = [];
    for (const [key, o] of Object.entries(expected)) {
      const l = await c.getOf(o);
      if (!l) {
        problems.push(`${key}: ${ref(o)} missing`);
        continue;
      }
      live[key] = l;
      problems.push(...subsetDiff(renderedFields(o), l).map((d) => `${key}: ${ref(o)} ${d}`));
    }
    if (problems.length > 0) throw new Error(problems.join("\n"));
    return { expected, live };
  }, timeoutMs, 1000);
}

describe("DeveloperWorkspace on a real control plane", () => {
  beforeAll(async () => {
    for (const ns of ["ai-gateway", "mcp"]) await c.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    for (const o of [...load("examples/cluster/storageclass.yaml"), ...load("examples/cluster/services.yaml"), loadOne("examples/profile.yaml")]) await c.apply(o);
  });

  afterAll(async () => {
    // Leave nothing behind if a test failed half way (a no-op when the GC test ran).
    for (const { doc } of EXAMPLES) await c.delete(API, "DeveloperWorkspace", doc.metadata!.name!).catch(() => undefined);
  });

  it("the example profile becomes Ready and declares conforming persistent capacity", async () => {
    const profile = await waitFor("WorkspaceProfile standard Ready", async () => {
      const p = await c.get(API, "WorkspaceProfile", "standard");
      return condition(p, "Ready")?.status === "True" && p;
    }, 60_000);
    expect(profile.status.phase).toBe("Ready");
    expect(profile.status.capacity).toMatchObject({ storageClassName: "xfs-quota", declared: "Runtime", conforming: true });
    for (const { doc } of EXAMPLES) await c.apply(doc);
  });

  it.each(EXAMPLES)("$name: every rendered object exists with the rendered fields, and the XR is Synced", async ({ doc }) => {
    const name = doc.metadata!.name!;
    const { expected } = await allRenderedLive(name);
    const xr = await waitFor(`${name} Synced=True`, async () => {
      const x = await xrOf(name);
      return condition(x, "Synced")?.status === "True" && x;
    }, 60_000);
    // What Crossplane composed is exactly what the function rendered.
    const refs = (xr.spec.crossplane?.resourceRefs ?? []).map((r: any) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`).sort();
    expect(refs).toEqual(Object.values(expected).map(ref).sort());
    expect(xr.status.namespace).toBe(`ws-${doc.spec.workspaceID}`);
    const kinds = new Set(Object.values(expected).map((o) => o.kind));
    for (const k of ["Namespace", "ServiceAccount", "ResourceQuota", "LimitRange", "NetworkPolicy", "Job"]) expect(kinds, `renders a ${k}`).toContain(k);
  });

  it.each(EXAMPLES)("$name: becomes Ready with phase Ready once the volume is bound and the runtime is ready, and not before", async ({ doc }) => {
    const name = doc.metadata!.name!;
    const { live } = await allRenderedLive(name);
    if (await hasNodes()) {
      // A cluster with nodes runs the real job and volume controllers, and they tell the truth:
      // the example's runtime image (registry.example.com) cannot be pulled and its storage
      // class has no provisioner here, so the workspace must keep saying what it waits for and
      // never claim Ready. (Ready on running pods and bound volumes: the live suite.)
      // The MCP gate's example image cannot be pulled either.
      const waits = [
        ...(Object.values(live).some((o) => o.kind === "Deployment") ? ["mcp-gate"] : []),
        ...(Object.values(live).some((o) => o.kind === "PersistentVolumeClaim") ? ["volume"] : []),
        "workload",
      ];
      // Berth's phase says Provisioning with one message for the whole phase; Crossplane's Ready
      // condition names what is not ready.
      const xr = await waitFor(`${name} Provisioning, its Ready condition naming ${waits.join(", ")}`, async () => {
        const x = await xrOf(name);
        return x?.status?.phase === "Provisioning" && condition(x, "Ready")?.message === `Unready resources: ${crossplaneList(waits)}` && x;
      }, 90_000, 1000).catch(async (e) => {
        const x = await xrOf(name);
        throw new Error(`${e instanceof Error ? e.message : e}; the XR says phase ${x?.status?.phase}, Ready: ${condition(x, "Ready")?.message}, Synced: ${condition(x, "Synced")?.message}`);
      });
      expect(xr.status.message).toBe(PROVISIONING.message);
      expect(condition(xr, "Ready")?.status).toBe("False");
      for (const o of Object.values(live).filter((o) => o.kind === "Job")) expect((await c.getOf(o))?.status?.ready ?? 0, ref(o)).toBe(0);
      return;
    }
    // This cluster has no kubelet and no volume provisioner, so nothing would ever report a
    // bound PVC or a ready Job: the test stands in for them (standInRunning, in setup.ts).
    const standIn = async () => {
      for (const o of Object.values(live).filter(hasRunningStatus)) await standInRunning(c, o);
    };
    expect((await xrOf(name))?.status?.phase, "before the stand-in").toBe("Provisioning");
    await standIn();
    const xr = await waitFor(`${name} Ready=True with phase Ready`, async () => {
      const x = await xrOf(name);
      return condition(x, "Ready")?.status === "True" && x?.status?.phase === "Ready" && x;
    }, 90_000, 1000);
    expect(xr.status).toMatchObject({ phase: "Ready", reason: "Available", namespace: `ws-${doc.spec.workspaceID}` });
    expect(condition(xr, "Synced")?.status).toBe("True");
    expect(xr.status.capacity.mode).toBe(doc.spec.storage.mode);
  });

  it.each(EXAMPLES)("$name: status.usage is its ResourceQuota's own count, used/hard, and kubectl get prints it", async ({ doc }) => {
    const name = doc.metadata!.name!;
    const { live } = await allRenderedLive(name);
    const quota = Object.values(live).find((o) => o.kind === "ResourceQuota")!;
    const fromQuota = (q: Obj) => {
      const { hard, used } = q.status as { hard: Record<string, string>; used: Record<string, string> };
      const counted = (key: string) => `${used[key] ?? "0"}/${hard[key]}`;
      return { cpu: counted("limits.cpu"), memory: counted("limits.memory"), ...(hard["requests.storage"] === "0" ? {} : { storage: counted("requests.storage") }), pods: counted("pods") };
    };
    // The quota controller counts on its own; Crossplane's watch on the quota brings the count
    // to the workspace.
    let last: unknown;
    const usage = await waitFor(`${name}'s status.usage equal to its quota's count`, async () => {
      const q = await c.getOf(quota);
      if (q?.status?.used === undefined) return false;
      last = { quota: fromQuota(q), usage: (await xrOf(name))?.status?.usage };
      return isDeepStrictEqual((last as any).quota, (last as any).usage) && (last as any).usage;
    }, 90_000, 1000).catch((e) => {
      throw new Error(`${e instanceof Error ? e.message : e}; last seen ${JSON.stringify(last)}`);
    });
    const printed = await printedColumns(c, API, "DeveloperWorkspace", name);
    expect({ CPU: printed.CPU, MEMORY: printed.MEMORY, STORAGE: printed.STORAGE ?? undefined }).toEqual({ CPU: usage.cpu, MEMORY: usage.memory, STORAGE: usage.storage });
  });

  describe("drift is corrected", () => {
    const doc = EXAMPLES[0]!.doc;
    const name = doc.metadata!.name!;

    it.each(["NetworkPolicy", "ResourceQuota", "LimitRange"])("a deleted %s comes back", async (kind) => {
      const { expected } = await allRenderedLive(name);
      const victims = Object.values(expected).filter((o) => o.kind === kind);
      const target = kind === "NetworkPolicy" ? victims.find((o) => o.metadata!.name === "default-deny") : victims[0];
      expect(target, `a ${kind} is rendered`).toBeDefined();
      const before = (await c.getOf(target!))!;
      expect(await c.delete(target!.apiVersion!, kind, target!.metadata!.name!, target!.metadata!.namespace)).toBe(true);
      const recreated = async () => {
        const now = await c.getOf(target!);
        return now !== undefined && now.metadata!.uid !== before.metadata!.uid && !now.metadata!.deletionTimestamp;
      };
      await undoneByCrossplane(c, { apiVersion: API, kind: "DeveloperWorkspace", name }, `${ref(target!)} recreated`, recreated);
      expect(subsetDiff(renderedFields(target!), (await c.getOf(target!))!)).toEqual([]);
    });

    it("an edited ResourceQuota's hard cpu is restored", async () => {
      const { expected } = await allRenderedLive(name);
      const quota = Object.values(expected).find((o) => o.kind === "ResourceQuota")!;
      const key = Object.keys(quota.spec.hard).find((k) => k.endsWith("cpu"))!;
      expect(key, "the quota bounds cpu").toBeDefined();
      const want = quota.spec.hard[key];
      const edited = await c.mergePatch({ apiVersion: "v1", kind: "ResourceQuota", metadata: { name: quota.metadata!.name!, namespace: quota.metadata!.namespace! }, spec: { hard: { [key]: "64" } } });
      // The edit landed (so the restore below is Crossplane's doing, not a rejected patch).
      expect(edited.spec.hard[key]).toBe("64");
      await undoneByCrossplane(c, { apiVersion: API, kind: "DeveloperWorkspace", name }, `ResourceQuota ${key} back to ${want}`, async () => {
        const now = await c.getOf(quota);
        return subsetDiff(want, now?.spec?.hard?.[key]).length === 0;
      });
    });
  });

  describe("the XRD's schema rules hold at admission", () => {
    const base = EXAMPLES[1]!.doc;

    it("a DeveloperWorkspace not named <workspaceID>-xr is rejected", async () => {
      const doc = { ...structuredClone(base), metadata: { name: "not-the-id-xr" } };
      const res = await c.create(doc);
      expect(res.status, res.text).toBe(422);
      expect(res.body.message).toContain("metadata.name must be <spec.workspaceID>-xr");
      expect(await xrOf("not-the-id-xr")).toBeUndefined();
    });

    it("changing spec.workspaceID is rejected", async () => {
      const name = base.metadata!.name!;
      await waitFor(`${name} exists`, () => xrOf(name));
      const p = await c.path(API, "DeveloperWorkspace", name);
      const res = await c.request("PATCH", p, { spec: { workspaceID: "agent-fix-9999" } }, { contentType: "application/merge-patch+json" });
      expect(res.status, res.text).toBe(422);
      expect(res.body.message).toContain("spec.workspaceID is immutable");
      expect((await xrOf(name))?.spec.workspaceID).toBe(base.spec.workspaceID);
    });

    it("a second document with the same workspaceID is rejected", async () => {
      const name = base.metadata!.name!;
      const existing = (await xrOf(name))!;
      // Same ID, so (by the name rule) the same name: the API server refuses it outright.
      const again = structuredClone(base);
      again.spec.owner = { name: "someone-else" };
      const res = await c.create(again);
      expect(res.status, res.text).toBe(409);
      expect(res.body.reason).toBe("AlreadyExists");
      // ... and any other name for the same ID breaks the name rule.
      const renamed = { ...structuredClone(base), metadata: { name: `${base.spec.workspaceID}-2-xr` } };
      const res2 = await c.create(renamed);
      expect(res2.status, res2.text).toBe(422);
      expect(res2.body.message).toContain("metadata.name must be <spec.workspaceID>-xr");
      expect((await xrOf(name))?.metadata?.uid).toBe(existing.metadata!.uid);
    });
  });

  it("deleting the XRs removes their workspaces", async () => {
    const gone = EXAMPLES.map(async ({ doc }) => {
      const name = doc.metadata!.name!;
      const xr = (await xrOf(name))!;
      const refs: any[] = xr.spec.crossplane?.resourceRefs ?? [];
      expect(refs.length).toBeGreaterThan(0);
      await c.delete(API, "DeveloperWorkspace", name);
      await waitFor(`${name} gone`, async () => (await xrOf(name)) === undefined, 60_000);
      // A workspace that exports evidence gives its pod the collector's time as its grace period,
      // and Kubernetes' namespace controller waits that long after deleting a pod still running
      // (on a node; on the local control plane no pod runs) before it finishes the Namespace.
      const exporting = (doc.spec as { lifecycle?: { evidence?: { exportBeforeCleanup?: boolean } } }).lifecycle?.evidence?.exportBeforeCleanup === true;
      const grace = exporting ? (PROFILE_DOC.spec as { evidence: { collectTimeoutSeconds: number } }).evidence.collectTimeoutSeconds * 1000 : 0;
      await waitFor(`Namespace ws-${doc.spec.workspaceID} and every composed object of ${name} gone`, async () => {
        for (const r of refs) if ((await c.get(r.apiVersion, r.kind, r.name, r.namespace)) !== undefined) return false;
        return true;
      }, GC_TIMEOUT + grace, 2000);
    });
    await Promise.all(gone);
  });
});
