// What package/Dockerfile ships, read from the Dockerfile itself, so that the image built without
// Docker (image/build.ts), the tests and the bench run exactly the same bundle with exactly
// the same flags as the Docker-built image.
import { readFileSync } from "node:fs";

/** The bundle the image runs (npm run bundle), relative to the repository root. */
export const SHIPPED_ENTRY = "dist/function-berth.mjs";

/** The runtime settings of package/Dockerfile's final stage. */
export interface ShippedRuntime {
  /** ENTRYPOINT, exec form: [node, ...flags, bundle file name]. */
  entrypoint: string[];
  /** WORKDIR: where the bundle lives. */
  workdir: string;
  /** EXPOSE: the gRPC port. */
  port: number;
  /** The distroless base's tag: nonroot runs as 65532:65532. */
  user: string;
}

const NONROOT = "65532:65532";

export function shippedRuntime(dockerfile = "package/Dockerfile"): ShippedRuntime {
  const lines = readFileSync(dockerfile, "utf8").split("\n");
  const lastFrom = lines.map((l) => l.startsWith("FROM ")).lastIndexOf(true);
  const finalStage = lines.slice(lastFrom);
  const value = (instruction: string) => {
    const line = finalStage.find((l) => l.startsWith(`${instruction} `));
    if (!line) throw new Error(`${dockerfile}: the final stage has no ${instruction}`);
    return line.slice(instruction.length + 1).trim();
  };
  const from = value("FROM");
  if (!from.endsWith(":nonroot")) throw new Error(`${dockerfile}: the final stage must be a :nonroot base (FROM ${from})`);
  return { entrypoint: JSON.parse(value("ENTRYPOINT")) as string[], workdir: value("WORKDIR"), port: Number(value("EXPOSE")), user: NONROOT };
}

/** The Node flags the image starts the function with: ENTRYPOINT without node and the bundle. */
export function shippedNodeFlags(dockerfile = "package/Dockerfile"): string[] {
  return shippedRuntime(dockerfile).entrypoint.slice(1, -1);
}

/**
 * The command that runs the image's ENTRYPOINT in its unpacked root filesystem as a container
 * runtime would: chrooted, in its WORKDIR, as its user, with /proc mounted (Node.js sizes its
 * heap from /proc; without it the function's peak RSS grows by about a third). Needs root.
 */
export function rootfsCommand(rootfs: string, runtime = shippedRuntime()): string[] {
  const [uid, gid] = runtime.user.split(":");
  return ["unshare", "--mount", "--mount-proc", `--root=${rootfs}`, `--wd=${runtime.workdir}`, `--setuid=${uid}`, `--setgid=${gid}`, ...runtime.entrypoint];
}
