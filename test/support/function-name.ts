// The name Berth's function is installed under, read from crossplane.yaml: the name Crossplane's
// package manager gives the Configuration's dependency on it (the repository of the dependency's
// package as a DNS label: xpkg.crossplane.io/berth-dev/function-berth -> berth-dev-function-berth).
// The Compositions call that name, and operators install the Function under it: if they chose
// another, the package manager would install the dependency a second time under this one
// whenever it finds no Function for it in the Lock (it does, for a moment, during every
// upgrade), and the two Functions would then share a source and fail.
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Crossplane's xpkg.ToDNSLabel: lowercase letters and digits kept, . / : - as -, at most 63 characters, no - at either end. */
export function toDNSLabel(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (/[a-z0-9]/.test(c)) out += c;
    if (/[./:-]/.test(c) && i !== 0 && i !== 62 && i !== s.length - 1) out += "-";
    if (i === 62) break;
  }
  return out.replace(/^-+|-+$/g, "");
}

/** The registry repository of a package reference, without registry host and tag: berth-dev/function-berth. */
export function packageRepository(ref: string): string {
  const [first, ...rest] = ref.replace(/[:@][^/]*$/, "").split("/");
  const hasHost = rest.length > 0 && (first!.includes(".") || first!.includes(":") || first === "localhost");
  return (hasHost ? rest : [first!, ...rest]).join("/");
}

/** The dependency's package in crossplane.yaml, and the name the function is installed under. */
export function installedFunction(root = REPO): { package: string; name: string } {
  const meta = parse(readFileSync(join(root, "crossplane.yaml"), "utf8")) as { spec?: { dependsOn?: { kind?: string; package?: string }[] } };
  const dep = (meta.spec?.dependsOn ?? []).find((d) => d.kind === "Function");
  if (!dep?.package) throw new Error("crossplane.yaml: spec.dependsOn names no Function package");
  return { package: dep.package, name: toDNSLabel(packageRepository(dep.package)) };
}

/** What Berth's Function package declares it serves (package/crossplane.yaml spec.capabilities). */
export function packageCapabilities(root = REPO): string[] {
  const meta = parse(readFileSync(join(root, "package", "crossplane.yaml"), "utf8")) as { spec?: { capabilities?: string[] } };
  const capabilities = meta.spec?.capabilities ?? [];
  if (capabilities.length === 0) throw new Error("package/crossplane.yaml: spec.capabilities is empty");
  return capabilities;
}
