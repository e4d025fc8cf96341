// docs/compatibility.md says which versions CI tests Berth with. Each row names where its
// version is pinned; this test reads those pins (the control plane's versions.env, the upstream
// CRDs of test/upstream-crds.yaml, package.json's engines, the image's Node.js) and fails when
// the table says anything else, or when a pin has no row.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { marked, type Tokens } from "marked";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const ROOT = resolve(import.meta.dirname, "../..");
const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

/** versions.env's KEY=VALUE lines (controlplane.ts reads it the same way: no quotes, no expansions). */
function versionsEnv(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

interface UpstreamSource {
  module?: string;
  version?: string;
  repository?: string;
  commit?: string;
}

interface Row {
  component: string;
  version: string;
  pins: string[];
  pinnedIn: string;
}

function codeSpans(cell: Tokens.TableCell): string[] {
  const out: string[] = [];
  marked.walkTokens(cell.tokens, (t) => {
    if (t.type === "codespan") out.push((t as Tokens.Codespan).text);
  });
  return out;
}

/** The compatibility table: each row's component, version (backticks removed) and the code spans of its "pinned in" cell. */
function tableOf(markdown: string): Row[] {
  const tables = marked.lexer(markdown).filter((t): t is Tokens.Table => t.type === "table" && t.header[0]?.text === "component");
  if (tables.length !== 1) throw new Error(`want one table whose first column is "component", found ${tables.length}`);
  const header = tables[0]!.header.map((h) => h.text);
  const [version, pinned] = [header.indexOf("version"), header.indexOf("pinned in")];
  if (version < 0 || pinned < 0) throw new Error(`the table needs "version" and "pinned in" columns, has ${header.join(", ")}`);
  return tables[0]!.rows.map((r) => ({ component: r[0]!.text, version: r[version]!.text.replaceAll("`", "").trim(), pins: codeSpans(r[pinned]!), pinnedIn: r[pinned]!.text }));
}

interface Pins {
  env: Map<string, string>;
  upstream: UpstreamSource[];
  engines: string;
  /** image/sources.yaml's versions by section: `node`, `runtimes.<agent>`. */
  image: Map<string, string>;
}

/** What differs between the table and the pins, one line each; empty when they agree. */
function differences(rows: Row[], pins: Pins): string[] {
  const out: string[] = [];
  const covered = new Set<string>();
  for (const row of rows) {
    const at = `${row.component}: the table says ${row.version}`;
    let checked = false;
    if (row.pinnedIn.includes("versions.env")) {
      for (const key of row.pins.filter((p) => /^[A-Z][A-Z0-9_]*_VERSION$/.test(p))) {
        checked = true;
        covered.add(key);
        const pinned = pins.env.get(key);
        if (pinned === undefined) out.push(`${at}, but versions.env has no ${key}`);
        else if (pinned !== row.version) out.push(`${at}, versions.env ${key}=${pinned}`);
      }
    }
    if (row.pinnedIn.includes("upstream-crds.yaml")) {
      for (const name of row.pins.filter((p) => p.includes("/") && !p.endsWith(".yaml"))) {
        checked = true;
        const source = pins.upstream.find((s) => s.module === name || s.repository === name);
        if (source === undefined) out.push(`${at}, but test/upstream-crds.yaml has no source ${name}`);
        else if ((source.version ?? source.commit) !== row.version) out.push(`${at}, test/upstream-crds.yaml pins ${name} at ${source.version ?? source.commit}`);
      }
    }
    if (row.pins.includes("package.json") && row.pins.includes("engines")) {
      checked = true;
      if (pins.engines !== `>=${row.version}`) out.push(`${at}, package.json's engines.node is ${pins.engines}`);
    }
    if (row.pins.includes("image/sources.yaml")) {
      // The section of image/sources.yaml the row names: `node`, or `runtimes.<agent>`.
      for (const section of row.pins.filter((p) => pins.image.has(p) || p.startsWith("runtimes."))) {
        checked = true;
        covered.add(`image/sources.yaml ${section}`);
        const pinned = pins.image.get(section);
        if (pinned === undefined) out.push(`${at}, but image/sources.yaml has no ${section}`);
        else if (pinned !== row.version) out.push(`${at}, image/sources.yaml's ${section} is ${pinned}`);
      }
    }
    if (!checked) out.push(`${row.component}: names no pin this test reads`);
  }
  for (const key of pins.env.keys()) if (key.endsWith("_VERSION") && !covered.has(key)) out.push(`versions.env ${key}=${pins.env.get(key)} has no row`);
  for (const [section, version] of pins.image) if (!covered.has(`image/sources.yaml ${section}`)) out.push(`image/sources.yaml's ${section} ${version} has no row`);
  for (const s of pins.upstream) {
    const name = s.module ?? s.repository!;
    if (!rows.some((r) => r.pinnedIn.includes("upstream-crds.yaml") && r.pins.includes(name))) out.push(`test/upstream-crds.yaml's ${name} has no row`);
  }
  return out;
}

function imageVersions(sources: { node: { version: string }; runtimes: Record<string, { version: string }> }): Map<string, string> {
  return new Map([["node", sources.node.version], ...Object.entries(sources.runtimes).map(([agent, s]) => [`runtimes.${agent}`, s.version] as [string, string])]);
}

function pinsNow(): Pins {
  return {
    env: versionsEnv(read("test/conformance/controlplane/versions.env")),
    upstream: (parse(read("test/upstream-crds.yaml")) as { sources: UpstreamSource[] }).sources,
    engines: (JSON.parse(read("package.json")) as { engines: { node: string } }).engines.node,
    image: imageVersions(parse(read("image/sources.yaml")) as { node: { version: string }; runtimes: Record<string, { version: string }> }),
  };
}

describe("docs/compatibility.md", () => {
  it("every version in the table is the one pinned, and every pin has a row", () => {
    const pins = pinsNow();
    expect(pins.env.get("CROSSPLANE_VERSION")).toBeDefined();
    expect(pins.upstream.length).toBeGreaterThan(0);
    expect(differences(tableOf(read("docs/compatibility.md")), pins)).toEqual([]);
  });

  it("fails on a version that differs from its pin, a pin without a row, and a row without a pin", () => {
    const pins: Pins = {
      env: new Map([["CROSSPLANE_VERSION", "2.4.0"], ["ETCD_VERSION", "3.6.16"]]),
      upstream: [{ module: "sigs.k8s.io/agent-sandbox", version: "v1.0.1" }, { repository: "agent-substrate/substrate", commit: "abc" }],
      engines: ">=20",
      image: new Map([["node", "22.23.5"], ["runtimes.codex", "0.169.0-linux-x64"]]),
    };
    const row = (component: string, version: string, pinnedIn: string, ...spans: string[]): Row => ({ component, version, pinnedIn, pins: spans });
    const good = [
      row("Crossplane", "2.4.0", "`versions.env` `CROSSPLANE_VERSION`", "versions.env", "CROSSPLANE_VERSION"),
      row("etcd", "3.6.16", "`versions.env` `ETCD_VERSION`", "versions.env", "ETCD_VERSION"),
      row("Sandbox CRD", "v1.0.1", "`test/upstream-crds.yaml` `sigs.k8s.io/agent-sandbox`", "test/upstream-crds.yaml", "sigs.k8s.io/agent-sandbox"),
      row("Substrate CRDs", "abc", "`test/upstream-crds.yaml` `agent-substrate/substrate`", "test/upstream-crds.yaml", "agent-substrate/substrate"),
      row("Node.js", "20", "`package.json` `engines`", "package.json", "engines"),
      row("Node.js, image", "22.23.5", "`image/sources.yaml` `node`", "image/sources.yaml", "node"),
      row("Codex CLI", "0.169.0-linux-x64", "`image/sources.yaml` `runtimes.codex`", "image/sources.yaml", "runtimes.codex"),
    ];
    expect(differences(good, pins)).toEqual([]);
    expect(differences([{ ...good[0]!, version: "2.2.0" }, ...good.slice(1)], pins)).toEqual(["Crossplane: the table says 2.2.0, versions.env CROSSPLANE_VERSION=2.4.0"]);
    expect(differences(good.slice(1), pins)).toEqual(["versions.env CROSSPLANE_VERSION=2.4.0 has no row"]);
    expect(differences([...good.slice(0, 3), { ...good[3]!, version: "def" }, ...good.slice(4)], pins)).toEqual([
      "Substrate CRDs: the table says def, test/upstream-crds.yaml pins agent-substrate/substrate at abc",
    ]);
    expect(differences([...good.slice(0, 3), ...good.slice(4)], pins)).toEqual(["test/upstream-crds.yaml's agent-substrate/substrate has no row"]);
    expect(differences([...good, row("kind", "0.30", "nowhere")], pins)).toEqual(["kind: names no pin this test reads"]);
    expect(differences([...good.slice(0, 4), { ...good[4]!, version: "18" }, ...good.slice(5)], pins)).toEqual(["Node.js: the table says 18, package.json's engines.node is >=20"]);
    expect(differences([...good.slice(0, 6), { ...good[6]!, version: "0.168.0" }], pins)).toEqual(["Codex CLI: the table says 0.168.0, image/sources.yaml's runtimes.codex is 0.169.0-linux-x64"]);
    expect(differences(good.slice(0, 6), pins)).toEqual(["image/sources.yaml's runtimes.codex 0.169.0-linux-x64 has no row"]);
    expect(differences([...good, row("OpenCode", "1.18.33", "`image/sources.yaml` `runtimes.opencode`", "image/sources.yaml", "runtimes.opencode")], pins)).toEqual([
      "OpenCode: the table says 1.18.33, but image/sources.yaml has no runtimes.opencode",
    ]);
  });
});
