import { readFileSync } from "node:fs";
import { evaluate } from "@marcbachmann/cel-js";
import { Ajv } from "ajv";
import { parse } from "yaml";

// Validates objects against a CRD or XRD schema the way the API server does: the OpenAPI
// structure first (ajv), then the CEL rules (x-kubernetes-validations, with cel-js).

type Schema = Record<string, unknown>;
export type Rule = { rule: string; message: string };

/** The OpenAPI part as JSON Schema for ajv: Kubernetes extensions dropped. */
export function jsonSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchema);
  if (node === null || typeof node !== "object") return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node as Schema)) if (!k.startsWith("x-kubernetes-")) out[k] = jsonSchema(v);
  return out;
}

// CEL escapes property names that are reserved words: `namespace` is read as `__namespace__`.
const CEL_RESERVED = new Set(["namespace", "in", "as", "break", "const", "continue", "else", "for", "function", "if", "import", "let", "loop", "package", "return", "var", "void", "while"]);
function celView(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(celView);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value as Schema).map(([k, v]) => [CEL_RESERVED.has(k) ? `__${k}__` : k, celView(v)]));
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

export interface CelResult {
  failures: string[];
  /** Rules cel-js cannot evaluate (Kubernetes-only CEL libraries), by rule text. */
  unevaluated: string[];
}

/** Evaluates the CEL rules; transition rules (reading oldSelf) run only when there is an old object, as on the API server. */
export function checkCel(schema: Schema, object: unknown, old?: unknown): CelResult {
  const result: CelResult = { failures: [], unevaluated: [] };
  for (const { at, rule, self, oldSelf } of celRules(schema, object, old, "")) {
    if (rule.rule.includes("oldSelf") && oldSelf === undefined) continue;
    let ok: unknown;
    try {
      ok = evaluate(rule.rule, { self: celView(self), oldSelf: celView(oldSelf) });
    } catch {
      result.unevaluated.push(rule.rule);
      continue;
    }
    if (ok !== true) result.failures.push(`${at || "<root>"}: ${rule.message}`);
  }
  return result;
}

const ajv = new Ajv({ strict: false, allErrors: true });
const compiled = new Map<Schema, ReturnType<typeof ajv.compile>>();

/** OpenAPI errors as "path: message" lines (empty when valid). */
export function checkOpenAPI(schema: Schema, object: unknown): string[] {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(jsonSchema(schema) as Schema);
    compiled.set(schema, validate);
  }
  return validate(object) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"}: ${e.message}`);
}

/** The openAPIV3Schema of a CRD or XRD file for the given version. */
export function schemaOf(path: string, version?: string): Schema {
  for (const doc of readFileSync(path, "utf8").split(/^---$/m)) {
    const crd = parse(doc);
    if (!crd?.spec?.versions) continue;
    const v = version ? crd.spec.versions.find((x: { name: string }) => x.name === version) : crd.spec.versions[0];
    if (v) return v.schema.openAPIV3Schema as Schema;
  }
  throw new Error(`${path} has no schema for version ${version}`);
}
