// The XRDs are generated from the zod schemas; these tests keep the committed files in step,
// validate every example against them as the API server would (OpenAPI structure, then the
// CEL rules), and prove the schema-level rules (name, immutable ID) with a CEL evaluator.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { COMPOSITE_KINDS, compositeResourceDefinition, CROSSPLANE_PRINTER_COLUMNS } from "../../functions/berth/tooling/xrd.js";
import { definitionPath, definitionYAML } from "../../functions/berth/tooling/xrd-files.js";
import { edited, EXAMPLE_WORKSPACES, loadObject } from "../fixtures.js";
import { checkCel, checkOpenAPI, schemaOf } from "../support/schema-validation.js";

type Schema = Record<string, unknown>;

function committedSchema(plural: string): Schema {
  return schemaOf(definitionPath(plural));
}

/** Failed CEL rules; every rule of Berth's XRDs is one cel-js can evaluate. */
function celFailures(schema: Schema, object: unknown, old?: unknown): string[] {
  const { failures, unevaluated } = checkCel(schema, object, old);
  // isCIDR is Kubernetes' CIDR library, which cel-js lacks; zod checks the same thing.
  expect(unevaluated.filter((r) => !r.startsWith("isCIDR"))).toEqual([]);
  return failures;
}

const validateOpenAPI = (schema: Schema) => (o: unknown) => checkOpenAPI(schema, o).length === 0;

describe("XRDs", () => {
  it.each(COMPOSITE_KINDS.map((k) => [k.plural, k] as const))("apis/%s/definition.yaml is generated from the zod schema (npm run generate)", (plural, kind) => {
    expect(readFileSync(definitionPath(plural), "utf8")).toBe(definitionYAML(compositeResourceDefinition(kind)));
  });

  it("is a cluster-scoped Crossplane v2 XRD with printer columns for ID, phase and outcome", () => {
    const xrd = parse(readFileSync(definitionPath("developerworkspaces"), "utf8"));
    expect(xrd.apiVersion).toBe("apiextensions.crossplane.io/v2");
    expect(xrd.spec.scope).toBe("Cluster");
    const columns = xrd.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name);
    expect(columns).toEqual(expect.arrayContaining(["WORKSPACE-ID", "PHASE", "OUTCOME"]));
  });

  it.each(COMPOSITE_KINDS.map((k) => [k.plural, k] as const))("apis/%s: with the columns Crossplane appends, kubectl get prints no column twice", (plural) => {
    const xrd = parse(readFileSync(definitionPath(plural), "utf8"));
    const printed = [...xrd.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name), ...CROSSPLANE_PRINTER_COLUMNS];
    expect(printed.filter((name, i) => printed.indexOf(name) !== i)).toEqual([]);
  });

  // Every document in examples/ against its own XRD (the cluster/ folder holds other kinds, and
  // functions.yaml the Function `crossplane render` calls).
  const examples = readdirSync("examples")
    .filter((f) => f.endsWith(".yaml") && f !== "functions.yaml")
    .map((f) => [f, loadObject(`examples/${f}`)] as const);

  it.each(COMPOSITE_KINDS.map((k) => [k.plural, k] as const))("apis/%s: kubectl explain describes the kind", (plural, kind) => {
    const description = committedSchema(plural).description;
    expect(description).toBe(kind.description);
    expect(String(description).length).toBeGreaterThan(40);
  });

  it("every kind has an example", () => {
    expect(new Set(examples.map(([, o]) => o.kind))).toEqual(new Set(COMPOSITE_KINDS.map((k) => k.kind)));
  });

  it.each(examples)("examples/%s validates against its XRD (OpenAPI and CEL)", (_, doc) => {
    const kind = COMPOSITE_KINDS.find((k) => k.kind === doc.kind);
    expect(kind, `no XRD for ${doc.kind}`).toBeDefined();
    const schema = committedSchema(kind!.plural);
    expect(checkOpenAPI(schema, doc)).toEqual([]);
    expect(celFailures(schema, doc)).toEqual([]);
  });

  it("the OpenAPI schema refuses what the function refuses: wrong types, enums, patterns and sizes", () => {
    const validate = validateOpenAPI(committedSchema("developerworkspaces"));
    type Spec = Record<string, any>;
    const broken: ((s: Spec) => void)[] = [
      (s) => (s.storage.mode = "tmpfs"),
      (s) => (s.workspaceID = "Alice"),
      (s) => (s.resources.cpu = "lots"),
      (s) => (s.source.repository = "http://example.com/x.git"),
      (s) => (s.capabilities.kubernetes.access = "cluster-admin"),
      (s) => (s.credentials = Array.from({ length: 17 }, () => s.credentials[0])),
      (s) => delete s.owner,
    ];
    for (const b of broken) expect(validate(edited(EXAMPLE_WORKSPACES.persistent, (w) => b(w.spec as Spec)))).toBe(false);
  });

});

describe("rule 1 at the schema level", () => {
  const schema = committedSchema("developerworkspaces");
  const workspace = EXAMPLE_WORKSPACES.persistent;

  it("refuses a name that is not <workspaceID>-xr", () => {
    const renamed = edited(workspace, (w) => (w.metadata!.name = "alice-xr"));
    expect(celFailures(schema, renamed)).toEqual(["<root>: metadata.name must be <spec.workspaceID>-xr"]);
  });

  it("refuses a change of workspaceID on update, and allows other changes", () => {
    const changed = edited(workspace, (w) => {
      (w.spec as { workspaceID: string }).workspaceID = "bob";
      w.metadata!.name = "bob-xr";
    });
    expect(celFailures(schema, changed, workspace)).toEqual([".spec: spec.workspaceID is immutable"]);
    const resized = edited(workspace, (w) => ((w.spec as { storage: { size: string } }).storage.size = "30Gi"));
    expect(celFailures(schema, resized, workspace)).toEqual([]);
  });

  it("refuses persistent lifecycle on ephemeral storage and a review without verification", () => {
    const mixed = edited(workspace, (w) => ((w.spec as { storage: { mode: string } }).storage.mode = "ephemeral"));
    expect(celFailures(schema, mixed)).toEqual([".spec: spec.storage.mode must be persistent exactly when spec.lifecycle.profile is persistent"]);
    const review = edited(EXAMPLE_WORKSPACES.review, (w) => delete (w.spec as { verification?: unknown }).verification);
    expect(celFailures(schema, review)).toEqual([".spec: spec.verification is required for lifecycle.profile review"]);
  });
});

describe("schema defaults", () => {
  // The API server checks every default against the CEL rules beside it when it accepts the
  // CRD; a default that breaks one keeps the XRD from ever becoming Established.
  function defaultsWithRules(schema: Record<string, unknown>, at: string): { at: string; value: unknown; schema: Record<string, unknown> }[] {
    const here = schema.default !== undefined && schema["x-kubernetes-validations"] !== undefined ? [{ at, value: schema.default, schema }] : [];
    const children = Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>).flatMap(([k, s]) => defaultsWithRules(s, `${at}.${k}`));
    const items = schema.items ? defaultsWithRules(schema.items as Record<string, unknown>, `${at}[]`) : [];
    return [...here, ...children, ...items];
  }

  it.each(COMPOSITE_KINDS.map((k) => [k.plural] as const))("%s: every default satisfies the CEL rules beside it", (plural) => {
    for (const { at, value, schema } of defaultsWithRules(committedSchema(plural), "")) {
      expect(checkCel(schema, value), at).toEqual({ failures: [], unevaluated: [] });
    }
  });
});
