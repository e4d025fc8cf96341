// The runtime contract (functions/contracts/runtime-contract.ts, docs/runtime-contract.md) is
// what an operator writes a checkout or runtime image against, so it must be what the function
// renders: every variable any case or example sets in a checkout or runtime container is named in
// it, for the kind it appears in, and the committed page is the one the module produces.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { runFunction } from "../../functions/berth/function.js";
import type { KubeObject } from "../../functions/berth/model.js";
import { renderConverged } from "../../functions/berth/tooling/local-render.js";
import { RUNTIME_CONTRACT_PATH, runtimeContractPage } from "../../functions/berth/tooling/runtime-contract-page.js";
import { CHECKOUT_TERMS, OTHER_RUNTIME_TERMS, RUNTIME_TERMS, type Term, type WorkspaceKind } from "../../functions/contracts/runtime-contract.js";
import { CHECKOUT_ENV, RUNTIME_ENV } from "../../functions/contracts/runtime-env.js";
import { CASES } from "../cases.js";
import { EXECUTION_CASES } from "../execution-cases.js";
import { loadObject, loadObjects } from "../fixtures.js";
import { RENDER_EXAMPLES } from "../render-examples.js";

type Container = { name?: string; env?: { name: string }[] };

/** Every container of a rendered object, wherever the kind keeps its pod template. */
function containers(o: KubeObject): Container[] {
  const found: Container[] = [];
  const walk = (v: unknown, key: string) => {
    if (Array.isArray(v)) {
      if (key === "containers" || key === "initContainers") found.push(...(v as Container[]));
      else v.forEach((x) => walk(x, ""));
    } else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(o.spec, "");
  return found;
}

const byName = (terms: Record<string, Term>, names: Record<string, string>) => new Map(Object.entries(names).map(([key, name]) => [name, terms[key] as Term]));
const CHECKOUT = byName(CHECKOUT_TERMS, CHECKOUT_ENV);
const RUNTIME = new Map([...byName(RUNTIME_TERMS, RUNTIME_ENV), [OTHER_RUNTIME_TERMS.HOME.name, OTHER_RUNTIME_TERMS.HOME]]);
/** A credential's variable, `BERTH_<PURPOSE>_<NAME>`, of a purpose the runtime may be given. */
const CREDENTIAL = /^BERTH_(INFERENCE|REGISTRY|MCP)_[A-Z0-9_]+$/;

/** What the contract does not say of a container's variables, as "<kind> <container>: <variable>". */
function unnamed(kind: WorkspaceKind, resources: Record<string, { resource?: unknown }>): string[] {
  return Object.values(resources).flatMap((r) =>
    containers(r.resource as KubeObject).flatMap((c) => {
      const terms = c.name === "checkout" ? CHECKOUT : c.name === "runtime" ? RUNTIME : undefined;
      if (terms === undefined) return [];
      return (c.env ?? [])
        .filter((e) => {
          const term = terms.get(e.name);
          if (term) return !term.kinds.includes(kind);
          return !(c.name === "runtime" && CREDENTIAL.test(e.name) && OTHER_RUNTIME_TERMS.credential.kinds.includes(kind));
        })
        .map((e) => `${kind} ${c.name}: ${e.name}`);
    }),
  );
}

const kindOf = (o: KubeObject) => o.kind as string;

describe("the runtime contract", () => {
  it("is the committed docs/runtime-contract.md", () => {
    expect(readFileSync(RUNTIME_CONTRACT_PATH, "utf8"), `${RUNTIME_CONTRACT_PATH} differs: run \`npm run generate\` and commit it`).toBe(runtimeContractPage());
  });

  it("names every variable a case of the table sets in a checkout or runtime container, for its kind", () => {
    let seen = 0;
    const wrong = [...CASES, ...EXECUTION_CASES].flatMap((c) => {
      const kind = kindOf(c.req.observed?.composite?.resource as KubeObject);
      if (kind !== "DeveloperWorkspace" && kind !== "ExecutionWorkspace") return [];
      const resources = JSON.parse(JSON.stringify(runFunction(c.req))).desired?.resources ?? {};
      seen += Object.values(resources as Record<string, { resource: KubeObject }>).filter((r) => containers(r.resource).some((x) => x.name === "runtime")).length;
      return unnamed(kind, resources).map((w) => `${c.name}: ${w}`);
    });
    expect(seen, "cases that render a runtime").toBeGreaterThan(5);
    expect([...new Set(wrong)]).toEqual([]);
  });

  it("names every variable an example sets, converged", async () => {
    const wrong: string[] = [];
    for (const example of RENDER_EXAMPLES.filter((e) => e.converge)) {
      const xr = loadObject(example.document);
      const last = (await renderConverged(xr, example.required.flatMap(loadObjects))).at(-1)!;
      wrong.push(...unnamed(kindOf(xr) as WorkspaceKind, JSON.parse(JSON.stringify(last.response)).desired?.resources ?? {}));
    }
    expect(wrong).toEqual([]);
  });

  it("fails on a variable it does not name (the check above can fail)", () => {
    const job = { spec: { template: { spec: { containers: [{ name: "runtime", env: [{ name: "BERTH_WORKSPACE_ID" }, { name: "BERTH_SECRET_HANDSHAKE" }] }] } } } };
    expect(unnamed("DeveloperWorkspace", { workload: { resource: job } })).toEqual(["DeveloperWorkspace runtime: BERTH_SECRET_HANDSHAKE"]);
    expect(unnamed("ExecutionWorkspace", { workload: { resource: { spec: { containers: [{ name: "runtime", env: [{ name: "BERTH_MODEL" }] }] } } } })).toEqual(["ExecutionWorkspace runtime: BERTH_MODEL"]);
  });
});
