#!/usr/bin/env bash
# Builds Berth's two packages and pushes them to a registry path:
#
#   install/publish.sh registry.example.com/berth-dev            # v<package.json version>
#   install/publish.sh registry.example.com/berth-dev v0.1.1
#
# pushes <path>/function-berth:<version> (the function's runtime image embedded, so the
# package is all a cluster pulls) and <path>/configuration-berth:<version> (Berth's XRDs and
# Compositions, depending on xpkg.crossplane.io/berth-dev/function-berth). install/install.sh
# installs them (BERTH_MIRROR=<path> for a path other than the public one).
#
# Settings (environment), each optional:
#   CROSSPLANE_CLI  the Crossplane CLI (default: crossplane in PATH)
#   FUNCTION_IMAGE  a runtime image to embed that the local Docker daemon holds (e.g. built from
#                   package/Dockerfile); default: the image `npm run image` builds from pinned
#                   sources, no Docker needed
#   BERTH_WORK      scratch folder for the package files (default: .cache/packages)
# A registry with a private CA: SSL_CERT_FILE=<its CA bundle> for the CLI's pushes.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
path="${1:?usage: install/publish.sh REGISTRY_PATH [VERSION]}"
path="${path%/}"
version="${2:-v$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -n1)}"
crossplane="${CROSSPLANE_CLI:-crossplane}"
work="${BERTH_WORK:-$root/.cache/packages}/$version"
command -v "$crossplane" >/dev/null || { echo "publish.sh needs the Crossplane CLI (set CROSSPLANE_CLI or put crossplane in PATH)" >&2; exit 1; }

log() { printf '[publish %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
rm -rf "$work"
mkdir -p "$work/configuration"

# The Function package, with its runtime image.
if [ -n "${FUNCTION_IMAGE:-}" ]; then
  embed=(--embed-runtime-image "$FUNCTION_IMAGE")
else
  npm run -s image -- --version "$version" --out "$work/function-image.oci.tar" >&2
  embed=(--embed-runtime-image-tarball "$work/function-image.oci.tar")
fi
"$crossplane" xpkg build --package-root package "${embed[@]}" -o "$work/function-berth.xpkg"

# The Configuration package, from a folder holding only what it carries (xpkg build reads every
# YAML file under its root and cannot skip node_modules/).
cp -r crossplane.yaml apis compositions operations examples "$work/configuration/"
"$crossplane" xpkg build --package-root "$work/configuration" --examples-root "$work/configuration/examples" -o "$work/configuration-berth.xpkg"

for p in function-berth configuration-berth; do
  "$crossplane" xpkg push -f "$work/$p.xpkg" "$path/$p:$version"
  log "pushed $path/$p:$version"
done
