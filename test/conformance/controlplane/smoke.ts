// End-to-end smoke run on the Go-module control plane, for any composition function:
// starts the control plane and the function (TLS, certificate from Crossplane's CA), applies
// XRDs, then Compositions and everything else, waits for each XR to be Ready and Synced,
// and optionally proves drift correction and garbage collection.
//
//   npx tsx test/conformance/controlplane/smoke.ts [--function function-berth] [--drift] [--gc]
//       [--synced-only] [--timeout SECONDS] [--keep] FILE_OR_DIR... -- COMMAND ARGS...
//
// --synced-only accepts an XR that is Synced but not Ready (no kubelet runs here, so workloads
// never become available); --timeout is per XR (default 120).
//
// e.g. npx tsx test/conformance/controlplane/smoke.ts --drift --gc apis/ compositions/ \
//        examples/some-workspace.yaml -- node --import tsx functions/berth/main.ts
//
// YAML or JSON files, multi-document allowed. Exit code 0 only if everything passed.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { startControlPlane } from "./controlplane.js";
import { condition, type KubeObject } from "./kube.js";
import { installedFunction } from "../../support/function-name.js";

const argv = process.argv.slice(2);
const dd = argv.indexOf("--");
const own = dd >= 0 ? argv.slice(0, dd) : argv;
const fnCmd = dd >= 0 ? argv.slice(dd + 1) : [];
const flag = (f: string) => own.includes(f);
const opt = (f: string) => {
  const i = own.indexOf(f);
  return i >= 0 ? own[i + 1] : undefined;
};
const fnName = opt("--function") ?? installedFunction().name;
const paths = own.filter((a, i) => !a.startsWith("--") && own[i - 1] !== "--function" && own[i - 1] !== "--timeout");
if (!fnCmd[0] || paths.length === 0) {
  process.stderr.write("usage: smoke.ts [--function NAME] [--drift] [--gc] [--synced-only] [--timeout S] [--keep] FILE_OR_DIR... -- COMMAND ARGS...\n");
  process.exit(2);
}

function files(p: string): string[] {
  if (statSync(p).isDirectory()) {
    return readdirSync(p)
      .sort()
      .flatMap((e) => files(join(p, e)));
  }
  return /\.(ya?ml|json)$/.test(p) ? [p] : [];
}
const docs: KubeObject[] = paths
  .flatMap(files)
  .flatMap((f) => parseAllDocuments(readFileSync(f, "utf8")).map((d) => d.toJS() as KubeObject))
  .filter((d) => d && typeof d === "object" && d.apiVersion && d.kind);

const t0 = Date.now();
const say = (m: string) => process.stdout.write(`[smoke ${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}\n`);
let failed = 0;
let passed = 0;
const check = (ok: boolean, m: string) => {
  say(`${ok ? "PASS" : "FAIL"} ${m}`);
  if (ok) passed++;
  else failed++;
};

const cp = await startControlPlane({ keepRunDir: flag("--keep") });
const k = cp.kube;
try {
  say(`KUBECONFIG=${cp.kubeconfig}`);
  const fn = await cp.startFunction({ name: fnName, command: fnCmd[0], args: fnCmd.slice(1) });
  say(`function ${fnName} on 127.0.0.1:${fn.port}, log ${fn.logFile}`);

  const isXRD = (d: KubeObject) => d.apiVersion.startsWith("apiextensions.crossplane.io/") && d.kind === "CompositeResourceDefinition";
  const xrds = docs.filter(isXRD);
  const xrKinds = new Set(
    xrds.flatMap((x: any) => (x.spec?.versions ?? []).map((v: any) => `${x.spec.group}/${v.name}|${x.spec.names.kind}`)),
  );
  const isXR = (d: KubeObject) => xrKinds.has(`${d.apiVersion}|${d.kind}`);
  for (const x of xrds) await k.apply(x);
  for (const x of xrds) {
    const name = x.metadata.name!;
    await k.waitFor(`XRD ${name} Established`, async () => condition(await k.get(x.apiVersion, x.kind, name), "Established")?.status === "True", 60_000);
    check(true, `XRD ${name} established`);
  }
  const rest = docs.filter((d) => !isXRD(d) && !isXR(d));
  // Namespaces the documents live in are created first (a fixture may assume they exist).
  const namespaces = new Set(docs.map((d) => d.metadata.namespace).filter((n): n is string => !!n));
  for (const ns of namespaces) await k.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  for (const d of rest) await k.apply(d);
  const xrs = docs.filter(isXR);
  for (const d of xrs) await k.apply(d);

  const ready: { d: KubeObject; id: string; refs: any[] }[] = [];
  for (const d of xrs) {
    const id = `${d.kind} ${d.metadata.name}`;
    let xr: any;
    try {
      xr = await k.waitFor(`${id} Ready+Synced`, async () => {
        const x = await k.get(d.apiVersion, d.kind, d.metadata.name!, d.metadata.namespace);
        const readyOK = flag("--synced-only") || condition(x, "Ready")?.status === "True";
        return readyOK && condition(x, "Synced")?.status === "True" ? x : false;
      }, Number(opt("--timeout") ?? 120) * 1000, 500);
    } catch (e) {
      const x = await k.get(d.apiVersion, d.kind, d.metadata.name!, d.metadata.namespace);
      check(false, `${id} Ready+Synced: ${String(e)}\n${JSON.stringify(x?.status, null, 2)}`);
      continue;
    }
    const refs: any[] = xr.spec?.crossplane?.resourceRefs ?? [];
    check(true, `${id} ${flag("--synced-only") ? `Synced (Ready=${condition(xr, "Ready")?.status})` : "Ready and Synced"}, ${refs.length} composed resources`);
    for (const r of refs) say(`  ${r.apiVersion} ${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`);

    if (flag("--drift")) {
      for (const r of refs.filter((r) => r.kind !== "Namespace")) {
        const before = await k.get(r.apiVersion, r.kind, r.name, r.namespace);
        if (!before) continue;
        const t = Date.now();
        await k.delete(r.apiVersion, r.kind, r.name, r.namespace);
        try {
          await k.waitFor(`${r.kind} ${r.name} recreated`, async () => {
            const now = await k.get(r.apiVersion, r.kind, r.name, r.namespace);
            return now && now.metadata.uid !== before.metadata.uid && !now.metadata.deletionTimestamp;
          }, 90_000, 200);
          check(true, `drift: deleted ${r.kind} ${r.name} came back in ${Date.now() - t} ms`);
        } catch (e) {
          check(false, `drift: ${r.kind} ${r.name}: ${String(e)}`);
        }
      }
    }
    ready.push({ d, id, refs });
  }
  // Garbage collection last, newest XR first (later documents may depend on earlier ones).
  if (flag("--gc")) {
    for (const { d, id, refs } of [...ready].reverse()) {
      const t = Date.now();
      await k.delete(d.apiVersion, d.kind, d.metadata.name!, d.metadata.namespace);
      try {
        await k.waitFor(`${id} gone`, async () => (await k.get(d.apiVersion, d.kind, d.metadata.name!, d.metadata.namespace)) === undefined, 60_000, 200);
        await k.waitFor(`composed resources of ${id} gone`, async () => {
          for (const r of refs) if ((await k.get(r.apiVersion, r.kind, r.name, r.namespace)) !== undefined) return false;
          return true;
        }, 180_000, 500);
        check(true, `gc: ${id} and its ${refs.length} composed resources deleted in ${Date.now() - t} ms`);
      } catch (e) {
        check(false, `gc: ${String(e)}`);
      }
    }
  }
} catch (e) {
  check(false, String(e));
} finally {
  await cp.stop();
}
say(`${failed === 0 ? "OK" : `${failed} FAILED`}; logs were in ${cp.logDir}${flag("--keep") ? "" : " (removed; use --keep)"}`);
process.stdout.write(`smoke: ${passed} passed, ${failed} failed\n`);
process.exit(failed === 0 ? 0 : 1);
