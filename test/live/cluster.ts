// The live cluster: the conformance control plane with a real worker node joined to it
// (test/conformance/controlplane/node.ts), cluster DNS as a real CoreDNS pod, the harness's
// loop-device volume provisioner, and Crossplane and Berth installed on it as operators install
// them (test/live/operator-install.ts): Crossplane from its Helm chart as pods on the node,
// Berth's packages pulled by Crossplane's package manager from a registry the harness runs.
//
//   const live = await startLiveCluster();     // needs root, build.sh --node
//   ... live.kubeconfig, live.node.exec(...) ...
//   await live.stop();                         // and the machine is as it was
//
// A harness that was killed leaves a run folder behind; the next start undoes it first
// (cleanupLeftovers), so a second run starts from the same state.
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readVersions, startControlPlane, type ControlPlane } from "../conformance/controlplane/controlplane.js";
import { startLoopProvisioner, LOOP_PROVISIONER, type LoopProvisioner } from "../conformance/controlplane/loop-provisioner.js";
import { loadRecord, recordFile, run, undoHost } from "../conformance/controlplane/node-host.js";
import { createNodeNetwork, findNodeBinDir, nodePreflight, startNode, type Node, type NodeNetwork } from "../conformance/controlplane/node.js";
import { Cluster, installUpstreamCRDs } from "../conformance/setup.js";
import { upstreamCRDs } from "../support/upstream-crds.js";
import { buildImage } from "../../image/oci.js";
import { buildEvidenceImage, buildGateImage, EVIDENCE, GATE, packageVersion } from "../../image/build.js";
import { agentSandboxImageSpec, AGENT_SANDBOX_VERSION, installAgentSandbox } from "./agent-sandbox.js";
import { buildLiveImages, crossplaneImageSpec, LIVE_IMAGES } from "./images.js";
import { installBerth, publishRelease, type FunctionPackage } from "./operator-install.js";
import { type Registry, startRegistry } from "./registry.js";

/** The StorageClass whose volumes the loop provisioner makes: exactly the requested size, enforced on write. */
export const LOOP_STORAGE_CLASS = "loop-ext4";
const RUN_DIR_PREFIX = "berth-live-";

export interface LiveCluster {
  cp: ControlPlane;
  node: Node;
  network: NodeNetwork;
  provisioner: LoopProvisioner;
  /** The release installed: the Function package the cluster runs. */
  release: FunctionPackage;
  /** The Helm install.sh runs (helm-<HELM_VERSION>). */
  helm: string;
  /** Runs install/install.sh again, with the settings of the first install; its log. */
  reinstall(): Promise<string>;
  /** Builds and pushes both packages of another release (the same bundle), for upgrades. */
  publishRelease(version: string): Promise<FunctionPackage>;
  kubeconfig: string;
  cluster: Cluster;
  /** The API server's address and port, as pods reach it after kube-proxy's DNAT. */
  apiServer: { host: string; port: number };
  /** The harness's OCI registry (on hostIP, its certificate signed by the cluster CA): packages, and workspaces' evidence. */
  registry: Registry;
  stop(): Promise<void>;
}

/**
 * Undoes what an earlier harness left when it was killed before it could stop: every run
 * folder with a node record under the temp dir, and any node network namespace nothing records.
 */
export async function cleanupLeftovers(log: (m: string) => void): Promise<void> {
  for (const d of readdirSync(tmpdir()).filter((d) => d.startsWith(RUN_DIR_PREFIX))) {
    const runDir = join(tmpdir(), d);
    const nodeDir = join(runDir, "node");
    if (existsSync(recordFile(nodeDir))) {
      log(`undoing the node an earlier run left in ${runDir}`);
      const problems = await undoHost(loadRecord(nodeDir), log);
      if (problems.length > 0) throw new Error(`cannot undo the earlier run in ${runDir}:\n${problems.join("\n")}`);
    }
    rmSync(runDir, { recursive: true, force: true });
  }
  const { stdout } = await run("ip", ["netns", "list"], { allowFailure: true });
  for (const ns of stdout.split("\n").map((l) => l.split(" ")[0]!).filter((n) => n.startsWith("berth-node-"))) {
    log(`deleting network namespace ${ns} left by an earlier run`);
    await run("ip", ["netns", "del", ns], { allowFailure: true });
  }
}

/** Cluster DNS: CoreDNS as a real pod, `k8s-app: kube-dns` in kube-system, serving the cluster zone only (no upstream). */
function corednsManifests(dnsIP: string): Record<string, any>[] {
  const labels = { "k8s-app": "kube-dns" };
  const corefile = [
    ".:53 {",
    "    errors",
    "    health :8080",
    "    ready :8181",
    "    kubernetes cluster.local in-addr.arpa ip6.arpa {",
    "        pods insecure",
    "        fallthrough in-addr.arpa ip6.arpa",
    "    }",
    "    cache 30",
    "}",
    "",
  ].join("\n");
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: "kube-system" } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        { apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: "kube-system" }],
    },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "coredns", namespace: "kube-system" }, data: { Corefile: corefile } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "coredns", namespace: "kube-system", labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: "coredns",
            securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
            containers: [
              {
                name: "coredns",
                image: LIVE_IMAGES.coredns,
                imagePullPolicy: "Never",
                args: ["-conf", "/etc/coredns/Corefile"],
                ports: [
                  { name: "dns", containerPort: 53, protocol: "UDP" },
                  { name: "dns-tcp", containerPort: 53, protocol: "TCP" },
                ],
                readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
                securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
                volumeMounts: [{ name: "config", mountPath: "/etc/coredns", readOnly: true }],
              },
            ],
            volumes: [{ name: "config", configMap: { name: "coredns" } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: "kube-system", labels },
      spec: {
        clusterIP: dnsIP,
        selector: labels,
        ports: [
          { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
          { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
        ],
      },
    },
  ];
}

export async function startLiveCluster(opts: { log?: (m: string) => void } = {}): Promise<LiveCluster> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`[live ${new Date().toISOString().slice(11, 19)}] ${m}\n`));
  // Everything the start needs, checked before anything is started.
  const upstream = await upstreamCRDs();
  if (!upstream.available) throw new Error(`the live suite installs the upstream CRDs: ${upstream.reason}`);
  await nodePreflight();
  const nodeBin = findNodeBinDir();
  await cleanupLeftovers(log);
  let t: number;
  const runDir = mkdtempSync(join(tmpdir(), RUN_DIR_PREFIX));
  // Pods in a user namespace run as host uids that are not root: runc, as such a uid, must be
  // able to traverse the path to containerd's state folder under here (mkdtemp makes it 0700).
  chmodSync(runDir, 0o711);
  const nodeDir = join(runDir, "node");
  let network: NodeNetwork;
  try {
    network = await createNodeNetwork(nodeDir, log);
  } catch (e) {
    if (existsSync(recordFile(nodeDir))) await undoHost(loadRecord(nodeDir), log);
    rmSync(runDir, { recursive: true, force: true });
    throw e;
  }

  let cp: ControlPlane;
  try {
    t = Date.now();
    // No Crossplane on the host: the chart runs it on the node.
    cp = await startControlPlane({ runDir, node: { address: network.hostIP }, crossplane: false, log });
    log(`control plane up in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  } catch (e) {
    await undoHost(loadRecord(nodeDir), log);
    rmSync(runDir, { recursive: true, force: true });
    throw e;
  }

  let node: Node | undefined;
  let provisioner: LoopProvisioner | undefined;
  // Runs before the control plane stops, after the node's own stop (registered later, so first):
  // undoes the node's host changes if the node never got as far as registering its own stop.
  cp.onStop(async () => {
    if (node) return;
    const problems = await undoHost(loadRecord(nodeDir), log);
    if (problems.length > 0) log(`could not undo: ${problems.join("; ")}`);
  });
  const stop = async () => {
    await provisioner?.stop();
    await cp.stop();
  };
  try {
    // The registry Berth's packages are published to, with a certificate the cluster CA signs.
    t = Date.now();
    const registry = await startRegistry({ dir: join(runDir, "registry"), address: network.hostIP, binDir: nodeBin, ca: { caCrt: join(cp.pkiDir, "ca.crt"), caKey: join(cp.pkiDir, "ca.key") }, log });
    cp.onStop(() => registry.stop());
    const release = await publishRelease(cp, registry, `v${packageVersion()}`, join(runDir, "packages"));
    log(`Berth ${release.version} published to ${registry.host} (function ${release.digest}) in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    // The images trust the cluster CA, which exists once the control plane does.
    t = Date.now();
    const crossplaneImage = await buildImage(crossplaneImageSpec(cp.binDir, readVersions().CROSSPLANE_VERSION!));
    // The MCP gate's image is the one `npm run image -- --gate` builds, from a fresh bundle.
    await run("npm", ["run", "-s", GATE.bundleScript]);
    const gateImage = await buildGateImage({ name: LIVE_IMAGES.mcpGate });
    // So is the evidence collector's and export's, with `npm run image -- --evidence`.
    await run("npm", ["run", "-s", EVIDENCE.bundleScript]);
    const evidenceImage = await buildEvidenceImage({ name: LIVE_IMAGES.evidence });
    const images = [
      ...(await buildLiveImages(nodeBin, readFileSync(join(cp.pkiDir, "ca.crt"), "utf8"))),
      crossplaneImage,
      await buildImage(agentSandboxImageSpec(nodeBin)),
      gateImage,
      evidenceImage,
    ];
    log(`built ${images.length} images in ${Date.now() - t} ms: ${images.map((i) => `${i.name} ${(i.archive.length / 1e6).toFixed(1)} MB`).join(", ")}`);
    t = Date.now();
    node = await startNode(cp, network, { images, pauseImage: LIVE_IMAGES.pause, binDir: nodeBin, registries: [registry], log });
    log(`node joined in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    // The API server (on the host) calls Crossplane's webhooks at their Service's ClusterIP: the
    // service range goes into the node's namespace, where kube-proxy's rules take it to the pod.
    // The route is on the node's veth, so it goes with it.
    await run("ip", ["route", "replace", network.serviceCIDR, "via", network.nodeIP, "dev", network.hostLink]);
    cp.onStop(async () => {
      await provisioner?.stop();
    });
    provisioner = startLoopProvisioner(cp.kube, node.dir, node.name, log);

    t = Date.now();
    const cluster = new Cluster(cp.kubeconfig);
    await cluster.apply({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: { name: LOOP_STORAGE_CLASS },
      provisioner: LOOP_PROVISIONER,
      reclaimPolicy: "Delete",
      volumeBindingMode: "WaitForFirstConsumer",
      allowVolumeExpansion: false,
    } as any);
    for (const o of corednsManifests(network.dnsIP)) await cluster.apply(o as any);
    // Crossplane reaches function pods by their Service's name.
    await cp.kube.waitFor(
      "CoreDNS ready",
      async () => {
        const d = await cp.kube.get("apps/v1", "Deployment", "coredns", "kube-system");
        return (d?.status?.readyReplicas ?? 0) >= 1;
      },
      120_000,
    );
    // What the workspaces' runtimes need (agent-sandbox, Agent Substrate, snapshots) comes first,
    // and agent-sandbox's controller as its release deploys it (Substrate and the CSI snapshotter
    // are not served: their objects stay inert here).
    await installUpstreamCRDs(cluster, log);
    await installAgentSandbox(cluster, nodeBin);
    log(`cluster DNS, storage, the upstream CRDs and the agent-sandbox controller ${AGENT_SANDBOX_VERSION} ready in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    t = Date.now();
    const helm = join(nodeBin, `helm-${readVersions().HELM_VERSION}`);
    const install = () => installBerth(cp, registry, { helm, crossplaneImage: crossplaneImage.name, release });
    await install();
    log(`Crossplane (Helm) and Berth ${release.version} (from ${registry.host}) installed in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const server = new URL(cp.server);
    return {
      cp,
      node,
      network,
      provisioner,
      release,
      helm,
      reinstall: install,
      publishRelease: (version) => publishRelease(cp, registry, version, join(runDir, "packages")),
      kubeconfig: cp.kubeconfig,
      cluster,
      apiServer: { host: server.hostname, port: Number(server.port) },
      registry,
      stop,
    };
  } catch (e) {
    log(`start failed: ${e instanceof Error ? e.message : String(e)}; logs in ${cp.logDir} (kept: BERTH_CP_KEEP=1)`);
    await stop();
    throw e;
  }
}
