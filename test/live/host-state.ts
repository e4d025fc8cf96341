// The parts of the machine a live node could change, read so that a run can compare the
// machine after stop with the machine before start: nothing a node creates may outlive it.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupHierarchies, HOST_PATHS, KUBELET_SYSCTLS, mountPoints, readSysctls, run } from "../conformance/controlplane/node-host.js";

export interface HostState {
  netns: string[];
  links: string[];
  /** Every IPv4 route in every table (the harness routes a function Service address to the node). */
  routes: string[];
  /** `table chain` for every iptables chain (IPv4 and IPv6). */
  iptablesChains: string[];
  /** Rules per table, counted: a node's rules in a built-in chain must go too. */
  iptablesRules: Record<string, number>;
  ipsets: string[];
  mounts: string[];
  /** Top-level cgroups in every v1 hierarchy. */
  cgroups: string[];
  sysctls: Record<string, string>;
  loopDevices: string[];
  hostPaths: string[];
  /** Node and control-plane programs still running. */
  processes: string[];
}

const NODE_PROGRAMS = /^(kubelet|kube-proxy|kube-router|kube-scheduler|kube-apiserver|kube-controller-manager|etcd|containerd|containerd-shim-runc-v2|runc|coredns|crossplane|workspace-probe|git-server|pause|registry-[\d.]+)$/;

async function lines(cmd: string, args: string[]): Promise<string[]> {
  const { stdout } = await run(cmd, args, { allowFailure: true });
  return stdout.split("\n").map((l) => l.trim()).filter(Boolean);
}

async function iptables(save: string): Promise<{ chains: string[]; rules: Record<string, number> }> {
  const chains: string[] = [];
  const rules: Record<string, number> = {};
  let table = "";
  for (const l of await lines(save, [])) {
    if (l.startsWith("*")) table = l.slice(1);
    else if (l.startsWith(":")) chains.push(`${save} ${table} ${l.slice(1).split(" ")[0]}`);
    else if (l.startsWith("-A ")) rules[`${save} ${table}`] = (rules[`${save} ${table}`] ?? 0) + 1;
  }
  return { chains: chains.sort(), rules };
}

function processes(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const comm = readFileSync(join("/proc", pid, "comm"), "utf8").trim();
      if (NODE_PROGRAMS.test(comm)) found.push(comm);
    } catch {
      // The process ended while we looked.
    }
  }
  return found.sort();
}

export async function readHostState(): Promise<HostState> {
  const v4 = await iptables("iptables-save");
  const v6 = await iptables("ip6tables-save");
  return {
    netns: (await lines("ip", ["netns", "list"])).map((l) => l.split(" ")[0]!).sort(),
    links: (await lines("ip", ["-o", "link", "show"])).map((l) => l.split(": ")[1]!.split("@")[0]!).sort(),
    routes: (await lines("ip", ["-4", "route", "show", "table", "all"])).sort(),
    iptablesChains: [...v4.chains, ...v6.chains],
    iptablesRules: { ...v4.rules, ...v6.rules },
    ipsets: (await lines("ipset", ["list", "-n"])).sort(),
    mounts: mountPoints().sort(),
    cgroups: cgroupHierarchies()
      .flatMap((h) => readdirSync(h, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(h, e.name)))
      .sort(),
    sysctls: await readSysctls(KUBELET_SYSCTLS),
    loopDevices: (await lines("losetup", ["-a"])).sort(),
    hostPaths: HOST_PATHS.filter((p) => existsSync(p)),
    processes: processes(),
  };
}

/** What differs between two states, one line per difference ("" when the machine is as it was). */
export function hostStateDiff(before: HostState, after: HostState): string[] {
  const out: string[] = [];
  for (const key of Object.keys(before) as (keyof HostState)[]) {
    const a = before[key];
    const b = after[key];
    if (Array.isArray(a) && Array.isArray(b)) {
      for (const x of b.filter((x) => !a.includes(x))) out.push(`${key}: + ${x}`);
      for (const x of a.filter((x) => !b.includes(x))) out.push(`${key}: - ${x}`);
    } else {
      const ra = a as Record<string, string | number>;
      const rb = b as Record<string, string | number>;
      for (const k of new Set([...Object.keys(ra), ...Object.keys(rb)])) if (ra[k] !== rb[k]) out.push(`${key}: ${k} ${ra[k]} -> ${rb[k]}`);
    }
  }
  return out;
}
