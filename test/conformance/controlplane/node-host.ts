// What a live node changes on the machine, recorded so that it can all be undone: the network
// namespace and its veth pair, the cgroup root, the kernel settings kubelet rewrites, the
// folders kubelet and libcni write outside their configured roots, and the loop devices of the
// harness's volumes. The record is a JSON file in the node's folder, written as each thing is
// created, so that `node.ts --cleanup <dir>` (run by the watchdog if the harness dies) can undo
// a half-started node too.
import { execFile as execFileCb } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

const execFile = promisify(execFileCb);

/** Host-wide kernel settings kubelet rewrites on start (setupKernelTunables); restored on stop. */
export const KUBELET_SYSCTLS = ["vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic", "kernel.panic_on_oops", "kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes"];

/**
 * Folders a node writes outside its own: libcni's cache (hard-coded), kubelet's container-log
 * links and device-plugin socket (hard-coded), containerd's shim sockets, util-linux's mount
 * table, and the folder `ip netns` mounts. Each is removed on stop if the node created it.
 */
export const HOST_PATHS = ["/var/lib/cni", "/var/log/containers", "/var/lib/kubelet", "/run/containerd", "/run/netns", "/run/mount", "/etc/cni", "/opt/cni"];

export interface HostRecord {
  /** The node's folder (under the control plane's run folder). */
  dir: string;
  netns?: string;
  hostLink?: string;
  /** /berth-node-<id> in every cgroup v1 hierarchy. */
  cgroupRoot?: string;
  /** Values before the node started. */
  sysctls: Record<string, string>;
  /** Which of HOST_PATHS existed before, and whether /run/netns was a mount point. */
  preexisting: Record<string, boolean>;
  runNetnsMounted: boolean;
  /** Image files of the harness's loop-mounted volumes. */
  volumeImages: string[];
}

export async function run(cmd: string, args: string[], opts: { allowFailure?: boolean; timeoutMs?: number } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFile(cmd, args, { timeout: opts.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number | string; stdout?: string; stderr?: string; message: string };
    const result = { code: typeof err.code === "number" ? err.code : -1, stdout: err.stdout ?? "", stderr: err.stderr ?? err.message };
    if (opts.allowFailure) return result;
    throw new Error(`${cmd} ${args.join(" ")} failed (${err.code}): ${result.stderr.trim() || err.message}`);
  }
}

export function recordFile(dir: string): string {
  return join(dir, "host-record.json");
}

export function saveRecord(r: HostRecord): void {
  writeFileSync(recordFile(r.dir), JSON.stringify(r, null, 2));
}

export function loadRecord(dir: string): HostRecord {
  return JSON.parse(readFileSync(recordFile(dir), "utf8")) as HostRecord;
}

export async function readSysctls(names: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const n of names) out[n] = readFileSync(`/proc/sys/${n.replace(/\./g, "/")}`, "utf8").trim();
  return out;
}

export function isMountPoint(path: string): boolean {
  return mountPoints().includes(path);
}

/** Mount points from /proc/self/mountinfo, in mount order (octal escapes decoded). */
export function mountPoints(): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" ")[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
}

/** The cgroup v1 hierarchies mounted under /sys/fs/cgroup (cpu, memory, pids, name=systemd, ...). */
export function cgroupHierarchies(): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((l) => / - cgroup cgroup /.test(l))
    .map((l) => l.split(" ")[4]!);
}

/** Every process in a cgroup subtree. */
function cgroupTasks(dir: string): number[] {
  if (!existsSync(dir)) return [];
  const here = existsSync(join(dir, "cgroup.procs")) ? readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number) : [];
  const children = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
  return [...here, ...children.flatMap((c) => cgroupTasks(join(dir, c.name)))];
}

/** Removes a cgroup subtree, deepest first (cgroup folders go with rmdir, never rm -r). */
function removeCgroup(dir: string): void {
  if (!existsSync(dir)) return;
  for (const c of readdirSync(dir, { withFileTypes: true })) if (c.isDirectory()) removeCgroup(join(dir, c.name));
  rmdirSync(dir);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Undoes everything a HostRecord lists, whatever state the node is in: processes left in its
 * cgroups are killed, mounts under its folder unmounted, loop devices detached, cgroups and the
 * network namespace removed, kernel settings restored, and host folders it created deleted.
 * Safe to run twice. Returns what it could not undo (empty when the machine is as it was).
 */
export async function undoHost(r: HostRecord, log: (m: string) => void): Promise<string[]> {
  const problems: string[] = [];
  const attempt = async (what: string, fn: () => Promise<void> | void) => {
    try {
      await fn();
    } catch (e) {
      problems.push(`${what}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  // 1. Whatever still runs in the node's cgroups (containers, shims that joined them).
  if (r.cgroupRoot) {
    const root = r.cgroupRoot;
    await attempt("killing the node's remaining processes", async () => {
      for (let i = 0; i < 20; i++) {
        const pids = [...new Set(cgroupHierarchies().flatMap((h) => cgroupTasks(join(h, root))))];
        if (pids.length === 0) return;
        for (const pid of pids) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // already gone
          }
        }
        await sleep(250);
      }
      throw new Error("processes remain in the node's cgroups");
    });
  }

  // 2. Mounts under the node's folder (container root filesystems, pod network namespaces,
  //    volumes, tmpfs of projected tokens), newest first.
  await attempt("unmounting the node's mounts", async () => {
    for (let i = 0; i < 5; i++) {
      const mine = mountPoints().filter((m) => m === r.dir || m.startsWith(`${r.dir}/`)).reverse();
      if (mine.length === 0) return;
      for (const m of mine) await run("umount", ["-n", m], { allowFailure: true }).then((res) => (res.code === 0 ? undefined : run("umount", ["-n", "-l", m], { allowFailure: true })));
    }
    const left = mountPoints().filter((m) => m.startsWith(`${r.dir}/`));
    if (left.length > 0) throw new Error(`still mounted: ${left.join(", ")}`);
  });

  // 3. Loop devices behind the harness's volumes.
  for (const image of r.volumeImages) {
    await attempt(`detaching the loop device of ${image}`, async () => {
      const { stdout } = await run("losetup", ["-j", image], { allowFailure: true });
      for (const line of stdout.split("\n").filter(Boolean)) await run("losetup", ["-d", line.split(":")[0]!]);
    });
  }

  // 4. cgroups.
  if (r.cgroupRoot) {
    for (const h of cgroupHierarchies()) await attempt(`removing cgroup ${h}${r.cgroupRoot}`, () => removeCgroup(join(h, r.cgroupRoot!)));
  }

  // 5. The network namespace: its iptables chains, ipsets, bridge, routes and pod veths go with
  //    it, and so does the host end of the veth pair.
  if (r.netns) {
    const netns = r.netns;
    await attempt(`deleting network namespace ${netns}`, async () => {
      if (existsSync(`/run/netns/${netns}`)) await run("ip", ["netns", "del", netns]);
    });
    if (r.hostLink) {
      const link = r.hostLink;
      await attempt(`deleting link ${link}`, async () => {
        const exists = async () => (await run("ip", ["link", "show", link], { allowFailure: true })).code === 0;
        // Deleting the node's namespace takes the veth pair with it, asynchronously: the link
        // may go between the check and the delete, which is the outcome wanted.
        if (await exists()) {
          const del = await run("ip", ["link", "del", link], { allowFailure: true });
          if (del.code !== 0 && (await exists())) throw new Error(`ip link del ${link} failed (${del.code}): ${del.stderr.trim()}`);
        }
      });
    }
    if (!r.runNetnsMounted) {
      await attempt("unmounting /run/netns", async () => {
        if (isMountPoint("/run/netns") && readdirSync("/run/netns").length === 0) await run("umount", ["-n", "/run/netns"]);
      });
    }
  }

  // 6. Kernel settings.
  for (const [name, value] of Object.entries(r.sysctls)) {
    await attempt(`restoring ${name}`, async () => {
      const path = `/proc/sys/${name.replace(/\./g, "/")}`;
      if (readFileSync(path, "utf8").trim() !== value) {
        writeFileSync(path, value);
        log(`restored ${name} = ${value}`);
      }
    });
  }

  // 7. Host folders the node created.
  for (const path of HOST_PATHS) {
    if (r.preexisting[path] !== false || !existsSync(path)) continue;
    await attempt(`removing ${path}`, () => {
      if (statSync(path).isDirectory() && isMountPoint(path)) throw new Error("is a mount point");
      rmSync(path, { recursive: true, force: true });
    });
  }
  return problems;
}
