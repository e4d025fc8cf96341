// The OCI registry Berth's packages are pulled from on the live node: CNCF distribution
// (build.sh --node), serving https with a certificate the cluster CA signs, on the host end of
// the node's veth pair (an address the harness made, which the node reaches and nothing else
// does), storing blobs under the run folder. Packages are pushed with `crossplane xpkg push`;
// containerd trusts the CA for this host only (NodeOptions.registries).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { issueCert, readVersions } from "../conformance/controlplane/controlplane.js";
import { ProcessSet } from "../conformance/controlplane/processes.js";

export const REGISTRY_PORT = 5000;

export interface Registry {
  /** host:port, as image references name it. */
  host: string;
  /** The CA that signs its certificate (the cluster CA). */
  caFile: string;
  /** The digest of the manifest a reference resolves to, asked of the registry itself. */
  manifestDigest(repository: string, tag: string): Promise<string>;
  /** GET of a registry API path, as a client pulling would: a manifest (by tag or digest) or a blob. */
  pull(path: string, accept?: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>;
  stop(): Promise<void>;
}

export async function startRegistry(opts: { dir: string; address: string; binDir: string; ca: { caCrt: string; caKey: string }; log: (m: string) => void }): Promise<Registry> {
  const { dir, address, log } = opts;
  const binary = join(opts.binDir, `registry-${readVersions().DISTRIBUTION_VERSION}`);
  if (!existsSync(binary)) throw new Error(`${binary} is missing: run test/conformance/controlplane/build.sh --node`);
  for (const d of ["data", "pki", "logs"]) mkdirSync(join(dir, d), { recursive: true });
  const host = `${address}:${REGISTRY_PORT}`;
  const cert = await issueCert(join(dir, "pki"), "registry", { ...opts.ca, subject: "/CN=berth-live-registry", sans: `IP:${address}`, server: true });
  const config = join(dir, "config.yml");
  writeFileSync(
    config,
    JSON.stringify({
      version: 0.1,
      log: { level: "info", accesslog: { disabled: false } },
      storage: { filesystem: { rootdirectory: join(dir, "data") }, delete: { enabled: true } },
      http: { addr: host, tls: { certificate: cert.crt, key: cert.key } },
    }),
  );
  const processes = new ProcessSet({ runDir: dir, logDir: join(dir, "logs"), pidFile: "pids", log });
  const proc = processes.launch("registry", binary, ["serve", config], { OTEL_TRACES_EXPORTER: "none" });

  const get = (path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>((resolve, reject) => {
      const req = request({ host: address, port: REGISTRY_PORT, path, method: "HEAD", ca: readFileSync(opts.ca.caCrt), headers, timeout: 5000 }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, headers: res.headers });
      });
      req.on("error", reject);
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.end();
    });
  await processes.poll("the registry", proc, async () => (await get("/v2/").catch(() => ({ status: 0 }))).status === 200, 30_000);
  log(`registry on https://${host} (data ${join(dir, "data")})`);
  return {
    host,
    caFile: opts.ca.caCrt,
    manifestDigest: async (repository, tag) => {
      const accept = ["application/vnd.oci.image.manifest.v1+json", "application/vnd.docker.distribution.manifest.v2+json", "application/vnd.oci.image.index.v1+json"].join(", ");
      const r = await get(`/v2/${repository}/manifests/${tag}`, { Accept: accept });
      const digest = r.headers["docker-content-digest"];
      if (r.status !== 200 || typeof digest !== "string") throw new Error(`registry ${host}: ${repository}:${tag} answered ${r.status}`);
      return digest;
    },
    pull: (path, accept) =>
      new Promise((resolve, reject) => {
        const req = request({ host: address, port: REGISTRY_PORT, path, method: "GET", ca: readFileSync(opts.ca.caCrt), headers: accept ? { Accept: accept } : {}, timeout: 10_000 }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on("error", reject);
        });
        req.on("error", reject);
        req.on("timeout", () => req.destroy(new Error("timeout")));
        req.end();
      }),
    stop: () => processes.stop(),
  };
}
