// install/install.sh against fake `kubectl` and `helm` programs on PATH: small shell scripts that
// log their arguments and answer what the case gives them. What is proven: an existing Crossplane
// is left alone (helm never runs) when it is what Berth needs, and install.sh stops with the fix
// when it is not; Crossplane is installed with Helm only where there is none, and upgraded only
// when asked, keeping its values; the operators group reaches the applied params. The real
// kubectl's answers to the same queries are proven by the live tier (test/live/reinstall.test.ts).
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { tempDirs } from "../support/temp.js";

const tempDir = tempDirs();

const SCRIPT = "install/install.sh";
const CROSSPLANE_VERSION = /^CROSSPLANE_VERSION=(\S+)$/m.exec(readFileSync("test/conformance/controlplane/versions.env", "utf8"))![1]!;
const SEP = "\x1f";

// Each call is one line of arguments joined by SEP; what `apply -f -` reads is kept in applied.yaml.
const FAKE_KUBECTL = `#!/usr/bin/env bash
d="$FAKE_DIR"
{ printf '%s\\x1f' "$@"; echo; } >>"$d/kubectl.log"
all=" $* "
case "$all" in
  *" auth whoami "*) [ -f "$d/whoami" ] && cat "$d/whoami" || { echo "error: whoami refused" >&2; exit 1; } ;;
  *" get deployment crossplane "*) [ -f "$d/deployment" ] && cat "$d/deployment"; true ;;
  *" get crd functions.pkg.crossplane.io "*) [ -f "$d/crds" ] && echo customresourcedefinition.apiextensions.k8s.io/functions.pkg.crossplane.io; true ;;
  *" get configmap berth-admission "*) [ -f "$d/group" ] && printf '%s' "$(cat "$d/group")"; true ;;
  *" --dry-run=client "*) echo "# $*" ;;
  *" apply "*)
    if [[ "$all" == *" -f - "* ]]; then { cat; echo "---"; } >>"$d/applied.yaml"; else cat >/dev/null || true; fi ;;
  *) ;;
esac
`;
const FAKE_HELM = `#!/usr/bin/env bash
d="$FAKE_DIR"
{ printf '%s\\x1f' "$@"; echo; } >>"$d/helm.log"
case "$1" in
  version) cat "$d/helm-version" 2>/dev/null || echo v3.22.0 ;;
  status) [ -f "$d/helm-release" ] ;;
  *) ;;
esac
`;

interface Case {
  /** The crossplane container as the install.sh query prints it; undefined: no Deployment. */
  crossplane?: { image: string; args: string[]; env?: string[]; caConfigMap?: string };
  crds?: boolean;
  /** The operators group a previous install left. */
  existingGroup?: string;
  whoami?: { user: string; groups: string[] } | null;
  helmRelease?: boolean;
  helmVersion?: string;
  env?: Record<string, string>;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  kubectl: string[][];
  helm: string[][];
  applied: any[];
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function install(c: Case): Run {
  const d = mkdtempSync(join(tmpdir(), "berth-install-"));
  dirs.push(d);
  for (const [name, text] of [["kubectl", FAKE_KUBECTL], ["helm", FAKE_HELM]] as const) {
    writeFileSync(join(d, name), text);
    chmodSync(join(d, name), 0o755);
  }
  if (c.crossplane) {
    const { image, args, env = [], caConfigMap } = c.crossplane;
    const lines = [`image=${image}`, ...args.map((a) => `arg=${a}`), ...env.map((e) => `env=${e}`), ...(caConfigMap ? [`ca=${caConfigMap}`] : [])];
    writeFileSync(join(d, "deployment"), lines.join("\n") + "\n");
  }
  if (c.crds || c.crossplane) writeFileSync(join(d, "crds"), "");
  if (c.existingGroup) writeFileSync(join(d, "group"), c.existingGroup);
  const who = c.whoami === undefined ? { user: "berth-admin", groups: ["system:masters", "system:authenticated"] } : c.whoami;
  if (who) writeFileSync(join(d, "whoami"), [who.user, ...who.groups].join("\n") + "\n");
  if (c.helmRelease) writeFileSync(join(d, "helm-release"), "");
  if (c.helmVersion) writeFileSync(join(d, "helm-version"), `${c.helmVersion}\n`);
  const env: Record<string, string> = { PATH: `${d}:${process.env.PATH}`, HOME: d, FAKE_DIR: d, KUBECONFIG: join(d, "kubeconfig"), ...c.env };
  const r = spawnSync("bash", [SCRIPT], { env, encoding: "utf8", timeout: 20_000 });
  const calls = (f: string) =>
    existsSync(join(d, f))
      ? readFileSync(join(d, f), "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => l.split(SEP).slice(0, -1))
      : [];
  const applied = existsSync(join(d, "applied.yaml")) ? parseAllDocuments(readFileSync(join(d, "applied.yaml"), "utf8")).map((doc) => doc.toJS()).filter(Boolean) : [];
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, kubectl: calls("kubectl.log"), helm: calls("helm.log"), applied };
}

const RIGHT = { image: `xpkg.crossplane.io/crossplane/crossplane:v${CROSSPLANE_VERSION}`, args: ["core", "start", "--enable-operations"] };
const GROUP = { BERTH_OPERATORS_GROUP: "platform-admins" };
const changes = (r: Run) => r.kubectl.filter((a) => a.includes("apply") || a.includes("create") && !a.includes("--dry-run=client"));
const operatorsGroup = (r: Run) => r.applied.find((o) => o.kind === "ConfigMap" && o.metadata?.name === "berth-admission")?.data?.operatorsGroup;

describe("install/install.sh with Crossplane already installed", () => {
  it("leaves a Crossplane that is what Berth needs alone: helm is never called, and Berth is installed", () => {
    const r = install({ crossplane: RIGHT, env: GROUP });
    expect(r.code, r.stderr).toBe(0);
    expect(r.helm).toEqual([]);
    expect(r.stdout).toContain(`using the Crossplane ${CROSSPLANE_VERSION} already installed`);
    // Nothing is applied to crossplane-system; Berth's objects are.
    expect(r.kubectl.filter((a) => a.includes("apply") && a.includes("crossplane-system"))).toEqual([]);
    expect(r.applied.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(expect.arrayContaining(["ConfigMap/berth-admission", "Function/berth-dev-function-berth", "Configuration/configuration-berth"]));
    expect(r.stdout).toMatch(/Berth v\S+ installed/);
  });

  it("takes a newer patch or minor of the same major, with other args and --enable-operations=true", () => {
    const [major, minor] = CROSSPLANE_VERSION.split(".").map(Number);
    for (const tag of [`v${major}.${minor}.99`, `v${major}.${minor! + 1}.0`, `v${major}.${minor! + 1}.0-rc.1`]) {
      const r = install({ crossplane: { image: `registry.example.com:5000/mirror/crossplane:${tag}`, args: ["core", "start", "--debug", "--enable-operations=true"] }, env: GROUP });
      expect(r.code, `${tag}: ${r.stderr}`).toBe(0);
      expect(r.helm, tag).toEqual([]);
    }
  });

  it("stops before changing anything when --enable-operations is missing, naming the helm command that adds it and keeps the other values", () => {
    const r = install({ crossplane: { image: RIGHT.image, args: ["core", "start", "--debug"] }, env: GROUP });
    expect(r.code).toBe(1);
    expect(r.helm).toEqual([]);
    expect(changes(r)).toEqual([]);
    expect(r.stderr).toContain("the crossplane container's args lack --enable-operations");
    expect(r.stderr).toContain(
      `helm upgrade crossplane crossplane-stable/crossplane --namespace crossplane-system --version ${CROSSPLANE_VERSION} --reuse-values --set-json 'args=["--debug","--enable-operations"]' --wait`,
    );
    expect(r.stderr).toContain("BERTH_INSTALL_CROSSPLANE=upgrade");
  });

  it("--enable-operations=false after the flag counts as missing", () => {
    const r = install({ crossplane: { image: RIGHT.image, args: ["core", "start", "--enable-operations", "--enable-operations=false"] }, env: GROUP });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("lack --enable-operations");
  });

  it("stops before changing anything when Crossplane is older than the tested minor, naming the upgrade to the tested version", () => {
    const [major, minor] = CROSSPLANE_VERSION.split(".").map(Number);
    const old = `${major}.${minor! - 1}.3`;
    const r = install({ crossplane: { image: `xpkg.crossplane.io/crossplane/crossplane:v${old}`, args: RIGHT.args }, env: GROUP });
    expect(r.code).toBe(1);
    expect(r.helm).toEqual([]);
    expect(changes(r)).toEqual([]);
    expect(r.stderr).toContain(`Crossplane ${old} runs here; Berth is tested on ${CROSSPLANE_VERSION} and needs ${major}.${minor}.x or a newer ${major}.x`);
    expect(r.stderr).toContain(`--version ${CROSSPLANE_VERSION} --reset-then-reuse-values --set-json 'args=["--enable-operations"]'`);
  });

  it("stops on another major, and on an image whose version cannot be read", () => {
    const [major] = CROSSPLANE_VERSION.split(".").map(Number);
    const next = install({ crossplane: { image: `xpkg.crossplane.io/crossplane/crossplane:v${major! + 1}.0.0`, args: RIGHT.args }, env: GROUP });
    expect(next.code).toBe(1);
    expect(next.stderr).toContain(`Crossplane ${major! + 1}.0.0 runs here`);
    const digest = install({ crossplane: { image: "xpkg.crossplane.io/crossplane/crossplane@sha256:" + "a".repeat(64), args: RIGHT.args }, env: GROUP });
    expect(digest.code).toBe(1);
    expect(digest.stderr).toContain("cannot read Crossplane's version from its image");
    for (const r of [next, digest]) expect(r.helm).toEqual([]);
  });

  it("with REGISTRY_CA_FILE, stops when Crossplane trusts no CA bundle, naming the ConfigMap and the values to add", () => {
    const ca = join(tempDir("berth-install-ca-"), "ca.pem");
    writeFileSync(ca, "-----BEGIN CERTIFICATE-----\n");
    const r = install({ crossplane: RIGHT, env: { ...GROUP, REGISTRY_CA_FILE: ca } });
    expect(r.code).toBe(1);
    expect(r.helm).toEqual([]);
    expect(r.stderr).toContain(`kubectl -n crossplane-system create configmap berth-registry-ca --from-file=ca.crt=${ca}`);
    expect(r.stderr).toContain("--set registryCaBundleConfig.name=berth-registry-ca --set registryCaBundleConfig.key=ca.crt");
    // Mounted already (as install.sh installs it): the ConfigMap is refreshed, helm still not run.
    const ok = install({ crossplane: { ...RIGHT, env: ["CA_BUNDLE_PATH=/certs/ca.crt"], caConfigMap: "berth-registry-ca" }, env: { ...GROUP, REGISTRY_CA_FILE: ca } });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.helm).toEqual([]);
  });

  it("stops on Crossplane's CRDs without its Deployment in crossplane-system", () => {
    const r = install({ crds: true, env: GROUP });
    expect(r.code).toBe(1);
    expect(r.helm).toEqual([]);
    expect(r.stderr).toContain("there is no Deployment crossplane-system/crossplane");
  });
});

describe("install/install.sh installing or upgrading Crossplane", () => {
  it("installs Crossplane with helm where there is none, at the tested version, webhooks and Operations on", () => {
    const r = install({ env: GROUP });
    expect(r.code, r.stderr).toBe(0);
    const upgrade = r.helm.filter((a) => a[0] === "upgrade");
    expect(upgrade.length).toBe(1);
    expect(upgrade[0]!.slice(0, 3)).toEqual(["upgrade", "--install", "crossplane"]);
    expect(upgrade[0]).toEqual(expect.arrayContaining(["crossplane-stable/crossplane", "--version", CROSSPLANE_VERSION, "webhooks.enabled=true", "args={--enable-operations}", "--wait"]));
  });

  it("BERTH_INSTALL_CROSSPLANE=upgrade upgrades the release with its values reused, adding --enable-operations to the args it runs with", () => {
    const [major, minor] = CROSSPLANE_VERSION.split(".").map(Number);
    const r = install({
      crossplane: { image: `xpkg.crossplane.io/crossplane/crossplane:v${major}.${minor! - 1}.0`, args: ["core", "start", "--debug", "--poll-interval=2m"] },
      helmRelease: true,
      env: { ...GROUP, BERTH_INSTALL_CROSSPLANE: "upgrade" },
    });
    expect(r.code, r.stderr).toBe(0);
    const upgrade = r.helm.filter((a) => a[0] === "upgrade");
    expect(upgrade.length).toBe(1);
    expect(upgrade[0]).toEqual(expect.arrayContaining(["--install", "crossplane", "--version", CROSSPLANE_VERSION, "--reset-then-reuse-values", "--set-json", 'args=["--debug","--poll-interval=2m","--enable-operations"]']));
    // Nothing of Berth's own choosing replaces a value the release has.
    expect(upgrade[0]!.join(" ")).not.toMatch(/webhooks\.enabled|args=\{/);
    // Helm older than 3.14 has no --reset-then-reuse-values: --reuse-values.
    const older = install({ crossplane: RIGHT, helmRelease: true, helmVersion: "v3.13.3", env: { ...GROUP, BERTH_INSTALL_CROSSPLANE: "upgrade" } });
    expect(older.code, older.stderr).toBe(0);
    expect(older.helm.find((a) => a[0] === "upgrade")).toEqual(expect.arrayContaining(["--reuse-values", "--set-json", 'args=["--enable-operations"]']));
  });

  it("BERTH_INSTALL_CROSSPLANE=upgrade keeps a newer Crossplane's version (no downgrade)", () => {
    const [major, minor] = CROSSPLANE_VERSION.split(".").map(Number);
    const newer = `${major}.${minor! + 1}.2`;
    const r = install({ crossplane: { image: `x/crossplane:v${newer}`, args: ["core", "start"] }, helmRelease: true, env: { ...GROUP, BERTH_INSTALL_CROSSPLANE: "upgrade" } });
    expect(r.code, r.stderr).toBe(0);
    const upgrade = r.helm.find((a) => a[0] === "upgrade")!;
    expect(upgrade[upgrade.indexOf("--version") + 1]).toBe(newer);
    expect(upgrade).toEqual(expect.arrayContaining(["--reset-then-reuse-values", 'args=["--enable-operations"]']));
  });

  it("BERTH_INSTALL_CROSSPLANE=upgrade refuses a Deployment that is no Helm release, and unknown values", () => {
    const noRelease = install({ crossplane: RIGHT, env: { ...GROUP, BERTH_INSTALL_CROSSPLANE: "upgrade" } });
    expect(noRelease.code).toBe(1);
    expect(noRelease.stderr).toContain("is not Helm release crossplane");
    const typo = install({ crossplane: RIGHT, env: { ...GROUP, BERTH_INSTALL_CROSSPLANE: "yes" } });
    expect(typo.code).toBe(1);
    for (const r of [noRelease, typo]) expect(r.helm.filter((a) => a[0] === "upgrade")).toEqual([]);
  });
});

describe("install/install.sh: the operators group", () => {
  it("BERTH_OPERATORS_GROUP reaches the applied params; the rest of params.yaml goes as it is", () => {
    const r = install({ crossplane: RIGHT, env: { BERTH_OPERATORS_GROUP: "oidc:Platform Admins" } });
    expect(r.code, r.stderr).toBe(0);
    expect(operatorsGroup(r)).toBe("oidc:Platform Admins");
    expect(r.applied.find((o) => o.kind === "Namespace")?.metadata.name).toBe("berth-system");
    expect(r.stdout).toContain("operators group oidc:Platform Admins");
  });

  it("without BERTH_OPERATORS_GROUP, keeps the group a previous install set; with none, stops naming the setting", () => {
    const kept = install({ crossplane: RIGHT, existingGroup: "team:platform" });
    expect(kept.code, kept.stderr).toBe(0);
    expect(operatorsGroup(kept)).toBe("team:platform");
    const none = install({ crossplane: RIGHT });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("set BERTH_OPERATORS_GROUP");
    expect(changes(none)).toEqual([]);
  });

  it("stops when the installer is in neither the group nor system:masters, naming its groups; BERTH_SKIP_OPERATOR_CHECK=1 goes on", () => {
    const whoami = { user: "alice@example.com", groups: ["oidc:developers", "system:authenticated"] };
    const r = install({ crossplane: RIGHT, whoami, env: GROUP });
    expect(r.code).toBe(1);
    expect(changes(r)).toEqual([]);
    expect(r.stderr).toContain("you (alice@example.com) are not in platform-admins, so Berth would refuse your next step, kubectl apply -f examples/profile.yaml");
    expect(r.stderr).toContain("Your groups: oidc:developers, system:authenticated.");
    const member = install({ crossplane: RIGHT, whoami: { ...whoami, groups: ["platform-admins", "system:authenticated"] }, env: GROUP });
    expect(member.code, member.stderr).toBe(0);
    const skipped = install({ crossplane: RIGHT, whoami, env: { ...GROUP, BERTH_SKIP_OPERATOR_CHECK: "1" } });
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(operatorsGroup(skipped)).toBe("platform-admins");
  });

  it("refuses a group every identity is in, and one with a quote", () => {
    for (const g of ["system:authenticated", "system:serviceaccounts", 'a"b']) {
      const r = install({ crossplane: RIGHT, env: { BERTH_OPERATORS_GROUP: g } });
      expect(r.code, g).toBe(1);
      expect(changes(r), g).toEqual([]);
    }
  });
});
