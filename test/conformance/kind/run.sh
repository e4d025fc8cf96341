#!/usr/bin/env bash
# Conformance on kind, for machines with a container engine: creates a kind cluster and a local
# registry, installs Crossplane with Helm, builds Berth's function image and both packages,
# installs them and the admission manifests, then runs the same suite as CI with
# BERTH_CONFORMANCE_KUBECONFIG pointing at the cluster.
#
#   npm run conformance:kind                 # create (or reuse), install, test
#   KEEP=1 npm run conformance:kind          # keep the cluster afterwards (default: delete it)
#
# Needs: docker (or podman via KIND_EXPERIMENTAL_PROVIDER=podman and DOCKER=podman), kind, helm,
# and the Crossplane CLI (`crossplane` in PATH, or CROSSPLANE_CLI=/path; build.sh builds one as
# crossplane-cli). Versions: Crossplane from test/conformance/controlplane/versions.env, so kind
# runs the same core as the local control plane.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$root"
# shellcheck source=../controlplane/versions.env
source test/conformance/controlplane/versions.env

cluster="${KIND_CLUSTER:-berth-conformance}"
docker="${DOCKER:-docker}"
crossplane="${CROSSPLANE_CLI:-crossplane}"
registry="${REGISTRY_NAME:-berth-kind-registry}"
tag="v0.1.0-conformance"
work="$root/.cache/kind"
kubeconfig="$work/kubeconfig"
mkdir -p "$work"

log() { printf '[kind %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
need() { command -v "$1" >/dev/null || { echo "conformance:kind needs $1 in PATH" >&2; exit 1; }; }
need "$docker"; need kind; need helm; need "$crossplane"; need kubectl
"$docker" info >/dev/null 2>&1 || { echo "conformance:kind: $docker is installed but no container engine answers" >&2; exit 1; }
k() { kubectl --kubeconfig "$kubeconfig" "$@"; }

cleanup() {
  if [ "${KEEP:-0}" != 1 ]; then
    log "deleting cluster $cluster and registry $registry (KEEP=1 keeps them)"
    kind delete cluster --name "$cluster" >/dev/null 2>&1 || true
    "$docker" rm -f "$registry" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

# 1. The cluster.
if ! kind get clusters 2>/dev/null | grep -qx "$cluster"; then
  log "creating kind cluster $cluster"
  kind create cluster --name "$cluster" --kubeconfig "$kubeconfig" --wait 120s
else
  kind get kubeconfig --name "$cluster" > "$kubeconfig"
fi

# 2. A registry for the packages, on kind's network. Crossplane's package manager pulls them
#    itself (go-containerregistry), which speaks plain HTTP to RFC 1918 addresses, so the
#    packages are referenced by the registry's IP on that network.
if ! "$docker" inspect "$registry" >/dev/null 2>&1; then
  log "starting registry $registry"
  "$docker" run -d --restart=always -p 127.0.0.1:5001:5000 --name "$registry" registry:2 >/dev/null
fi
"$docker" network connect kind "$registry" 2>/dev/null || true
regip="$("$docker" inspect -f '{{with index .NetworkSettings.Networks "kind"}}{{.IPAddress}}{{end}}' "$registry")"
[ -n "$regip" ] || { echo "registry has no address on the kind network" >&2; exit 1; }
log "registry at localhost:5001 (in cluster: $regip:5000)"

# 3. Crossplane, the same core version as the local control plane.
log "installing Crossplane $CROSSPLANE_VERSION with Helm"
helm repo add crossplane-stable https://charts.crossplane.io/stable --force-update >/dev/null
helm upgrade --install crossplane crossplane-stable/crossplane --version "$CROSSPLANE_VERSION" \
  --kubeconfig "$kubeconfig" --namespace crossplane-system --create-namespace --wait --timeout 5m

# 4. The function image, loaded into the nodes (no registry pull for the runtime), and the
#    packages, pushed to the local registry.
image="berth.local/function-berth:$tag"
log "building $image"
"$docker" build -f package/Dockerfile -t "$image" .
kind load docker-image "$image" --name "$cluster"
log "building and pushing the packages"
rm -f "$work"/*.xpkg
"$crossplane" xpkg build --package-root package --embed-runtime-image "$image" -o "$work/function-berth.xpkg"
"$crossplane" xpkg build --package-root . --examples-root examples \
  --ignore 'functions/*,test/*,node_modules/*,package/*,image/*,bench/*,admission/*,.cache/*,.ci/*' -o "$work/configuration-berth.xpkg"
"$crossplane" xpkg push -f "$work/function-berth.xpkg" "localhost:5001/berth/function-berth:$tag"
"$crossplane" xpkg push -f "$work/configuration-berth.xpkg" "localhost:5001/berth/configuration-berth:$tag"

# 5. Berth: third-party CRDs, admission manifests (their RBAC lets Crossplane compose Berth's
#    kinds), the Function (its runtime is the image loaded above), the Configuration.
log "installing Berth"
# The upstream CRDs pinned in test/upstream-crds.yaml (BERTH_UPSTREAM_CRDS, or downloaded and checked).
upstream_crds="$(npx tsx test/support/upstream-crds.ts)"
k apply --server-side -f "$upstream_crds/agent-sandbox" -f "$upstream_crds/agent-substrate" -f "$upstream_crds/volume-snapshot"
k apply --server-side -f admission/params.yaml
k apply --server-side -f admission/policies.yaml -f admission/rbac.yaml
k apply --server-side -f - <<YAML
apiVersion: pkg.crossplane.io/v1beta1
kind: DeploymentRuntimeConfig
metadata: { name: function-berth-local }
spec:
  deploymentTemplate:
    spec:
      selector: {}
      template:
        spec:
          containers:
            - name: package-runtime
              image: $image
              imagePullPolicy: Never
---
apiVersion: pkg.crossplane.io/v1
kind: Function
metadata: { name: function-berth }
spec:
  package: $regip:5000/berth/function-berth:$tag
  runtimeConfigRef: { name: function-berth-local }
---
apiVersion: pkg.crossplane.io/v1
kind: Configuration
metadata: { name: configuration-berth }
spec:
  package: $regip:5000/berth/configuration-berth:$tag
  # Its dependency names the published function-berth; the local one above stands in for it.
  skipDependencyResolution: true
YAML
k wait --for=condition=Healthy function.pkg.crossplane.io/function-berth --timeout=300s
k wait --for=condition=Healthy configuration.pkg.crossplane.io/configuration-berth --timeout=300s
k wait --for=condition=Established xrd --all --timeout=120s

# 6. The suite.
log "running the conformance suite"
BERTH_CONFORMANCE_KUBECONFIG="$kubeconfig" npx vitest run --config test/conformance/vitest.config.ts "$@"
