#!/usr/bin/env bash
# Installs Crossplane and Berth into the cluster of $KUBECONFIG, the way the README and
# docs/operations.md tell operators to: Crossplane from its Helm chart (package manager and webhooks on, the Deployment
# runtime), then Berth's admission policies and RBAC, then the Function and Configuration
# packages, pulled by Crossplane's package manager from a registry. The live tier
# (test/live/cluster.ts) and `npm run conformance:kind` both install with this script; they
# differ only in how the cluster is made and how images reach it.
#
#   install/install.sh                        # everything from the public registries
#
# Settings (environment), each optional:
#   BERTH_VERSION     package tag to install (default: v<version in package.json>)
#   BERTH_MIRROR      a registry path holding function-berth and configuration-berth, for
#                     clusters that pull through a mirror: an ImageConfig rewrites
#                     xpkg.crossplane.io/berth-dev/* to it, so the packages keep their public
#                     names (and the Configuration's dependency resolves to the same Function)
#   REGISTRY_CA_FILE  a PEM bundle Crossplane's package manager trusts for that registry
#   CROSSPLANE_CHART  the chart: a folder, or a repo/chart name (default: crossplane-stable/crossplane
#                     at CROSSPLANE_VERSION from test/conformance/controlplane/versions.env)
#   CROSSPLANE_IMAGE  repository:tag of the Crossplane image (default: the chart's own)
#   CROSSPLANE_IMAGE_PULL_POLICY  (default: the chart's own, IfNotPresent)
#   HELM, KUBECTL     the programs (default: helm and kubectl in PATH)
#   BERTH_TIMEOUT     how long to wait for each step to become healthy (default 300s)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# shellcheck source=../test/conformance/controlplane/versions.env
source test/conformance/controlplane/versions.env

helm="${HELM:-helm}"
kubectl="${KUBECTL:-kubectl}"
version="${BERTH_VERSION:-v$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -n1)}"
public="xpkg.crossplane.io/berth-dev"
# The name Crossplane's package manager gives the Configuration's dependency on
# $public/function-berth, and so the name the Compositions call. Installed under any other name,
# the package manager would install it a second time under this one during an upgrade.
function_name=berth-dev-function-berth
timeout="${BERTH_TIMEOUT:-300s}"
ns=crossplane-system

log() { printf '[install %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
need() { command -v "$1" >/dev/null || { echo "install.sh needs $1 (set ${2:-it} or put it in PATH)" >&2; exit 1; }; }
need "$helm" HELM
need "$kubectl" KUBECTL
[ -n "${KUBECONFIG:-}" ] || { echo "install.sh: set KUBECONFIG to the cluster to install into" >&2; exit 1; }

# 1. Crossplane, from its chart. The registry CA, if any, goes into a ConfigMap the chart mounts
#    for the package manager (registryCaBundleConfig).
"$kubectl" create namespace "$ns" --dry-run=client -o yaml | "$kubectl" apply --server-side -f - >/dev/null
chart_args=()
if [ -d "${CROSSPLANE_CHART:-}" ]; then
  chart_args+=("$CROSSPLANE_CHART")
else
  chart="${CROSSPLANE_CHART:-crossplane-stable/crossplane}"
  if [ "${chart%%/*}" = crossplane-stable ]; then
    "$helm" repo add crossplane-stable https://charts.crossplane.io/stable --force-update >/dev/null
  fi
  chart_args+=("$chart" --version "$CROSSPLANE_VERSION")
fi
if [ -n "${REGISTRY_CA_FILE:-}" ]; then
  "$kubectl" -n "$ns" create configmap berth-registry-ca --from-file=ca.crt="$REGISTRY_CA_FILE" --dry-run=client -o yaml |
    "$kubectl" apply --server-side -f - >/dev/null
  chart_args+=(--set registryCaBundleConfig.name=berth-registry-ca --set registryCaBundleConfig.key=ca.crt)
fi
if [ -n "${CROSSPLANE_IMAGE:-}" ]; then
  chart_args+=(--set "image.repository=${CROSSPLANE_IMAGE%:*}" --set "image.tag=${CROSSPLANE_IMAGE##*:}")
fi
if [ -n "${CROSSPLANE_IMAGE_PULL_POLICY:-}" ]; then
  chart_args+=(--set "image.pullPolicy=$CROSSPLANE_IMAGE_PULL_POLICY")
fi
# Operations (alpha in Crossplane v2) run Berth's lifecycle rules: operations/lifecycle.yaml.
log "installing Crossplane $CROSSPLANE_VERSION with Helm (webhooks on, Operations on, Deployment runtime)"
"$helm" upgrade --install crossplane "${chart_args[@]}" --namespace "$ns" --set webhooks.enabled=true --set 'args={--enable-operations}' --wait --timeout "$timeout"
"$kubectl" wait --for=condition=Established crd/functions.pkg.crossplane.io crd/configurations.pkg.crossplane.io crd/imageconfigs.pkg.crossplane.io --timeout="$timeout" >/dev/null

# 2. A mirror: packages keep their public names, Crossplane pulls them from the mirror.
if [ -n "${BERTH_MIRROR:-}" ]; then
  log "pulling $public/* from $BERTH_MIRROR"
  "$kubectl" apply --server-side -f - >/dev/null <<YAML
apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata: { name: berth-mirror }
spec:
  matchImages:
    - { type: Prefix, prefix: $public/ }
  rewriteImage: { prefix: ${BERTH_MIRROR%/}/ }
YAML
fi

# 3. Berth's admission policies and RBAC: a Configuration package cannot carry them. rbac.yaml
#    aggregates into Crossplane's ClusterRole exactly the kinds Berth composes.
log "applying admission/ (policies, parameters, RBAC)"
"$kubectl" apply --server-side -f admission/params.yaml -f admission/policies.yaml -f admission/rbac.yaml >/dev/null

# 4. The Function, pinned to this release under the name the Compositions call, then the
#    Configuration, whose dependency on $public/function-berth that Function satisfies.
log "installing $public/function-berth:$version and $public/configuration-berth:$version"
"$kubectl" apply --server-side -f - >/dev/null <<YAML
apiVersion: pkg.crossplane.io/v1
kind: Function
metadata: { name: $function_name }
spec: { package: $public/function-berth:$version }
YAML
"$kubectl" wait --for=condition=Healthy "function.pkg.crossplane.io/$function_name" --timeout="$timeout"
"$kubectl" apply --server-side -f - >/dev/null <<YAML
apiVersion: pkg.crossplane.io/v1
kind: Configuration
metadata: { name: configuration-berth }
spec: { package: $public/configuration-berth:$version }
YAML
"$kubectl" wait --for=condition=Healthy configuration.pkg.crossplane.io/configuration-berth --timeout="$timeout"
"$kubectl" wait --for=condition=Established xrd --all --timeout="$timeout"
log "Berth $version installed"
