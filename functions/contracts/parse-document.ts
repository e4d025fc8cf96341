import { z } from "zod";

/**
 * One line per problem, each naming the field from the document's root:
 * `spec.capabilities.mcp[1].name: Required`. Union branches are flattened to the branch
 * errors so the author sees the real cause rather than "Invalid input".
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], prefix: PropertyKey[] = []): string[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union" && issue.errors.length > 0) {
      const messages = new Set(issue.errors.flatMap((branch) => describeIssues(branch, path)));
      return [...messages].join(" or ").length > 0 ? [[...messages].join("; or ")] : [];
    }
    const where = path.length > 0 ? z.core.toDotPath(path) : "(document)";
    return [`${where}: ${issue.message}`];
  });
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

/** Parse with a schema, turning failure into field-named problems instead of a throw. */
export function parseDocument<S extends z.ZodType>(schema: S, input: unknown): Parsed<z.output<S>> {
  const result = schema.safeParse(input);
  return result.success ? { ok: true, value: result.data } : { ok: false, problems: describeIssues(result.error.issues) };
}
