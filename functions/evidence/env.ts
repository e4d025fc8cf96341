// Both commands are configured by environment variables alone; a setting that does not parse is
// reported by its variable's name, one problem per line.
import { z } from "zod";

/** A variable that must be set and not empty. */
export const required = z.string({ error: "must be set" }).min(1, "must be set");
/** A TCP port, as a variable's text. */
export const port = z.coerce.number({ error: "must be a port number" }).int("must be a port number").min(1, "must be a port number").max(65535, "must be a port number");

export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new Error(parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("\n"));
}
