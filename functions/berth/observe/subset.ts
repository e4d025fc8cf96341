import { quantityValue } from "../schema/quantity.js";

/** Where `actual` differs from `expected`, reading `expected` as a subset (server defaults may add fields). */
export function subsetDiff(expected: unknown, actual: unknown, path = ""): string[] {
  if (expected === null || typeof expected !== "object") {
    if (expected === actual) return [];
    // The API server canonicalises quantities (1024Mi -> 1Gi); compare their values.
    if (typeof expected === "string" && typeof actual === "string") {
      try {
        if (quantityValue(expected) === quantityValue(actual)) return [];
      } catch {
        /* not quantities */
      }
    }
    if (typeof expected === "number" && typeof actual === "string" && String(expected) === actual) return [];
    return [`${path || "."}: expected ${JSON.stringify(expected)}, found ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected a list, found ${JSON.stringify(actual)}`];
    if (expected.length !== actual.length) return [`${path}: expected ${expected.length} items, found ${actual.length}`];
    return expected.flatMap((e, i) => subsetDiff(e, actual[i], `${path}[${i}]`));
  }
  if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return [`${path}: expected an object, found ${JSON.stringify(actual)}`];
  return Object.entries(expected as Record<string, unknown>).flatMap(([k, v]) => subsetDiff(v, (actual as Record<string, unknown>)[k], `${path}.${k}`));
}
