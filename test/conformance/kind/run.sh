#!/usr/bin/env bash
# Conformance on kind, for machines with a container engine: creates a kind cluster and a local
# registry, publishes Berth's packages there (install/publish.sh), installs Crossplane from its
# Helm chart and Berth from the registry (install/install.sh, the script the live tier runs),
# then runs the same suite as CI with BERTH_CONFORMANCE_KUBECONFIG pointing at the cluster.
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
  # containerd reads per-registry settings from certs.d (step 2 says to pull from the registry over HTTP).
  kind create cluster --name "$cluster" --kubeconfig "$kubeconfig" --wait 120s --config - <<YAML
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
containerdConfigPatches:
  - |-
    [plugins."io.containerd.grpc.v1.cri".registry]
      config_path = "/etc/containerd/certs.d"
YAML
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
for n in $(kind get nodes --name "$cluster"); do
  "$docker" exec "$n" mkdir -p "/etc/containerd/certs.d/$regip:5000"
  printf '[host."http://%s:5000"]\n' "$regip" | "$docker" exec -i "$n" cp /dev/stdin "/etc/containerd/certs.d/$regip:5000/hosts.toml"
done

# 3. Berth's packages, built and pushed to the local registry (install/publish.sh: the function
#    image from its pinned sources, no Docker build needed, embedded in the Function package).
version="v$(sed -n 's/^  "version": "\(.*\)",$/\1/p' package.json | head -n1)"
log "publishing Berth $version to localhost:5001/berth-dev"
CROSSPLANE_CLI="$crossplane" BERTH_WORK="$work/packages" install/publish.sh localhost:5001/berth-dev "$version"

# 4. Crossplane from its chart, then Berth, by the script the live tier runs too. The
#    upstream CRDs (agent-sandbox, Agent Substrate, snapshots) come first, as an operator's
#    runtimes would bring them. The cluster pulls the packages from the registry's address on
#    kind's network (plain HTTP: go-containerregistry speaks it to RFC 1918 addresses).
upstream_crds="$(npx tsx test/support/upstream-crds.ts)"
k apply --server-side -f "$upstream_crds/agent-sandbox-v1.0.1" -f "$upstream_crds/agent-substrate" -f "$upstream_crds/volume-snapshot"
# The operators group is the one the suite's identities are in (admission/params.yaml's). kind's
# admin need not be in it (kubeadm 1.29+ makes it kubeadm:cluster-admins, not system:masters).
KUBECONFIG="$kubeconfig" BERTH_VERSION="$version" BERTH_MIRROR="$regip:5000/berth-dev" \
  BERTH_OPERATORS_GROUP=berth:operators BERTH_SKIP_OPERATOR_CHECK=1 install/install.sh

# 5. The suite.
log "running the conformance suite"
BERTH_CONFORMANCE_KUBECONFIG="$kubeconfig" npx vitest run --config test/conformance/vitest.config.ts "$@"
