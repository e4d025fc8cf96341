// The XRDs are generated from the zod schemas; these tests keep the committed files in step,
// validate every example against them as the API server would (OpenAPI structure, then the
// CEL rules), and prove the schema-level rules (name, immutable ID) with a CEL evaluator.
import { readFileSync } from "node:fs";
import { evaluate } from "@marcbachmann/cel-js";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { COMPOSITE_KINDS, compositeResourceDefinition } from "../../functions/berth/xrd.js";
import { definitionPath, definitionYAML } from "../../functions/berth/xrd-files.js";
import { edited, EXAMPLE_WORKSPACES, PROFILE } from "../fixtures.js";

type Schema = Record<string, unknown>;
type Rule = { rule: string; message: string };

function committedSchema(plural: string): Schema {
  const xrd = parse(readFileSync(definitionPath(plural), "utf8"));
  return xrd.spec.versions[0].schema.openAPIV3Schema as Schema;
}

/** The OpenAPI part as JSON Schema for ajv: Kubernetes extensions dropped, int-or-string kept. */
function jsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchema);
  if (node === null || typeof node !== "object") return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node as Schema)) if (!k.startsWith("x-kubernetes-")) out[k] = jsonSchema(v);
  return out;
}

/** Every CEL rule with the value it applies to, walking the schema alongside the object. */
function celRules(schema: Schema, value: unknown, oldValue: unknown, at: string): { at: string; rule: Rule; self: unknown; oldSelf: unknown }[] {
  const found = ((schema["x-kubernetes-validations"] as Rule[] | undefined) ?? []).map((rule) => ({ at, rule, self: value, oldSelf: oldValue }));
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (properties && value && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, s] of Object.entries(properties)) {
      const v = (value as Schema)[k];
      if (v !== undefined) found.push(...celRules(s, v, (oldValue as Schema | undefined)?.[k], `${at}.${k}`));
    }
  }
  const items = schema.items as Schema | undefined;
  if (items && Array.isArray(value)) value.forEach((v, i) => found.push(...celRules(items, v, (oldValue as unknown[] | undefined)?.[i], `${at}[${i}]`)));
  return found;
}

/** The messages of failed CEL rules, as the API server would report them. Transition rules need an old object. */
function celFailures(schema: Schema, object: unknown, old?: unknown): string[] {
  return celRules(schema, object, old, "")
    // Like the API server, transition rules (those reading oldSelf) run only on update.
    .filter(({ rule, oldSelf }) => !rule.rule.includes("oldSelf") || oldSelf !== undefined)
    .filter(({ rule }) => !rule.rule.startsWith("isCIDR")) // cel-js has no Kubernetes CIDR library; zod checks CIDRs
    .filter(({ rule, self, oldSelf }) => evaluate(rule.rule, { self, oldSelf }) !== true)
    .map(({ at, rule }) => `${at || "<root>"}: ${rule.message}`);
}

const ajv = new Ajv({ strict: false, allErrors: true });

describe("XRDs", () => {
  it.each(COMPOSITE_KINDS.map((k) => [k.plural, k] as const))("apis/%s/definition.yaml is generated from the zod schema (npm run generate)", (plural, kind) => {
    expect(readFileSync(definitionPath(plural), "utf8")).toBe(definitionYAML(compositeResourceDefinition(kind)));
  });

  it("is a cluster-scoped Crossplane v2 XRD with printer columns for ID, phase, ready and age", () => {
    const xrd = parse(readFileSync(definitionPath("developerworkspaces"), "utf8"));
    expect(xrd.apiVersion).toBe("apiextensions.crossplane.io/v2");
    expect(xrd.spec.scope).toBe("Cluster");
    const columns = xrd.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name);
    expect(columns).toEqual(expect.arrayContaining(["WORKSPACE-ID", "PHASE", "READY", "AGE"]));
  });

  it.each(Object.entries(EXAMPLE_WORKSPACES))("the %s example validates against the DeveloperWorkspace XRD", (_, workspace) => {
    const schema = committedSchema("developerworkspaces");
    const validate = ajv.compile(jsonSchema(schema) as Schema);
    expect(validate(workspace), JSON.stringify(validate.errors)).toBe(true);
    expect(celFailures(schema, workspace)).toEqual([]);
  });

  it("the OpenAPI schema refuses what the function refuses: wrong types, enums, patterns and sizes", () => {
    const validate = ajv.compile(jsonSchema(committedSchema("developerworkspaces")) as Schema);
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

  it("the profile example validates against the WorkspaceProfile XRD", () => {
    const schema = committedSchema("workspaceprofiles");
    const validate = ajv.compile(jsonSchema(schema) as Schema);
    expect(validate(PROFILE), JSON.stringify(validate.errors)).toBe(true);
    expect(celFailures(schema, PROFILE)).toEqual([]);
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
