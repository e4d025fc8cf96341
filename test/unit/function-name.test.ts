// The Compositions call Berth's function by the name Crossplane's package manager installs the
// Configuration's dependency under (test/support/function-name.ts says why that matters).
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { load } from "../conformance/setup.js";
import { installedFunction, packageRepository, toDNSLabel } from "../support/function-name.js";

describe("the function's installed name", () => {
  it.each([
    ["xpkg.crossplane.io/berth-dev/function-berth:v0.1.0", "berth-dev/function-berth"],
    ["xpkg.crossplane.io/berth-dev/function-berth", "berth-dev/function-berth"],
    ["localhost:5001/berth-dev/function-berth:v1", "berth-dev/function-berth"],
    ["crossplane-contrib/function-patch-and-transform", "crossplane-contrib/function-patch-and-transform"],
  ])("the repository of %s is %s", (ref, repo) => {
    expect(packageRepository(ref)).toBe(repo);
  });

  it.each([
    ["berth-dev/function-berth", "berth-dev-function-berth"],
    ["crossplane-contrib/function-patch-and-transform", "crossplane-contrib-function-patch-and-transform"],
    ["/Upper.Case_x/", "pper-asex"],
    [`${"a".repeat(70)}`, "a".repeat(63)],
  ])("as a DNS label %s is %s (Crossplane's xpkg.ToDNSLabel)", (s, label) => {
    expect(toDNSLabel(s)).toBe(label);
  });

  it("is the DNS label of crossplane.yaml's Function dependency, and every Composition and Operation step calls it", () => {
    const fn = installedFunction();
    expect(fn).toEqual({ package: "xpkg.crossplane.io/berth-dev/function-berth", name: "berth-dev-function-berth" });
    const files = ["compositions", "operations"].flatMap((d) => readdirSync(d).filter((f) => f.endsWith(".yaml")).map((f) => `${d}/${f}`));
    expect(files.filter((f) => f.startsWith("operations/")).length).toBeGreaterThan(0);
    for (const f of files) {
      for (const c of load(f)) {
        const steps = (c.spec.pipeline ?? c.spec.operationTemplate?.spec.pipeline ?? []) as { step: string; functionRef: { name: string } }[];
        expect(steps.length, f).toBeGreaterThan(0);
        for (const s of steps) expect(s.functionRef.name, `${f} step ${s.step}`).toBe(fn.name);
      }
    }
  });
});

describe("install/install.sh", () => {
  it("installs the Function under that name, from crossplane.yaml's package", () => {
    const script = readFileSync("install/install.sh", "utf8");
    const fn = installedFunction();
    expect(/^function_name=(\S+)$/m.exec(script)?.[1]).toBe(fn.name);
    expect(`${/^public="(\S+)"$/m.exec(script)?.[1]}/function-berth`).toBe(fn.package);
    expect(script).toMatch(/^metadata: \{ name: \$function_name \}$/m);
  });
});
