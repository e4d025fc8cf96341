// A runtime image run the way a workspace pod runs it, without a node: its root filesystem
// read-only, the workspace volume at /workspace, HOME and /tmp as fresh tmpfs, a /dev of its own,
// as 65532, in a private mount namespace that ends with the process (so nothing is left mounted).
// The network is the host's loopback: the model server, the gate and the MCP server the test
// starts all listen on 127.0.0.1. (Egress enforcement is the node's job, proven in test/live.)
import { spawn } from "node:child_process";
import { chownSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { RUNTIME_PATHS } from "../../functions/contracts/runtime-env.js";

export const WORKLOAD_USER = 65532;

/** Makes the mount points a pod would have, which the image does not carry. */
export function prepareRootfs(rootfs: string): void {
  for (const dir of [RUNTIME_PATHS.workspace, RUNTIME_PATHS.home]) mkdirSync(join(rootfs, dir), { recursive: true });
}

export interface BoxRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** Milliseconds from spawning the box to its exit. */
  elapsedMs: number;
}

/**
 * Runs the image's entrypoint in the box. `workspace` is the host directory that stands in for
 * the workspace volume (owned by 65532); `env` is the container's whole environment.
 */
export function runInBox(options: { rootfs: string; workspace: string; entrypoint: string[]; env: Record<string, string>; timeoutMs: number }): Promise<BoxRun> {
  const { rootfs: r, workspace } = options;
  chownSync(workspace, WORKLOAD_USER, WORKLOAD_USER);
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const script = [
    "set -e",
    `mount --bind ${q(r)} ${q(r)}`,
    `mount -o remount,bind,ro ${q(r)}`,
    `mount --bind ${q(workspace)} ${q(join(r, RUNTIME_PATHS.workspace))}`,
    `mount -t tmpfs -o size=1g,mode=1777 tmpfs ${q(join(r, RUNTIME_PATHS.tmp))}`,
    `mount -t tmpfs -o size=1g,mode=700,uid=${WORKLOAD_USER},gid=${WORKLOAD_USER} tmpfs ${q(join(r, RUNTIME_PATHS.home))}`,
    // The /dev runc gives a container: its devices, the links to /proc/self/fd, a /dev/shm.
    `mount -t tmpfs -o size=1m,mode=755 tmpfs ${q(join(r, "dev"))}`,
    ...["null c 1 3", "zero c 1 5", "full c 1 7", "random c 1 8", "urandom c 1 9", "tty c 5 0"].map((d) => `mknod -m 666 ${q(join(r, "dev", d.split(" ")[0]!))} ${d.split(" ").slice(1).join(" ")}`),
    ...[["fd", "/proc/self/fd"], ["stdin", "/proc/self/fd/0"], ["stdout", "/proc/self/fd/1"], ["stderr", "/proc/self/fd/2"]].map(([name, target]) => `ln -s ${target} ${q(join(r, "dev", name!))}`),
    `mkdir ${q(join(r, "dev/shm"))} && mount -t tmpfs -o size=64m,mode=1777 tmpfs ${q(join(r, "dev/shm"))}`,
    `mount -t proc proc ${q(join(r, "proc"))}`,
    `exec unshare --root=${q(r)} --wd=${RUNTIME_PATHS.checkout} --setuid=${WORKLOAD_USER} --setgid=${WORKLOAD_USER} ${options.entrypoint.map(q).join(" ")}`,
  ].join("\n");
  const started = Date.now();
  return new Promise((resolve, reject) => {
    // --pid with --fork so the box's /proc shows its processes alone, and they all end with it.
    const child = spawn("unshare", ["--mount", "--propagation", "private", "--pid", "--fork", "sh", "-c", script], { env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ exitCode: code, stdout, stderr, elapsedMs: Date.now() - started });
    });
  });
}
