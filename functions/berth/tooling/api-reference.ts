// docs/api.md, the API reference, is rendered from the OpenAPI schemas the XRDs carry (the zod
// schemas' JSON schema), so the page cannot say anything the API server does not check. Kinds
// in, markdown out: `npm run generate` writes it and a unit test compares the committed page.
import { GROUP, VERSION } from "../schema/documents.js";
import { QUANTITY } from "../schema/quantity.js";
import { compositeResourceDefinition, type CompositeKind, CROSSPLANE_PRINTER_COLUMNS } from "./xrd.js";
import { GENERATED_NOTE } from "./xrd-files.js";

export const API_REFERENCE_PATH = "docs/api.md";

/** The part of a structural schema the page reads. */
interface Schema {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  additionalProperties?: Schema | boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-list-type"?: string;
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-validations"?: { rule: string; message: string }[];
}

export interface FieldRow {
  /** `spec.capabilities.mcp[].tools[]`: `[]` per array level, `<key>` per map. */
  path: string;
  type: string;
  required: boolean;
  default?: unknown;
  /** Markdown, one rule each. */
  rules: string[];
  description?: string;
}

// One line of markdown; a `<` would open an HTML tag that swallows text such as "<workspaceID>-xr".
const text = (s: string) => s.replace(/\s+/g, " ").replaceAll("<", "&lt;");

/** A code span, fenced with more backticks than it holds. */
function code(s: string): string {
  const fence = "`".repeat(Math.max(0, ...(s.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  return fence.length > 1 ? `${fence} ${s} ${fence}` : `${fence}${s}${fence}`;
}

const BOUNDS = ["minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems"] as const;

const isMap = (s: Schema): s is Schema & { additionalProperties: Schema } => typeof s.additionalProperties === "object";
// Every int-or-string field of Berth's is a quantity; naming it saves repeating its pattern.
const isQuantity = (s: Schema) => s["x-kubernetes-int-or-string"] === true && s.pattern === QUANTITY.source;

function typeOf(s: Schema): string {
  if (isQuantity(s)) return "quantity";
  if (s["x-kubernetes-int-or-string"]) return "integer or string";
  if (s.enum) return "enum";
  if (s.type === "array" && s.items) return `array of ${typeOf(s.items)}`;
  if (isMap(s)) return `map of ${typeOf(s.additionalProperties)}`;
  return s.type ?? "any";
}

function rulesOf(s: Schema): string[] {
  const listType = s["x-kubernetes-list-type"];
  const keys = s["x-kubernetes-list-map-keys"];
  return [
    ...(s.enum ? [`one of ${s.enum.map((v) => code(String(v))).join(", ")}`] : []),
    ...(s.format ? [`format ${code(s.format)}`] : []),
    ...(s.pattern && !isQuantity(s) ? [`pattern ${code(s.pattern)}`] : []),
    ...BOUNDS.filter((b) => s[b] !== undefined).map((b) => `${b} ${s[b]}`),
    ...(listType ? [`list-type ${listType}${keys ? `, keyed by ${keys.map(code).join(", ")}` : ""}`] : []),
    ...celRules(s["x-kubernetes-validations"]),
    ...(s.type === "array" && s.items ? rulesOf(s.items).map((r) => `items: ${r}`) : []),
    ...(isMap(s) ? rulesOf(s.additionalProperties).map((r) => `values: ${r}`) : []),
  ];
}

const celRules = (rules: Schema["x-kubernetes-validations"] = []) => rules.map(({ rule, message }) => `CEL ${code(rule)}: ${text(message)}`);

/** The row's path: an array field is written with its `[]`, as its items are addressed. */
const rowPath = (s: Schema, path: string): string => (s.type === "array" && s.items ? rowPath(s.items, `${path}[]`) : path);

/** The object whose fields hang below a field, and the path they hang from. */
function contents(s: Schema, path: string): { schema: Schema; path: string } {
  if (s.type === "array" && s.items) return contents(s.items, `${path}[]`);
  if (isMap(s)) return contents(s.additionalProperties, `${path}.<key>`);
  return { schema: s, path };
}

/** A row for every field of an object and, level by level, of every object inside it. */
function fieldRows(object: Schema, prefix: string): FieldRow[] {
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties ?? {}).flatMap(([name, s]) => {
    const inner = contents(s, `${prefix}${name}`);
    const row: FieldRow = { path: rowPath(s, `${prefix}${name}`), type: typeOf(s), required: required.has(name), default: s.default, rules: rulesOf(s), description: s.description };
    return [row, ...fieldRows(inner.schema, `${inner.path}.`)];
  });
}

/** The XRD's schema of a kind, as the API server receives it. */
function xrdSchema(kind: CompositeKind): Schema {
  return compositeResourceDefinition(kind).spec.versions[0]!.schema.openAPIV3Schema as Schema;
}

/** Every field of a kind's spec and status, spec and status included. */
export const kindFields = (kind: CompositeKind): FieldRow[] => fieldRows(xrdSchema(kind), "");

// A `|` ends a table cell wherever it stands; GitHub takes `\|` as a `|`, inside code spans too.
const tableRow = (cells: string[]) => `| ${cells.map((c) => c.replace(/\s+/g, " ").replaceAll("|", "\\|")).join(" | ")} |`;

const defaultCell = (value: unknown) => (value === undefined ? "" : code(typeof value === "string" ? value : JSON.stringify(value)));

function fieldTable(rows: FieldRow[]): string[] {
  return [
    tableRow(["Field", "Type", "Required", "Default", "Rules", "Description"]),
    tableRow(Array(6).fill("---")),
    ...rows.map((r) => tableRow([code(r.path), r.type, r.required ? "required" : "optional", defaultCell(r.default), r.rules.join("<br>"), text(r.description ?? "")])),
  ];
}

function kindSection(kind: CompositeKind): string[] {
  const columns = kind.printerColumns.map((c) => `${c.name} (${code(c.jsonPath)})`).join(", ");
  const rootRules = xrdSchema(kind)["x-kubernetes-validations"];
  return [
    `## ${kind.kind}`,
    "",
    text(kind.description),
    "",
    `\`kubectl get ${kind.plural}\` prints ${columns}, then Crossplane's ${CROSSPLANE_PRINTER_COLUMNS.join(", ")}.`,
    "",
    ...(rootRules ? ["Rules on the whole object, which can read its metadata:", "", ...celRules(rootRules).map((r) => `- ${r}`), ""] : []),
    ...fieldTable(kindFields(kind)),
  ];
}

/** docs/api.md: every field of every kind, from the schemas the XRDs are generated from. */
export function apiReference(kinds: readonly CompositeKind[]): string {
  const lines = [
    `<!-- ${GENERATED_NOTE} -->`,
    "",
    "# Berth API reference",
    "",
    `Group \`${GROUP}/${VERSION}\`; every kind is a cluster-scoped Crossplane v2 composite resource (XR).`,
    "This page is generated by `npm run generate` from the zod schemas in `functions/berth/schema`, the",
    "same ones the XRDs in `apis/` are generated from: do not edit it by hand (a unit test fails when it",
    "differs from what the schemas produce).",
    "",
    "How to read the tables:",
    "",
    "- A path names every level: `[]` stands for each item of an array, `<key>` for each value of a map.",
    "- Required means required whenever the object holding the field is set. The API server fills in a",
    "  default when the field is absent; an object's default `{}` lets its own fields' defaults apply.",
    "- Rules are what the API server checks: the OpenAPI bounds and the CEL rules",
    "  (`x-kubernetes-validations`) with the message it answers; a rule on `oldSelf` makes a field immutable.",
    "  The function checks them too, and more that span fields and documents (the destinations a profile",
    "  reviews, what a class permits): it refuses a document with a fatal result naming the field.",
    `- A quantity is a Kubernetes quantity, a whole number or a string such as \`500m\`, \`2\` or \`8Gi\`, matching ${code(QUANTITY.source)} (no exponents).`,
    "- Status is written by Berth, never by the document's author.",
    "",
    kinds.map((k) => `[${k.kind}](#${k.kind.toLowerCase()})`).join(" · "),
    "",
    ...kinds.flatMap((k) => [...kindSection(k), ""]),
  ];
  return lines.join("\n");
}
