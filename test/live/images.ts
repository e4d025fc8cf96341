// The live node's images, built without Docker or a registry from the static binaries build.sh
// --node compiles (test/live/programs and CoreDNS): one layer each, the program, /etc/passwd and
// /etc/group, nothing else (no shell, no libc). The node imports them into containerd, so that
// no pod ever pulls.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { accountFiles, buildImage, type BuiltImage, type ImageSpec } from "../../image/oci.js";

/** The uid and gid every image runs as (distroless's nonroot), and the workspace profile's user. */
export const NONROOT = 65532;
const TAG = "live";

export const LIVE_IMAGES = {
  pause: `berth.local/live/pause:${TAG}`,
  coredns: `berth.local/live/coredns:${TAG}`,
  runtime: `berth.local/live/workspace-runtime:${TAG}`,
  checkout: `berth.local/live/checkout:${TAG}`,
  gitServer: `berth.local/live/git-server:${TAG}`,
  /** Berth's MCP gate, as `npm run image -- --gate` builds it. */
  mcpGate: `berth.local/live/mcp-gate:${TAG}`,
  /** Berth's evidence collector and export, as `npm run image -- --evidence` builds it. */
  evidence: `berth.local/live/evidence:${TAG}`,
} as const;

/**
 * Crossplane core's image, laid out as upstream's (its nix build): the binary at /bin/crossplane
 * as ENTRYPOINT, the CRDs and webhook configurations `crossplane core init` reads from /crds and
 * /webhookconfigurations, a writable /tmp and the nonroot user's home, uid 65532, nothing else.
 * Its binary and manifests are the control plane's own (build.sh), so the chart runs the same
 * Crossplane the conformance suite runs on the host.
 */
export function crossplaneImageSpec(cpBin: string, version: string): ImageSpec {
  const manifests = (dir: string, into: string) =>
    readdirSync(join(cpBin, dir))
      .filter((f) => f.endsWith(".yaml"))
      .sort()
      .map((f) => ({ path: `${into}/${f}`, content: readFileSync(join(cpBin, dir, f)) }));
  return {
    name: `berth.local/live/crossplane:v${version}`,
    layers: [
      {
        dirs: [
          { path: "/tmp", mode: 0o1777 },
          { path: "/home/nonroot", uid: NONROOT, gid: NONROOT },
        ],
        files: [
          { path: "/bin/crossplane", content: readFileSync(join(cpBin, "crossplane")), mode: 0o755 },
          ...manifests("crossplane-crds", "/crds"),
          ...manifests("crossplane-webhookconfigurations", "/webhookconfigurations"),
          ...accountFiles([{ name: "nonroot", uid: NONROOT, gid: NONROOT, home: "/home/nonroot" }]),
        ],
      },
    ],
    config: { User: `${NONROOT}:${NONROOT}`, Entrypoint: ["/bin/crossplane"], Env: ["HOME=/home/nonroot"] },
  };
}

// Where Go's crypto/x509 looks first on Debian-like systems.
const CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

function single(name: string, binary: string, program: string, config: ImageSpec["config"], caPEM?: string): ImageSpec {
  return {
    name,
    layers: [
      {
        files: [
          { path: `/${program}`, content: readFileSync(binary), mode: 0o755 },
          ...accountFiles([{ name: "nonroot", uid: NONROOT, gid: NONROOT, home: "/home/nonroot" }]),
          ...(caPEM ? [{ path: CA_BUNDLE, content: caPEM }] : []),
        ],
      },
    ],
    config: { User: `${NONROOT}:${NONROOT}`, Entrypoint: [`/${program}`], ...config },
  };
}

/**
 * Every live image, from the node's binary folder. The runtime image trusts `caPEM`, the
 * cluster's CA, for its probes of the API server; the checkout image trusts nothing of its own:
 * the profile's caBundle gives it the CA that signs the git fixture's certificate.
 */
export function liveImageSpecs(nodeBin: string, caPEM: string): ImageSpec[] {
  const program = (p: string) => join(nodeBin, "programs", p);
  return [
    // The sandbox's PID 1; 65535 as the Kubernetes pause image does.
    { ...single(LIVE_IMAGES.pause, program("pause"), "pause", {}), config: { User: "65535:65535", Entrypoint: ["/pause"] } },
    single(LIVE_IMAGES.coredns, join(nodeBin, "coredns"), "coredns", { Cmd: ["-conf", "/etc/coredns/Corefile"] }),
    single(LIVE_IMAGES.runtime, program("workspace-probe"), "workspace-probe", { Cmd: ["run"] }, caPEM),
    single(LIVE_IMAGES.checkout, program("checkout"), "checkout", {}),
    single(LIVE_IMAGES.gitServer, program("git-server"), "git-server", { ExposedPorts: { "8080/tcp": {} } }),
  ];
}

export async function buildLiveImages(nodeBin: string, caPEM: string): Promise<BuiltImage[]> {
  return Promise.all(liveImageSpecs(nodeBin, caPEM).map(buildImage));
}
