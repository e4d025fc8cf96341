// A real worker node for the local control plane, run as plain processes (no container engine):
// containerd with runc, kubelet, kube-proxy (iptables) and kube-router (NetworkPolicy firewall
// only) inside a network namespace of their own, joined to the host by a veth pair; the pods'
// bridge, iptables rules and ipsets all live in that namespace, so nothing reaches the host's
// own tables. kube-scheduler runs beside the control plane. Images come from OCI archives built
// here (test/live/images.ts), imported into containerd, or from registries the harness runs
// (test/live/registry.ts) that containerd is told to trust: no other registry is ever contacted.
//
//   const net = await createNodeNetwork(dir);                 // netns + veth (needs root)
//   const cp = await startControlPlane({ node: { address: net.hostIP } });
//   const node = await startNode(cp, net, { images });        // joins, Ready; cp.stop() stops it
//
// Everything the node changes on the machine is recorded (node-host.ts) and undone on stop,
// or by `node.ts --cleanup <dir>` if the harness dies.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { findBinDir, freePort, issueCert, kubeconfigYAML, readVersions, type ControlPlane } from "./controlplane.js";
import { HOST_PATHS, isMountPoint, KUBELET_SYSCTLS, loadRecord, readSysctls, run, saveRecord, undoHost, cgroupHierarchies, type HostRecord } from "./node-host.js";
import type { BuiltImage } from "../../../image/oci.js";
import { ProcessSet, type Proc } from "./processes.js";

export const NODE_NAME = "berth-node";
/** The CNI network's name, which libcni's cache files under /var/lib/cni carry. */
export const CNI_NETWORK = "berth-live";
/** Where the standard CNI plugins are: Debian's containernetworking-plugins. */
export const CNI_BIN_DIR = "/usr/lib/cni";
const REPO = resolve(fileURLToPath(import.meta.url), "../../../..");

export interface NodeNetwork {
  /** The named network namespace (ip netns) the node runs in. */
  netns: string;
  hostLink: string;
  nodeLink: string;
  /** The host end of the veth pair: the API server listens here. */
  hostIP: string;
  /** The node's own address (kubelet, NodePorts); the pods' traffic leaves through it, masqueraded. */
  nodeIP: string;
  podCIDR: string;
  serviceCIDR: string;
  /** The cluster DNS Service's ClusterIP. */
  dnsIP: string;
}

export interface NodeOptions {
  /** Folder of the node binaries (build.sh --node). Default: $BERTH_NODE_BIN or the newest cache folder for versions.env. */
  binDir?: string;
  /** Images to import into containerd before kubelet starts; one must be the pause image. */
  images: BuiltImage[];
  /** The sandbox (pause) image's name, as in `images`. */
  pauseImage: string;
  /** Registries containerd pulls from over TLS, each trusting the CA file given. */
  registries?: { host: string; caFile: string }[];
  log?: (msg: string) => void;
}

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Node {
  name: string;
  network: NodeNetwork;
  binDir: string;
  /** The node's folder: configs, containerd and kubelet state, logs. */
  dir: string;
  /** crictl against the node's containerd (run in its network namespace, where exec streams are served). */
  crictl(args: string[], opts?: { allowFailure?: boolean; timeoutMs?: number }): Promise<ExecResult>;
  /** The id of a running container of a pod. */
  containerID(namespace: string, pod: string, container: string): Promise<string>;
  /** Runs argv in a running container (as that container's user, in its namespaces). */
  exec(namespace: string, pod: string, container: string, argv: string[], timeoutMs?: number): Promise<ExecResult>;
  /** The host pid of a container's first process. */
  containerPid(namespace: string, pod: string, container: string): Promise<number>;
  /** Runs a command in the node's network namespace. */
  inNetns(argv: string[], opts?: { allowFailure?: boolean; timeoutMs?: number }): Promise<ExecResult>;
  /**
   * Kills one of the node's processes (kubelet, containerd, kube-proxy, kube-router) and waits
   * until it is gone: a fault, injected on purpose. The pods' containers outlive both kubelet and
   * containerd (each runs under its own shim, in a process group of its own). relaunch starts
   * it again as it was and waits until it is ready: containerd's CRI answering, kubelet's Node
   * heartbeat renewed after the relaunch, anything else still running after a second.
   */
  kill(name: string, signal?: "SIGKILL" | "SIGTERM"): Promise<void>;
  relaunch(name: string, timeoutMs?: number): Promise<void>;
  /** Relaunches the process if a fault left it stopped (see relaunch); true if it had to. */
  restore(name: string, timeoutMs?: number): Promise<boolean>;
  stop(): Promise<void>;
}

/** The node's binaries: kubelet, kube-proxy, kube-scheduler, containerd (+ shim, ctr), runc, crictl, kube-router, coredns. */
export const NODE_BINARIES = ["kubelet", "kube-proxy", "kube-scheduler", "containerd", "containerd-shim-runc-v2", "ctr", "runc", "crictl", "kube-router", "coredns"];

export function findNodeBinDir(explicit?: string): string {
  const complete = (d: string) => NODE_BINARIES.every((b) => existsSync(join(d, b)));
  const chosen = explicit ?? process.env.BERTH_NODE_BIN;
  if (chosen) {
    if (!complete(chosen)) throw new Error(`${chosen} lacks some of ${NODE_BINARIES.join(", ")}; run test/conformance/controlplane/build.sh --node`);
    return chosen;
  }
  const v = readVersions();
  const cp = findBinDir();
  const tag = `node-k8s${v.KUBERNETES_VERSION}-containerd${v.CONTAINERD_VERSION}-runc${v.RUNC_VERSION}-crictl${v.CRICTL_VERSION}-kr${v.KUBE_ROUTER_VERSION}-coredns${v.COREDNS_VERSION}-`;
  const root = join(cp, "..");
  const found = readdirSync(root).filter((d) => d.startsWith(tag) && complete(join(root, d)));
  if (!found[0]) throw new Error(`no node binaries under ${root}/${tag}*; run test/conformance/controlplane/build.sh --node`);
  return join(root, found.sort().at(-1)!);
}

/** Refuses to start where a node cannot run, naming what is missing. */
export async function nodePreflight(): Promise<void> {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push("root (the node creates a network namespace, cgroups and mounts)");
  for (const cmd of ["ip", "nsenter", "iptables", "iptables-save", "iptables-restore", "ipset", "losetup", "mkfs.ext4", "mount", "umount"]) {
    if ((await run("sh", ["-c", `command -v ${cmd}`], { allowFailure: true })).code !== 0) missing.push(cmd);
  }
  for (const plugin of ["bridge", "host-local", "loopback", "portmap"]) if (!existsSync(join(CNI_BIN_DIR, plugin))) missing.push(`${CNI_BIN_DIR}/${plugin}`);
  if (cgroupHierarchies().length === 0) missing.push("cgroup v1 hierarchies under /sys/fs/cgroup");
  if (missing.length > 0) {
    throw new Error(`a live node needs: ${missing.join(", ")} (Debian: apt-get install -y iptables ipset containernetworking-plugins libseccomp-dev util-linux e2fsprogs)`);
  }
}

/**
 * The node's network: a named network namespace joined to the host by a veth pair on a /30
 * that no host route uses, with forwarding on inside the namespace only. The host keeps its
 * own forwarding off, so pods can reach the host end of the pair (the API server, the
 * harness's own listeners) and nothing beyond it.
 */
export async function createNodeNetwork(dir: string, log: (m: string) => void = () => {}): Promise<NodeNetwork> {
  await nodePreflight();
  mkdirSync(dir, { recursive: true });
  const id = Math.random().toString(16).slice(2, 8);
  const record: HostRecord = {
    dir,
    sysctls: await readSysctls(KUBELET_SYSCTLS),
    preexisting: Object.fromEntries(HOST_PATHS.map((p) => [p, existsSync(p)])),
    runNetnsMounted: isMountPoint("/run/netns"),
    volumeImages: [],
  };
  const net: NodeNetwork = {
    netns: `berth-node-${id}`,
    hostLink: `bh-${id}`,
    nodeLink: `bn-${id}`,
    hostIP: "198.18.0.1",
    nodeIP: "198.18.0.2",
    podCIDR: "10.244.0.0/24",
    serviceCIDR: "10.0.0.0/24",
    dnsIP: "10.0.0.10",
  };
  // 198.18.0.0/15 is set aside for benchmarking networks (RFC 2544): never routed, rarely used.
  const routes = (await run("ip", ["-4", "route", "show", "table", "all"])).stdout;
  for (const cidr of ["198.18.0.0/30", net.podCIDR, net.serviceCIDR]) {
    if (routes.includes(cidr.split("/")[0]!.split(".").slice(0, 3).join("."))) throw new Error(`the node's network ${cidr} overlaps a route on this machine:\n${routes}`);
  }
  record.netns = net.netns;
  record.hostLink = net.hostLink;
  saveRecord(record);
  await run("ip", ["netns", "add", net.netns]);
  await run("ip", ["link", "add", net.hostLink, "type", "veth", "peer", "name", net.nodeLink]);
  await run("ip", ["link", "set", net.nodeLink, "netns", net.netns]);
  await run("ip", ["addr", "add", `${net.hostIP}/30`, "dev", net.hostLink]);
  await run("ip", ["link", "set", net.hostLink, "up"]);
  const inNs = (args: string[]) => run("ip", ["netns", "exec", net.netns, ...args]);
  await inNs(["ip", "addr", "add", `${net.nodeIP}/30`, "dev", net.nodeLink]);
  await inNs(["ip", "link", "set", net.nodeLink, "up"]);
  await inNs(["ip", "link", "set", "lo", "up"]);
  // kubelet and kube-proxy pick the interface of the default route as the node's.
  await inNs(["ip", "route", "add", "default", "via", net.hostIP]);
  await inNs(["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]);
  log(`node network: netns ${net.netns}, ${net.hostLink} ${net.hostIP} <-> ${net.nodeLink} ${net.nodeIP}, pods ${net.podCIDR}`);
  return net;
}

const yaml = (o: unknown) => JSON.stringify(o, null, 2);

/** containerd's registry host configuration: hosts.toml per registry, trusting its CA only for that host. */
function writeRegistryHosts(dir: string, registries: { host: string; caFile: string }[]): void {
  for (const r of registries) {
    mkdirSync(join(dir, r.host), { recursive: true });
    writeFileSync(
      join(dir, r.host, "hosts.toml"),
      `server = "https://${r.host}"\n\n[host."https://${r.host}"]\n  capabilities = ["pull", "resolve"]\n  ca = "${r.caFile}"\n`,
    );
  }
}

function containerdConfig(dir: string, binDir: string, pauseImage: string): string {
  return `version = 3
root = "${dir}/containerd/root"
state = "${dir}/containerd/state"
# Plugins a CRI node with the overlay snapshotter does not use.
disabled_plugins = [
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.erofs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
  "io.containerd.nri.v1.nri",
]

[grpc]
  address = "${dir}/containerd/containerd.sock"

[ttrpc]
  address = "${dir}/containerd/containerd.sock.ttrpc"

[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "${pauseImage}"
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = "${dir}/containerd/certs.d"

  [plugins.'io.containerd.cri.v1.runtime']
    # This machine's bounding set lacks CAP_SYS_RESOURCE: without this every pod fails with
    # "nsexec: failed to update /proc/self/oom_score_adj: Permission denied".
    restrict_oom_score_adj = true
    # Pod network namespaces under the node's own folder, not /var/run/netns.
    netns_mounts_under_state_dir = true
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["${CNI_BIN_DIR}"]
      conf_dir = "${dir}/cni/net.d"
      max_conf_num = 1
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "${binDir}/runc"
          SystemdCgroup = false
`;
}

function cniConfig(dir: string, net: NodeNetwork): string {
  return yaml({
    cniVersion: "1.0.0",
    name: CNI_NETWORK,
    plugins: [
      {
        type: "bridge",
        bridge: "berth-br0",
        isGateway: true,
        // Pods leave through the node's address, so the host needs no route to them.
        ipMasq: true,
        hairpinMode: true,
        ipam: { type: "host-local", ranges: [[{ subnet: net.podCIDR }]], routes: [{ dst: "0.0.0.0/0" }], dataDir: `${dir}/cni/ipam` },
      },
      { type: "portmap", capabilities: { portMappings: true } },
    ],
  });
}

export async function startNode(cp: ControlPlane, net: NodeNetwork, opts: NodeOptions): Promise<Node> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`[node] ${m}\n`));
  const binDir = findNodeBinDir(opts.binDir);
  const dir = join(cp.runDir, "node");
  const record = loadRecord(dir);
  const logDir = join(dir, "logs");
  for (const d of ["logs", "pki", "containerd", "cni/net.d", "cni/ipam", "kubelet", "kubelet/pods-logs", "volumes"]) mkdirSync(join(dir, d), { recursive: true });
  const netnsPath = `/run/netns/${net.netns}`;
  const processes = new ProcessSet({
    runDir: dir,
    logDir,
    pidFile: "pids",
    log,
    cleanupCommand: `cd '${REPO}' && '${process.execPath}' --import tsx test/conformance/controlplane/node.ts --cleanup '${dir}'`,
  });
  const inNode = (name: string, bin: string, args: string[], env: NodeJS.ProcessEnv = {}) => processes.launch(name, "nsenter", [`--net=${netnsPath}`, "--", bin, ...args], { PATH: `${binDir}:${process.env.PATH}`, ...env });
  const sock = join(dir, "containerd/containerd.sock");
  const crictl = (args: string[], o: { allowFailure?: boolean; timeoutMs?: number } = {}) =>
    run("nsenter", [`--net=${netnsPath}`, "--", join(binDir, "crictl"), `--runtime-endpoint=unix://${sock}`, `--image-endpoint=unix://${sock}`, "--timeout=60s", ...args], o);

  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    const t = Date.now();
    // kubelet first, so that nothing restarts the pods; then the pods, while containerd can
    // still tear down their network and mounts; then everything else.
    const kubelet = processes.procs.find((p) => p.name === "kubelet");
    if (kubelet) await processes.stopOne(kubelet);
    if (processes.procs.some((p) => p.name === "containerd" && p.exitCode === undefined)) {
      await crictl(["rmp", "--all", "--force"], { allowFailure: true, timeoutMs: 120_000 });
    }
    await processes.stop();
    const problems = await undoHost(loadRecord(dir), log);
    log(`node stopped and its changes to the machine undone in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    if (problems.length > 0) throw new Error(`the node left the machine changed:\n${problems.join("\n")}`);
  };
  cp.onStop(stop);

  const deadline = Date.now() + 240_000;
  const remaining = () => Math.max(1000, deadline - Date.now());
  let t = Date.now();

  // Identities: each component authenticates with a client certificate from the cluster CA.
  const ca = { caCrt: join(cp.pkiDir, "ca.crt"), caKey: join(cp.pkiDir, "ca.key") };
  const pki = join(dir, "pki");
  const identities: Record<string, string> = {
    kubelet: `/O=system:nodes/CN=system:node:${NODE_NAME}`,
    "kube-proxy": "/CN=system:kube-proxy",
    "kube-scheduler": "/CN=system:kube-scheduler",
    "kube-router": "/CN=system:berth:kube-router",
  };
  const caPEM = readFileSync(ca.caCrt, "utf8");
  const kubeconfigs: Record<string, string> = {};
  for (const [name, subject] of Object.entries(identities)) {
    const cert = await issueCert(pki, name, { ...ca, subject, client: true });
    kubeconfigs[name] = join(dir, `${name}.kubeconfig`);
    writeFileSync(kubeconfigs[name]!, kubeconfigYAML(cp.server, caPEM, readFileSync(cert.crt, "utf8"), readFileSync(cert.key, "utf8"), name), { mode: 0o600 });
  }
  log(`node identities ready (${Date.now() - t} ms)`);

  try {
    // cgroups: everything the node runs lives under one root of its own in every hierarchy.
    const cgroupRoot = `/${net.netns}`;
    record.cgroupRoot = cgroupRoot;
    saveRecord(record);
    for (const h of cgroupHierarchies()) {
      const d = join(h, cgroupRoot);
      mkdirSync(d, { recursive: true });
      // A new cpuset cgroup has no cpus or mems until given its parent's.
      if (existsSync(join(d, "cpuset.cpus"))) {
        writeFileSync(join(d, "cpuset.cpus"), readFileSync(join(h, "cpuset.cpus"), "utf8").trim() || "0");
        writeFileSync(join(d, "cpuset.mems"), readFileSync(join(h, "cpuset.mems"), "utf8").trim() || "0");
      }
    }

    // containerd.
    t = Date.now();
    writeFileSync(join(dir, "containerd/config.toml"), containerdConfig(dir, binDir, opts.pauseImage));
    writeRegistryHosts(join(dir, "containerd/certs.d"), opts.registries ?? []);
    writeFileSync(join(dir, "cni/net.d/10-berth-live.conflist"), cniConfig(dir, net));
    const containerd = inNode("containerd", join(binDir, "containerd"), ["--config", join(dir, "containerd/config.toml"), "--log-level", "info"]);
    await processes.poll("containerd's CRI", containerd, async () => (await crictl(["info"], { allowFailure: true, timeoutMs: 5000 })).code === 0, remaining());
    log(`containerd ready (${Date.now() - t} ms)`);

    t = Date.now();
    for (const image of opts.images) {
      const archive = join(dir, `image-${image.digest.slice(7, 19)}.tar`);
      writeFileSync(archive, image.archive);
      await run(join(binDir, "ctr"), ["--address", sock, "--namespace", "k8s.io", "images", "import", "--platform", "linux/amd64", archive]);
    }
    log(`imported ${opts.images.length} images (${Date.now() - t} ms): ${opts.images.map((i) => i.name).join(", ")}`);

    // kubelet.
    t = Date.now();
    const kubeletConfig = {
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      // This machine has cgroup v1 only; 1.35 refuses it unless told otherwise.
      failCgroupV1: false,
      cgroupDriver: "cgroupfs",
      cgroupRoot,
      cgroupsPerQOS: true,
      containerRuntimeEndpoint: `unix://${sock}`,
      address: net.nodeIP,
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: "127.0.0.1",
      healthzPort: 10248,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: ca.caCrt } },
      authorization: { mode: "Webhook" },
      clusterDomain: "cluster.local",
      clusterDNS: [net.dnsIP],
      // Pods never see the host's resolvers; DNS is the cluster's alone.
      resolvConf: "",
      podLogsDir: join(dir, "kubelet/pods-logs"),
      failSwapOn: false,
      // Imported images cannot be pulled again: never garbage-collect them.
      imageGCHighThresholdPercent: 100,
      imageGCLowThresholdPercent: 99,
      // The machine's disk may be nearly full; evict only when it really is.
      evictionHard: { "memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%", "nodefs.inodesFree": "1%" },
      localStorageCapacityIsolation: true,
      serializeImagePulls: false,
      volumePluginDir: join(dir, "kubelet/volume-plugins"),
      staticPodPath: "",
      rotateCertificates: false,
      serverTLSBootstrap: false,
      nodeStatusUpdateFrequency: "5s",
    };
    writeFileSync(join(dir, "kubelet/config.yaml"), yaml(kubeletConfig));
    const kubelet = inNode("kubelet", join(binDir, "kubelet"), [
      `--config=${join(dir, "kubelet/config.yaml")}`,
      `--kubeconfig=${kubeconfigs.kubelet}`,
      `--root-dir=${join(dir, "kubelet/root")}`,
      `--cert-dir=${join(dir, "kubelet/pki")}`,
      `--hostname-override=${NODE_NAME}`,
      `--node-ip=${net.nodeIP}`,
      "--v=1",
    ]);

    // kube-scheduler, beside the control plane (it needs no node network).
    const scheduler = processes.launch("kube-scheduler", join(binDir, "kube-scheduler"), [
      `--kubeconfig=${kubeconfigs["kube-scheduler"]}`,
      `--authentication-kubeconfig=${kubeconfigs["kube-scheduler"]}`,
      `--authorization-kubeconfig=${kubeconfigs["kube-scheduler"]}`,
      "--leader-elect=false",
      "--bind-address=127.0.0.1",
      `--secure-port=${await freePort()}`,
      "--v=1",
    ]);

    // kube-proxy, iptables mode, told to leave the host-wide conntrack settings alone.
    writeFileSync(
      join(dir, "kube-proxy.yaml"),
      yaml({
        apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
        kind: "KubeProxyConfiguration",
        clientConnection: { kubeconfig: kubeconfigs["kube-proxy"] },
        hostnameOverride: NODE_NAME,
        mode: "iptables",
        clusterCIDR: net.podCIDR,
        healthzBindAddress: "127.0.0.1:10256",
        metricsBindAddress: "127.0.0.1:10249",
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
        iptables: { localhostNodePorts: false },
      }),
    );
    const proxy = inNode("kube-proxy", join(binDir, "kube-proxy"), [`--config=${join(dir, "kube-proxy.yaml")}`, "--v=1"]);

    // kube-router: NetworkPolicy enforcement only (no routing, no service proxy, no CNI).
    await cp.kube.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "berth:kube-router" },
      rules: [
        { apiGroups: [""], resources: ["pods", "namespaces", "nodes", "services", "endpoints"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: ["get", "list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
      ],
    });
    await cp.kube.apply({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "berth:kube-router" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "berth:kube-router" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "system:berth:kube-router" }],
    });
    // kube-router finds its own Node object at start, so it starts once kubelet has registered it.
    await processes.poll(`node ${NODE_NAME} registered`, kubelet, async () => (await cp.kube.get("v1", "Node", NODE_NAME)) !== undefined, remaining());
    const router = inNode("kube-router", join(binDir, "kube-router"), [
      "--run-firewall=true",
      "--run-router=false",
      "--run-service-proxy=false",
      "--enable-cni=false",
      "--enable-ipv6=false",
      `--kubeconfig=${kubeconfigs["kube-router"]}`,
      `--hostname-override=${NODE_NAME}`,
      `--service-cluster-ip-range=${net.serviceCIDR}`,
      "--health-port=0",
      "--metrics-port=0",
      "--v=1",
    ]);

    await processes.poll(`node ${NODE_NAME} Ready`, kubelet, async () => {
      for (const p of [scheduler, proxy, router]) processes.alive(p);
      const node = await cp.kube.get("v1", "Node", NODE_NAME);
      return (node?.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True");
    }, remaining());
    log(`node ${NODE_NAME} Ready (${Date.now() - t} ms)`);
  } catch (e) {
    await stop().catch((err) => log(String(err)));
    throw e;
  }

  /** What "ready again" means after a relaunch at `since`, by process name. */
  const readiness: Record<string, (since: number) => Promise<boolean>> = {
    containerd: async () => (await crictl(["info"], { allowFailure: true, timeoutMs: 5000 })).code === 0,
    kubelet: async (since) => {
      const node = await cp.kube.get("v1", "Node", NODE_NAME);
      const ready = (node?.status?.conditions ?? []).find((c: { type: string }) => c.type === "Ready");
      // Heartbeats have whole-second resolution.
      return ready?.status === "True" && Date.parse(ready.lastHeartbeatTime) >= Math.floor(since / 1000) * 1000;
    },
  };
  const containerID = async (namespace: string, pod: string, container: string) => {
    const res = await crictl(["ps", "--quiet", "--state", "Running", "--name", `^${container}$`, "--label", `io.kubernetes.pod.namespace=${namespace}`, "--label", `io.kubernetes.pod.name=${pod}`]);
    const id = res.stdout.trim().split("\n").filter(Boolean)[0];
    if (!id) throw new Error(`no running container ${container} in pod ${namespace}/${pod}`);
    return id;
  };
  return {
    name: NODE_NAME,
    network: net,
    binDir,
    dir,
    crictl,
    containerID,
    exec: async (namespace, pod, container, argv, timeoutMs = 60_000) => crictl(["exec", await containerID(namespace, pod, container), ...argv], { allowFailure: true, timeoutMs }),
    containerPid: async (namespace, pod, container) => {
      const info = JSON.parse((await crictl(["inspect", await containerID(namespace, pod, container)])).stdout) as { info?: { pid?: number } };
      if (!info.info?.pid) throw new Error(`no pid for ${container} in ${namespace}/${pod}`);
      return info.info.pid;
    },
    inNetns: (argv, o = {}) => run("nsenter", [`--net=${netnsPath}`, "--", ...argv], o),
    kill: (name, signal = "SIGKILL") => processes.injectStop(name, signal),
    relaunch: (name, timeoutMs = 120_000) => processes.relaunchNamed(name, readiness[name], timeoutMs),
    restore: (name, timeoutMs = 120_000) => processes.restore(name, readiness[name], timeoutMs),
    stop,
  };
}

export type { Proc };

// `node.ts --cleanup <dir>`: undo what a node recorded in <dir>, e.g. after the harness was killed.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf("--cleanup");
  const dir = i >= 0 ? process.argv[i + 1] : undefined;
  if (!dir) {
    console.error("usage: node.ts --cleanup <node folder>");
    process.exit(2);
  }
  const problems = await undoHost(loadRecord(dir), (m) => console.error(`[node cleanup] ${m}`));
  for (const p of problems) console.error(`[node cleanup] could not undo: ${p}`);
  process.exit(problems.length > 0 ? 1 : 0);
}
