import { createHash } from "node:crypto";

/** JSON with object keys sorted, so equal specs always hash equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** A short, stable fingerprint of a validated spec: `sha256:` and 16 hex digits. */
export function specHash(spec: unknown): string {
  return `sha256:${createHash("sha256").update(canonical(spec)).digest("hex").slice(0, 16)}`;
}
