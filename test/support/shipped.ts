import { readFileSync } from "node:fs";

/** The bundle the image runs (npm run bundle), relative to the repository root. */
export const SHIPPED_ENTRY = "dist/function-berth.mjs";

/**
 * The Node flags the image starts the function with, read from package/Dockerfile's
 * ENTRYPOINT so that tests and the bench run exactly what ships.
 */
export function shippedNodeFlags(dockerfile = "package/Dockerfile"): string[] {
  const line = readFileSync(dockerfile, "utf8")
    .split("\n")
    .find((l) => l.startsWith("ENTRYPOINT "));
  if (!line) throw new Error(`${dockerfile} has no ENTRYPOINT`);
  const argv = JSON.parse(line.slice("ENTRYPOINT ".length)) as string[];
  return argv.slice(1, -1);
}
