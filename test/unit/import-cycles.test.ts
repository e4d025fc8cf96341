// No import circle among the function's modules, type-only imports included. In a circle no
// module is below another, and the order they happen to load in decides whether a value is
// defined yet when it is read; a type-only import that closes one turns into that trap the day
// it imports a value.
// dpdm, because it reads each file with the TypeScript parser and resolves imports with the
// compiler's own resolution under tsconfig.json (NodeNext: "./model.js" is model.ts), and with
// `transform` off keeps `import type` and `export ... from`. (madge resolves them as well, through
// a hundred packages of parsers for other languages; dependency-cruiser 18 needs Node 22.)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type DependencyTree, parseCircular, parseDependencyTree } from "dpdm";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** Every source file under functions/, as dpdm names it: relative to the repository. */
const SOURCES = readdirSync(join(ROOT, "functions"), { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts"))
  .map((f) => join("functions", f));

describe("the imports under functions/", () => {
  let tree: DependencyTree;
  beforeAll(async () => {
    tree = await parseDependencyTree("functions/**/*.ts", { cwd: ROOT, context: ROOT, tsconfig: join(ROOT, "tsconfig.json"), transform: false, skipDynamicImports: false });
  });

  // A file left out, or a relative import left unresolved, would drop its edges silently, and
  // dpdm skips an import under an `@dpdm-ignore` comment: each would let a circle through.
  it("are all read and resolved, none exempted", () => {
    expect(SOURCES.length).toBeGreaterThan(0);
    expect(SOURCES.filter((f) => !Array.isArray(tree[f]))).toEqual([]);
    const unresolved = Object.values(tree).flatMap((deps) => (deps ?? []).filter((d) => d.request.startsWith(".") && d.id === null));
    expect(unresolved.map((d) => `${d.issuer}: ${d.request}`)).toEqual([]);
    expect(SOURCES.filter((f) => readFileSync(join(ROOT, f), "utf8").includes("@dpdm-ignore"))).toEqual([]);
  });

  it("form no circle", () => {
    const circles = parseCircular(tree).map((circle) => [...circle, circle[0]].join(" -> "));
    expect(circles).toEqual([]);
  });

  // functions/ holds three programs (berth, the function; mcp-gate; evidence), each its own image
  // and bundle, and functions/contracts, what two of them must agree on (the gate's policy file,
  // the export's report, a document's parse). A program reaching into another's room would make
  // its bundle carry that program's code and a change there a change here; contracts import no
  // program, so they stay the lowest room.
  it("cross between the programs only through functions/contracts, which imports none of them", () => {
    const room = (file: string) => file.split("/")[1];
    const crossings = Object.entries(tree).flatMap(([issuer, deps]) =>
      (deps ?? [])
        .filter((d) => d.id?.startsWith("functions/") && room(d.id) !== room(issuer) && (room(d.id) !== "contracts" || room(issuer) === "contracts"))
        .map((d) => `${issuer} -> ${d.id}`),
    );
    expect(Object.keys(tree).filter((f) => f.startsWith("functions/contracts/")).length).toBeGreaterThan(0);
    expect(crossings).toEqual([]);
  });
});
