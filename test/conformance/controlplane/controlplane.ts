// A real Kubernetes control plane plus Crossplane core, run as plain processes
// (no container engine): etcd, kube-apiserver, kube-controller-manager and
// `crossplane core start --package-runtime=External`, all on loopback ports, with
// logs under a temporary run directory. Binaries come from build.sh.
//
//   const cp = await startControlPlane();
//   // cp.kubeconfig, cp.kube (REST client), cp.functionTLSDir, ...
//   await cp.registerFunction("function-berth", port); // after the function listens
//   await cp.stop();
//
// Only node builtins are used; certificates are made with the openssl CLI.
import { execFile as execFileCb } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { packageCapabilities } from "../../support/function-name.js";
import { condition, Kube } from "./kube.js";
import { ProcessSet, tail } from "./processes.js";

const execFile = promisify(execFileCb);
const here = dirname(fileURLToPath(import.meta.url));

export const CROSSPLANE_NAMESPACE = "crossplane-system";
export const CROSSPLANE_CA_SECRET = "crossplane-root-ca";
export const CROSSPLANE_CLIENT_SECRET = "crossplane-tls-client";

/** kube-controller-manager controllers started by default (no kubelet, so no pod-driven ones). */
export const DEFAULT_CONTROLLERS = [
  "namespace-controller",
  "serviceaccount-controller",
  "serviceaccount-token-controller",
  "garbage-collector-controller",
  "resourcequota-controller",
  "root-ca-certificate-publisher-controller",
  "clusterrole-aggregation-controller",
  // PVCs carry the kubernetes.io/pvc-protection finalizer: without this controller a deleted PVC
  // (and so its Namespace) stays Terminating forever. (Not the binder: nothing provisions here.)
  "persistentvolumeclaim-protection-controller",
  "persistentvolume-protection-controller",
];

export interface ControlPlaneOptions {
  /** Folder with the binaries (see build.sh). Default: $BERTH_CP_BIN, else the cache folder for versions.env. */
  binDir?: string;
  /** Run folder (certs, data, logs). Default: a new folder under the OS temp dir. */
  runDir?: string;
  /** Keep the run folder after stop() (logs). Default: $BERTH_CP_KEEP === "1". */
  keepRunDir?: boolean;
  /** Start Crossplane core too. Default true. */
  crossplane?: boolean;
  /** kube-controller-manager --controllers. Default DEFAULT_CONTROLLERS. */
  controllers?: string[];
  /** crossplane core start --poll-interval. Default "1m" (Crossplane's default). */
  pollInterval?: string;
  /** Extra args for `crossplane core start`. */
  crossplaneArgs?: string[];
  /** Verbose Crossplane logs (--debug). Default: $BERTH_CP_DEBUG === "1". */
  debug?: boolean;
  /** Progress messages. Default: stderr. */
  log?: (msg: string) => void;
  /** Time allowed for the whole start. Default 180 s. */
  timeoutMs?: number;
  /**
   * A real node will join (node.ts): the API server listens on this address (the host end of
   * the node's network, which its kubelet and pods can reach) instead of 127.0.0.1, publishes
   * it as the `kubernetes` Service's endpoint, authorizes kubelets with the Node authorizer and
   * NodeRestriction, and the controller manager also runs the controllers pods need.
   */
  node?: { address: string };
}

/** Controllers a cluster with a node needs on top of DEFAULT_CONTROLLERS: workloads, Services, volumes. */
export const NODE_CONTROLLERS = [
  "job-controller",
  "ttl-after-finished-controller",
  "replicaset-controller",
  "deployment-controller",
  "endpoints-controller",
  "endpointslice-controller",
  "endpointslice-mirroring-controller",
  "persistentvolume-binder-controller",
  "pod-garbage-collector-controller",
  // Lifts the not-ready taint kubelet registers its Node with, once the Node is Ready.
  "node-lifecycle-controller",
];

export interface ControlPlane {
  runDir: string;
  binDir: string;
  /** kubeconfig with the admin (system:masters) client certificate embedded. */
  kubeconfig: string;
  /** https://127.0.0.1:PORT */
  server: string;
  /** REST client as the admin user. */
  kube: Kube;
  /** Folder with ca.crt (cluster CA), admin.crt/admin.key and the other control-plane certificates. */
  pkiDir: string;
  /** Folder with tls.key, tls.crt (SAN localhost, 127.0.0.1; signed by Crossplane's CA) and ca.crt (Crossplane's CA):
   * give it to the function as --tls-server-certs-dir. Undefined without Crossplane. */
  functionTLSDir?: string;
  /** Crossplane's client certificate folder (ca.crt, tls.crt, tls.key): what core dials functions with. */
  crossplaneClientTLSDir?: string;
  /** Folder of per-process logs. */
  logDir: string;
  /** Crossplane's CRD folder from the build. */
  crdsDir: string;
  /** Crossplane core binary (also `crossplane internal render`). */
  crossplaneBinary: string;
  /** Crossplane CLI binary, if built. */
  crossplaneCLI?: string;
  /** Crossplane's CA (ca.crt, ca.key): what signs the certificates functions serve. Undefined without Crossplane. */
  crossplaneCADir?: string;
  /**
   * Makes Crossplane dial a function on localhost:port (or at the gRPC target given): a paused
   * Function and an Active, paused FunctionRevision labelled pkg.crossplane.io/package=name whose
   * status.endpoint is dns:///localhost:port (or the target) and status.capabilities holds
   * what Berth's package declares (composition and operation) unless told otherwise.
   */
  registerFunction(name: string, port: number | string, capabilities?: string[]): Promise<void>;
  /**
   * Starts a function process serving TLS with functionTLSDir on 127.0.0.1:<free port>
   * (appends `--address=127.0.0.1:PORT --tls-server-certs-dir=DIR` to args; cwd defaults to
   * process.cwd()), waits until it
   * accepts connections, and registers it under `name`. stop() kills it too.
   */
  startFunction(f: { name: string; command: string; args?: string[]; env?: NodeJS.ProcessEnv; port?: number; cwd?: string }): Promise<{ port: number; pid: number | undefined; logFile: string }>;
  /** Runs `hook` first when stop() is called (what was started on top of the control plane, newest first). */
  onStop(hook: () => Promise<void>): void;
  /** The pid of every process started here that still runs, by name (etcd, kube-apiserver, crossplane, function-<name>, ...). */
  pids(): Record<string, number>;
  /**
   * Kills a process started here by name and waits until it is gone: a fault, injected on
   * purpose. SIGKILL (the default) at once; SIGTERM as a restart would, then SIGKILL if it has
   * not exited after 10 s (the API server otherwise drains its watches for a minute). relaunch
   * starts it again as it was (same flags, ports, data) and waits until it is ready again: etcd
   * healthy, the API server's and Crossplane's /readyz, a function accepting connections,
   * anything else still running after a second.
   */
  kill(name: string, signal?: "SIGKILL" | "SIGTERM"): Promise<void>;
  relaunch(name: string, timeoutMs?: number): Promise<void>;
  /** Relaunches the process if a fault left it stopped (see relaunch); true if it had to. */
  restore(name: string, timeoutMs?: number): Promise<boolean>;
  /** Crossplane's Prometheus metrics (controller-runtime's reconcile counts), on 127.0.0.1. Undefined without Crossplane. */
  crossplaneMetricsPort?: number;
  /** Kills every process (SIGTERM, then SIGKILL after 10 s); removes the run folder unless kept. */
  stop(): Promise<void>;
}

/** Parses KEY=VALUE lines (no quoting, no expansion). */
export function readVersions(file = join(here, "versions.env")): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(\S*)\s*$/.exec(line);
    if (m && m[1] && m[2] !== undefined) out[m[1]] = m[2];
  }
  return out;
}

const BINARIES = ["etcd", "kube-apiserver", "kube-controller-manager", "crossplane"];

/** The binary folder: opts, $BERTH_CP_BIN, or the newest cache folder built for versions.env. */
export function findBinDir(explicit?: string): string {
  const complete = (d: string) => BINARIES.every((b) => existsSync(join(d, b)));
  const chosen = explicit ?? process.env.BERTH_CP_BIN;
  if (chosen) {
    if (!complete(chosen)) throw new Error(`${chosen} lacks some of ${BINARIES.join(", ")}; run test/conformance/controlplane/build.sh`);
    return chosen;
  }
  const v = readVersions();
  const prefix = `k8s${v.KUBERNETES_VERSION}-etcd${v.ETCD_VERSION}-xp${v.CROSSPLANE_VERSION}-cli${v.CROSSPLANE_CLI_VERSION}-`;
  const root = join(process.env.BERTH_CACHE ?? join(homedir(), ".cache", "berth"), "bin");
  const candidates = existsSync(root)
    ? readdirSync(root)
        .filter((d) => d.startsWith(prefix) && complete(join(root, d)))
        .map((d) => join(root, d))
        .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
    : [];
  if (!candidates[0]) throw new Error(`no control-plane binaries under ${root}/${prefix}*; run test/conformance/controlplane/build.sh`);
  return candidates[0];
}

/** True if something accepts TCP connections on 127.0.0.1:port. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: "127.0.0.1" });
    sock.once("connect", () => {
      sock.destroy();
      resolve(true);
    });
    sock.once("error", () => resolve(false));
  });
}

/** A free TCP port on 127.0.0.1 (bind to 0, read, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      s.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await execFile("openssl", args, { cwd });
  } catch (e: any) {
    throw new Error(`openssl ${args.join(" ")} failed: ${e?.stderr ?? e}`);
  }
}

/** A key and a certificate signed by caCrt/caKey. sans like "DNS:localhost,IP:127.0.0.1". */
export async function issueCert(
  dir: string,
  base: string,
  opts: { subject: string; caCrt: string; caKey: string; sans?: string; client?: boolean; server?: boolean; days?: number },
): Promise<{ crt: string; key: string }> {
  const key = join(dir, `${base}.key`);
  const csr = join(dir, `${base}.csr`);
  const crt = join(dir, `${base}.crt`);
  const ext = join(dir, `${base}.ext`);
  const usages = [opts.server ? "serverAuth" : "", opts.client ? "clientAuth" : ""].filter(Boolean).join(",");
  await writeFile(
    ext,
    [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      usages ? `extendedKeyUsage=${usages}` : "",
      opts.sans ? `subjectAltName=${opts.sans}` : "",
    ]
      .filter(Boolean)
      .join("\n") + "\n",
  );
  await openssl(["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", opts.subject], dir);
  await openssl(
    ["x509", "-req", "-in", csr, "-CA", opts.caCrt, "-CAkey", opts.caKey, "-CAcreateserial", "-out", crt, "-days", String(opts.days ?? 365), "-sha256", "-extfile", ext],
    dir,
  );
  await rm(csr, { force: true });
  await rm(ext, { force: true });
  return { crt, key };
}

async function makePKI(dir: string, address: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await openssl(
    ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "3650", "-subj", "/CN=berth-conformance-ca",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"],
    dir,
  );
  const ca = { caCrt: join(dir, "ca.crt"), caKey: join(dir, "ca.key") };
  await issueCert(dir, "apiserver", {
    ...ca,
    subject: "/CN=kube-apiserver",
    server: true,
    sans: `DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:127.0.0.1,IP:10.0.0.1${address === "127.0.0.1" ? "" : `,IP:${address}`}`,
  });
  await issueCert(dir, "apiserver-kubelet-client", { ...ca, subject: "/O=system:masters/CN=kube-apiserver-kubelet-client", client: true });
  await issueCert(dir, "admin", { ...ca, subject: "/O=system:masters/CN=berth-admin", client: true });
  await issueCert(dir, "controller-manager", { ...ca, subject: "/CN=system:kube-controller-manager", client: true });
  await openssl(["genrsa", "-out", "sa.key", "2048"], dir);
  await openssl(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
}

export function kubeconfigYAML(server: string, caPEM: string, certPEM: string, keyPEM: string, user: string): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: berth",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${b64(caPEM)}`,
    "contexts:",
    "- name: berth",
    "  context:",
    "    cluster: berth",
    `    user: ${user}`,
    "current-context: berth",
    "users:",
    `- name: ${user}`,
    "  user:",
    `    client-certificate-data: ${b64(certPEM)}`,
    `    client-key-data: ${b64(keyPEM)}`,
    "",
  ].join("\n");
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? ((m: string) => process.stderr.write(`[controlplane] ${m}\n`));
  const binDir = findBinDir(opts.binDir);
  const runDir = opts.runDir ?? (await mkdtemp(join(tmpdir(), "berth-cp-")));
  const keep = opts.keepRunDir ?? process.env.BERTH_CP_KEEP === "1";
  const debug = opts.debug ?? process.env.BERTH_CP_DEBUG === "1";
  const deadline = Date.now() + (opts.timeoutMs ?? 180_000);
  const remaining = () => Math.max(1000, deadline - Date.now());
  const pkiDir = join(runDir, "pki");
  const logDir = join(runDir, "logs");
  await mkdir(logDir, { recursive: true });
  let stopped = false;
  log(`binaries ${binDir}; run dir ${runDir}`);
  const processes = new ProcessSet({ runDir, logDir, pidFile: "pids", log });
  const launch = processes.launch.bind(processes);
  const beforeStop: (() => Promise<void>)[] = [];

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // What was started on top of the control plane (a node) goes first, newest first.
    for (const hook of beforeStop.reverse()) {
      try {
        await hook();
      } catch (e) {
        log(`stopping: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    await processes.stop();
    if (!keep) await rm(runDir, { recursive: true, force: true });
    else log(`kept ${runDir}`);
  };

  const poll = (what: string, p: Parameters<ProcessSet["poll"]>[1], fn: () => Promise<boolean>, ms = remaining()) => processes.poll(what, p, fn, ms);
  /** What "ready" means for each process, by name, for relaunch. */
  const readiness = new Map<string, () => Promise<boolean>>();

  try {
    // Certificates.
    let t = Date.now();
    await makePKI(pkiDir, opts.node?.address ?? "127.0.0.1");
    log(`certificates ready (${Date.now() - t} ms)`);
    const caPEM = await readFile(join(pkiDir, "ca.crt"), "utf8");
    const adminCrt = await readFile(join(pkiDir, "admin.crt"), "utf8");
    const adminKey = await readFile(join(pkiDir, "admin.key"), "utf8");

    // etcd.
    t = Date.now();
    const [etcdClient, etcdPeer, apiPort] = [await freePort(), await freePort(), await freePort()];
    const etcdURL = `http://127.0.0.1:${etcdClient}`;
    const etcd = launch("etcd", join(binDir, "etcd"), [
      "--name=berth",
      `--data-dir=${join(runDir, "etcd")}`,
      `--listen-client-urls=${etcdURL}`,
      `--advertise-client-urls=${etcdURL}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=berth=http://127.0.0.1:${etcdPeer}`,
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ]);
    readiness.set("etcd", async () => {
      const r = await fetch(`${etcdURL}/health`);
      return r.ok && ((await r.json()) as { health?: string }).health === "true";
    });
    await poll("etcd /health", etcd, readiness.get("etcd")!);
    log(`etcd ready on ${etcdURL} (${Date.now() - t} ms)`);

    // kube-apiserver.
    t = Date.now();
    const address = opts.node?.address ?? "127.0.0.1";
    const server = `https://${address}:${apiPort}`;
    const apiserver = launch("kube-apiserver", join(binDir, "kube-apiserver"), [
      `--etcd-servers=${etcdURL}`,
      `--cert-dir=${join(runDir, "apiserver-certs")}`,
      `--tls-cert-file=${join(pkiDir, "apiserver.crt")}`,
      `--tls-private-key-file=${join(pkiDir, "apiserver.key")}`,
      `--client-ca-file=${join(pkiDir, "ca.crt")}`,
      `--secure-port=${apiPort}`,
      `--bind-address=${address}`,
      `--advertise-address=${address}`,
      ...(opts.node
        ? [
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction",
            // logs and exec reach the kubelet as a client the kubelet's webhook authorizes
            `--kubelet-client-certificate=${join(pkiDir, "apiserver-kubelet-client.crt")}`,
            `--kubelet-client-key=${join(pkiDir, "apiserver-kubelet-client.key")}`,
            // The node's name is no host name the API server can resolve: reach the kubelet
            // (pods/log, exec) at the address it registers, its --node-ip.
            "--kubelet-preferred-address-types=InternalIP,Hostname",
          ]
        : ["--authorization-mode=RBAC"]),
      "--service-cluster-ip-range=10.0.0.0/24",
      "--allow-privileged=true",
      `--service-account-issuer=${server}`,
      `--service-account-key-file=${join(pkiDir, "sa.pub")}`,
      `--service-account-signing-key-file=${join(pkiDir, "sa.key")}`,
      // With a node, pods reach the API server through the kubernetes Service, whose endpoint
      // the API server keeps (lease); without one, nothing needs it.
      `--endpoint-reconciler-type=${opts.node ? "lease" : "none"}`,
      "--enable-priority-and-fairness=false",
      "--v=1",
    ]);
    const kube = new Kube({ server, ca: caPEM, cert: adminCrt, key: adminKey });
    readiness.set("kube-apiserver", async () => (await kube.raw("GET", "/readyz", undefined, undefined, 5000)).status === 200);
    await poll("kube-apiserver /readyz", apiserver, readiness.get("kube-apiserver")!);
    log(`kube-apiserver ready on ${server} (${Date.now() - t} ms)`);

    const kubeconfig = join(runDir, "kubeconfig");
    await writeFile(kubeconfig, kubeconfigYAML(server, caPEM, adminCrt, adminKey, "berth-admin"), { mode: 0o600 });
    const kcmKubeconfig = join(runDir, "controller-manager.kubeconfig");
    await writeFile(
      kcmKubeconfig,
      kubeconfigYAML(server, caPEM, await readFile(join(pkiDir, "controller-manager.crt"), "utf8"), await readFile(join(pkiDir, "controller-manager.key"), "utf8"), "kube-controller-manager"),
      { mode: 0o600 },
    );

    // kube-controller-manager.
    t = Date.now();
    const kcm = launch("kube-controller-manager", join(binDir, "kube-controller-manager"), [
      `--kubeconfig=${kcmKubeconfig}`,
      `--authentication-kubeconfig=${kcmKubeconfig}`,
      `--authorization-kubeconfig=${kcmKubeconfig}`,
      "--leader-elect=false",
      `--controllers=${(opts.controllers ?? [...DEFAULT_CONTROLLERS, ...(opts.node ? NODE_CONTROLLERS : [])]).join(",")}`,
      `--service-account-private-key-file=${join(pkiDir, "sa.key")}`,
      `--root-ca-file=${join(pkiDir, "ca.crt")}`,
      "--use-service-account-credentials=true", // each controller acts as its own ServiceAccount (its bootstrap RBAC role), as in a real cluster
      "--bind-address=127.0.0.1",
      `--secure-port=${await freePort()}`,
      `--cert-dir=${join(runDir, "kcm-certs")}`,
      "--v=1",
    ]);
    // The serviceaccount controller creating "default" in "default" shows the manager is working.
    await poll("kube-controller-manager (default ServiceAccount)", kcm, async () => (await kube.get("v1", "ServiceAccount", "default", "default")) !== undefined);
    log(`kube-controller-manager ready (${Date.now() - t} ms)`);

    const crdsDir = join(binDir, "crossplane-crds");
    const crossplaneBinary = join(binDir, "crossplane");
    const cliPath = join(binDir, "crossplane-cli");
    const cp: ControlPlane = {
      runDir,
      binDir,
      kubeconfig,
      server,
      kube,
      pkiDir,
      logDir,
      crdsDir,
      crossplaneBinary,
      ...(existsSync(cliPath) ? { crossplaneCLI: cliPath } : {}),
      registerFunction: (name, port, capabilities) => registerFunction(kube, name, port, capabilities),
      onStop: (hook) => void beforeStop.push(hook),
      pids: () => Object.fromEntries(processes.procs.filter((p) => p.exitCode === undefined && p.child.pid).map((p) => [p.name, p.child.pid!])),
      kill: (name, signal = "SIGKILL") => processes.injectStop(name, signal),
      relaunch: (name, timeoutMs = 120_000) => processes.relaunchNamed(name, readiness.get(name), timeoutMs),
      restore: (name, timeoutMs = 120_000) => processes.restore(name, readiness.get(name), timeoutMs),
      startFunction: async (f) => {
        if (!cp.functionTLSDir) throw new Error("startFunction needs Crossplane (its CA signs the function's certificate)");
        const port = f.port ?? (await freePort());
        const p = launch(`function-${f.name}`, f.command, [...(f.args ?? []), `--address=127.0.0.1:${port}`, `--tls-server-certs-dir=${cp.functionTLSDir}`], f.env, f.cwd ?? process.cwd());
        readiness.set(p.name, () => canConnect(port));
        await poll(`${f.name} listening on 127.0.0.1:${port}`, p, () => canConnect(port), 60_000);
        await registerFunction(kube, f.name, port);
        log(`function ${f.name} on 127.0.0.1:${port} registered`);
        return { port, pid: p.child.pid, logFile: p.logFile };
      },
      stop,
    };
    if (opts.crossplane === false) return cp;

    // Crossplane core: init (CRDs, CA and client certificate Secrets), then start.
    t = Date.now();
    const xpEnv = { KUBECONFIG: kubeconfig, POD_NAMESPACE: CROSSPLANE_NAMESPACE };
    await kube.call("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: CROSSPLANE_NAMESPACE } }, undefined, [409]);
    // Kong derives odd flag names from these fields (--cr-ds-path, --tlsca-secret-name), so use
    // the environment variables core documents for them instead. init applies the CRDs and then
    // immediately uses them (Lock), which fails until discovery has caught up: in a cluster the
    // init container is simply restarted, so retry here.
    const initEnv = {
      ...xpEnv,
      CRDS_PATH: crdsDir,
      ENABLE_WEBHOOKS: "false",
      TLS_CA_SECRET_NAME: CROSSPLANE_CA_SECRET,
      TLS_CLIENT_SECRET_NAME: CROSSPLANE_CLIENT_SECRET,
    };
    for (let attempt = 1; ; attempt++) {
      const init = launch(`crossplane-init-${attempt}`, crossplaneBinary, ["core", "init"], initEnv);
      // The deadline's timer is cleared once init exits: left running it held every process that
      // started a control plane open until the start-up deadline, minutes after its work was done.
      let initTimer: NodeJS.Timeout | undefined;
      const code = await Promise.race([init.exited, new Promise<"timeout">((r) => (initTimer = setTimeout(() => r("timeout"), remaining())))]);
      clearTimeout(initTimer);
      if (code === 0) break;
      if (attempt >= 10 || code === "timeout") throw new Error(`crossplane core init failed (${code}):\n${tail(init.logFile)}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
    log(`crossplane core init done (${Date.now() - t} ms)`);

    // Crossplane's CA (tls.crt/tls.key of the CA Secret) and its client certificate.
    const secret = async (n: string) => {
      const s = await kube.get<{ data: Record<string, string> }>("v1", "Secret", n, CROSSPLANE_NAMESPACE);
      if (!s?.data) throw new Error(`Secret ${CROSSPLANE_NAMESPACE}/${n} missing after crossplane core init`);
      return (k: string) => {
        const v = s.data[k];
        if (!v) throw new Error(`Secret ${n} has no ${k}`);
        return Buffer.from(v, "base64");
      };
    };
    const caSecret = await secret(CROSSPLANE_CA_SECRET);
    const clientSecret = await secret(CROSSPLANE_CLIENT_SECRET);
    const xpCADir = join(runDir, "crossplane-ca");
    const clientDir = join(runDir, "crossplane-client-tls");
    const fnDir = join(runDir, "function-tls");
    for (const d of [xpCADir, clientDir, fnDir]) await mkdir(d, { recursive: true, mode: 0o700 });
    await writeFile(join(xpCADir, "ca.crt"), caSecret("tls.crt"));
    await writeFile(join(xpCADir, "ca.key"), caSecret("tls.key"), { mode: 0o600 });
    for (const k of ["ca.crt", "tls.crt", "tls.key"]) await writeFile(join(clientDir, k), clientSecret(k), { mode: 0o600 });
    // The function's serving certificate: same CA, SAN localhost/127.0.0.1 (Crossplane dials dns:///localhost:PORT).
    await issueCert(fnDir, "tls", {
      subject: "/CN=function-berth",
      caCrt: join(xpCADir, "ca.crt"),
      caKey: join(xpCADir, "ca.key"),
      sans: "DNS:localhost,IP:127.0.0.1",
      server: true,
      client: true,
    });
    await writeFile(join(fnDir, "ca.crt"), caSecret("tls.crt"));
    cp.functionTLSDir = fnDir;
    cp.crossplaneCADir = xpCADir;
    cp.crossplaneClientTLSDir = clientDir;

    t = Date.now();
    const health = await freePort();
    cp.crossplaneMetricsPort = await freePort();
    const core = launch("crossplane", crossplaneBinary, [
      "core",
      "start",
      "--enable-webhooks=false",
      // Berth's lifecycle rules run as a CronOperation (alpha), as install/install.sh enables them.
      "--enable-operations",
      "--package-runtime=External",
      `--namespace=${CROSSPLANE_NAMESPACE}`,
      `--xpkg-cache-dir=${join(runDir, "xpkg-cache")}`,
      `--metrics-port=${cp.crossplaneMetricsPort}`,
      `--health-probe-port=${health}`,
      `--poll-interval=${opts.pollInterval ?? "1m"}`,
      ...(debug ? ["--debug"] : []),
      ...(opts.crossplaneArgs ?? []),
    ], { ...xpEnv, TLS_CLIENT_CERTS_DIR: clientDir });
    readiness.set("crossplane", async () => (await fetch(`http://127.0.0.1:${health}/readyz`)).ok);
    await poll("crossplane /readyz", core, readiness.get("crossplane")!);
    log(`crossplane core ready (${Date.now() - t} ms)`);
    return cp;
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * Points Crossplane at a function process on localhost:port. No package registry is involved: the
 * Function and its FunctionRevision carry crossplane.io/paused=true so the package manager never tries
 * to pull the (non-existent) image, and the revision's status is patched by hand the way a package
 * runtime would.
 */
export async function registerFunction(kube: Kube, name: string, port: number | string, capabilities = packageCapabilities()): Promise<void> {
  const image = `berth.invalid/local/${name}:dev`;
  const paused = { "crossplane.io/paused": "true" };
  const fn = await kube.apply({
    apiVersion: "pkg.crossplane.io/v1",
    kind: "Function",
    metadata: { name, annotations: paused },
    spec: { package: image, packagePullPolicy: "Never", skipDependencyResolution: true, ignoreCrossplaneConstraints: true },
  });
  const revName = `${name}-local`;
  await kube.apply({
    apiVersion: "pkg.crossplane.io/v1",
    kind: "FunctionRevision",
    metadata: {
      name: revName,
      labels: { "pkg.crossplane.io/package": name },
      annotations: paused,
      ownerReferences: [
        { apiVersion: "pkg.crossplane.io/v1", kind: "Function", name, uid: (fn as any).metadata.uid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: { desiredState: "Active", image, revision: 1, packagePullPolicy: "Never", skipDependencyResolution: true, ignoreCrossplaneConstraints: true },
  });
  const endpoint = typeof port === "number" ? `dns:///localhost:${port}` : port;
  // The paused reconciler rewrites status (its ReconcilePaused condition) with optimistic
  // concurrency, so re-patch until the endpoint sticks.
  await kube.waitFor(`FunctionRevision ${revName} status.endpoint`, async () => {
    const rev = await kube.get("pkg.crossplane.io/v1", "FunctionRevision", revName);
    if (rev?.status?.endpoint === endpoint && (rev.status.capabilities ?? []).join() === capabilities.join() && condition(rev, "Synced")) return true;
    await kube.mergePatch("pkg.crossplane.io/v1", "FunctionRevision", revName, { status: { endpoint, capabilities } }, undefined, "status");
    return false;
  }, 30_000, 300);
}
