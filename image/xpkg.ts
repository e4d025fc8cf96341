// What `crossplane xpkg build --embed-runtime-image-tarball` made of the function image: the
// package is one image whose layers are the runtime image's, in order, then the package's own
// layers (package.yaml, labelled "base", and the CLI's "upbound" metadata layer, each named by an
// io.crossplane.xpkg:<digest> label), with the runtime image's ENTRYPOINT and user, so that
// Crossplane's Deployment runtime runs exactly the image image/build.ts built.
import { tarEntries } from "./archives.js";
import type { BuiltImage } from "./oci.js";

interface ImageConfig {
  config?: { Entrypoint?: string[]; User?: string; WorkingDir?: string; Labels?: Record<string, string> };
  rootfs?: { diff_ids?: string[] };
}

/** What differs between the package (`xpkg build -o` output, a docker-save tarball) and the image; empty when nothing does. */
export async function embeddedImageProblems(xpkg: Buffer, image: BuiltImage): Promise<string[]> {
  const manifestFile = (await tarEntries(xpkg, ["/manifest.json"], "the package")).get("/manifest.json")!;
  if (manifestFile.type !== "file") return ["the package's manifest.json is not a file"];
  const manifests = JSON.parse(manifestFile.content.toString()) as { Config: string; Layers: string[] }[];
  if (manifests.length !== 1) return [`the package holds ${manifests.length} images, expected 1`];
  const configPath = `/${manifests[0]!.Config}`;
  const configFile = (await tarEntries(xpkg, [configPath], "the package")).get(configPath)!;
  const packageConfig = JSON.parse((configFile as { content: Buffer }).content.toString()) as ImageConfig;
  const imageConfig = JSON.parse(image.config.bytes.toString()) as ImageConfig;

  const problems: string[] = [];
  const want = image.layers.map((l) => l.diffID);
  const got = packageConfig.rootfs?.diff_ids ?? [];
  if (JSON.stringify(got.slice(0, want.length)) !== JSON.stringify(want)) problems.push(`layers: the package starts with ${JSON.stringify(got.slice(0, want.length))}, the image is ${JSON.stringify(want)}`);
  const labels = packageConfig.config?.Labels ?? {};
  // The labels name a layer by its digest (compressed), which the tarball's file names carry.
  const digests = manifests[0]!.Layers.map((f) => `sha256:${f.replace(/\.tar(\.gz)?$/, "")}`);
  const packageLayers = digests.slice(want.length).map((d) => labels[`io.crossplane.xpkg:${d}`]);
  if (packageLayers.some((l) => l === undefined)) problems.push(`layers: after the image's ${want.length}, a layer is not one of the package's (labels: ${JSON.stringify(labels)})`);
  if (!packageLayers.includes("base")) problems.push("layers: no package layer labelled base (package.yaml)");
  for (const key of ["Entrypoint", "User", "WorkingDir"] as const) {
    const a = JSON.stringify(packageConfig.config?.[key]);
    const b = JSON.stringify(imageConfig.config?.[key]);
    if (a !== b) problems.push(`${key}: the package has ${a}, the image ${b}`);
  }
  return problems;
}
