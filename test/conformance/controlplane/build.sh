#!/usr/bin/env bash
# Builds the conformance control plane from the Go module proxy: etcd,
# kube-apiserver, kube-controller-manager, Crossplane core and the Crossplane CLI;
# with --node, also the live node: kubelet, kube-scheduler, kube-proxy, containerd,
# runc, crictl, kube-router, CoreDNS and the live images' own programs.
# No container engine, no prebuilt downloads: every binary is compiled here from
# the wrapper modules under go/ (their go.mod/go.sum pin every dependency).
#
# Output (outside the repo):
#   ${BERTH_CACHE:-$HOME/.cache/berth}/bin/<tag>/{etcd,kube-apiserver,
#       kube-controller-manager,kubectl,crossplane,crossplane-cli}
#   ${BERTH_CACHE:-$HOME/.cache/berth}/bin/<tag>/crossplane-crds/*.yaml
#   ${BERTH_CACHE:-$HOME/.cache/berth}/bin/<tag>/paths.env  (KEY=VALUE)
#   --node: ${BERTH_CACHE:-$HOME/.cache/berth}/bin/node-<nodetag>/{kubelet,kube-scheduler,
#       kube-proxy,containerd,containerd-shim-runc-v2,ctr,runc,crictl,kube-router,coredns,
#       registry-<DISTRIBUTION_VERSION>, helm-<HELM_VERSION>, agent-sandbox-controller-<AGENT_SANDBOX_VERSION>}
#       and agent-sandbox-<AGENT_SANDBOX_VERSION>/{controller.yaml,rbac.generated.yaml} (its release's manifests)
#       and programs/{pause,workspace-probe,checkout,git-server} (rebuilt every time: they are
#       the project's own code)
# A binary already present is not rebuilt (delete it, or pass --force).
# The last line printed is BERTH_CP_BIN=<dir> (and BERTH_NODE_BIN=<dir> with --node).
#
# Usage: build.sh [--node] [--force] [--only NAME[,NAME...]] [--repin]
#   --node   the live node too (runc needs cgo and Debian's libseccomp-dev)
#   --repin  re-pin the wrapper modules to versions.env (go get + go mod tidy;
#            edits go/*/go.mod and go.sum, which are committed).
# Measured on a 2-core machine (Go 1.26.8), empty module and build caches: etcd 74 s,
# kube-apiserver 472 s, kube-controller-manager 134 s, crossplane 203 s,
# crossplane-cli 184 s: 17 min 48 s in all (module downloads under 30 s of that);
# kubectl adds about 2.5 min. --node adds about 7 min (CI, warm modules): kube-router 127 s,
# coredns 136 s, containerd 67 s, crictl 31 s, kubelet 23 s, runc 17 s, the rest under 10 s
# each. Nothing is rebuilt once the binaries are cached.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

force=0 repin=0 node=0 only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --node) node=1 ;;
    --force) force=1 ;;
    --repin) repin=1 ;;
    --only) only="$2"; shift ;;
    --only=*) only="${1#--only=}" ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

command -v go >/dev/null || { echo "build.sh: go not found in PATH" >&2; exit 1; }

cache="${BERTH_CACHE:-$HOME/.cache/berth}"
goversion="$(go env GOVERSION)"
tag="k8s${KUBERNETES_VERSION}-etcd${ETCD_VERSION}-xp${CROSSPLANE_VERSION}-cli${CROSSPLANE_CLI_VERSION}-${goversion}"
bin="$cache/bin/$tag"
mkdir -p "$bin"

export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -buildvcs=false -trimpath"

log() { printf '[build %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

wanted() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }

# pinned MODDIR MODULE VERSION: fail (or re-pin) unless go.mod requires MODULE at VERSION.
pinned() {
  local dir="$1" mod="$2" ver="$3" have
  have="$(cd "$dir" && go list -m -f '{{.Version}}' "$mod" 2>/dev/null || true)"
  if [ "$have" = "$ver" ]; then return 0; fi
  if [ "$repin" = 1 ]; then
    log "re-pinning $mod $have -> $ver in $(basename "$dir")"
    (cd "$dir" && go get "$mod@$ver" && go mod tidy)
    return 0
  fi
  echo "build.sh: go/$(basename "$dir")/go.mod has $mod ${have:-<none>}, versions.env wants $ver; rerun with --repin" >&2
  exit 1
}

# build NAME MODDIR PACKAGE [LDFLAGS]   (into $out, default $bin; $tags: go build -tags)
build() {
  local name="$1" dir="$2" pkg="$3" ldflags="${4:-}" out="${out:-$bin}"
  if ! wanted "$name"; then return 0; fi
  if [ -x "$out/$name" ] && [ "$force" = 0 ]; then
    log "$name: cached ($out/$name)"
    return 0
  fi
  log "$name: downloading modules"
  local t0 t1 t2
  t0=$(date +%s)
  (cd "$dir" && go mod download)
  t1=$(date +%s)
  log "$name: building $pkg"
  (cd "$dir" && go build ${tags:+-tags "$tags"} -ldflags "-s -w $ldflags" -o "$out/$name.tmp" "$pkg")
  mv "$out/$name.tmp" "$out/$name"
  t2=$(date +%s)
  log "$name: done in $((t2 - t0))s (download $((t1 - t0))s, build $((t2 - t1))s)"
}

start=$(date +%s)
log "versions: kubernetes $KUBERNETES_VERSION, etcd $ETCD_VERSION, crossplane $CROSSPLANE_VERSION, cli $CROSSPLANE_CLI_VERSION ($goversion)"
log "output: $bin"

pinned "$here/go/etcd" go.etcd.io/etcd/server/v3 "v$ETCD_VERSION"
if [ "$repin" = 1 ] && [ "$(cd "$here/go/kube" && go list -m -f '{{.Version}}' k8s.io/kubernetes)" != "v$KUBERNETES_VERSION" ]; then
  # k8s.io/kubernetes replaces its staging modules with ./staging paths; point each at its
  # published release v0.<minor>.<patch>: rewrite the replace block from the release's go.mod.
  log "re-pinning k8s.io/kubernetes -> v$KUBERNETES_VERSION and its staging modules"
  kmod="$(cd "$here/go/kube" && go mod download -json "k8s.io/kubernetes@v$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')"
  staging_ver="v0.${KUBERNETES_VERSION#*.}"
  (cd "$here/go/kube" &&
    awk '/^\/\/ k8s.io\/kubernetes requires its staging/{skip=1} !skip{print} skip && /^\)/{skip=0}' go.mod > go.mod.new &&
    { cat go.mod.new
      echo "// k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them with"
      echo "// local paths; point each at its published release instead ($staging_ver for v$KUBERNETES_VERSION)."
      echo "replace ("
      awk -v v="$staging_ver" '$2 == "=>" && $3 ~ /^\.\/staging\// {printf "\t%s => %s %s\n", $1, $1, v}' "$kmod"
      echo ")"
    } > go.mod && rm go.mod.new &&
    go mod edit -require="k8s.io/kubernetes@v$KUBERNETES_VERSION" && go mod tidy)
fi
pinned "$here/go/kube" k8s.io/kubernetes "v$KUBERNETES_VERSION"
pinned "$here/go/crossplane" github.com/crossplane/crossplane/v2 "v$CROSSPLANE_VERSION"
pinned "$here/go/crossplane" github.com/crossplane/crossplane/apis/v2 "v$CROSSPLANE_VERSION"
pinned "$here/go/cli" github.com/crossplane/cli/v2 "v$CROSSPLANE_CLI_VERSION"
if [ "$node" = 1 ]; then
  pinned "$here/go/containerd" github.com/containerd/containerd/v2 "v$CONTAINERD_VERSION"
  pinned "$here/go/runc" github.com/opencontainers/runc "v$RUNC_VERSION"
  pinned "$here/go/crictl" sigs.k8s.io/cri-tools "v$CRICTL_VERSION"
  pinned "$here/go/kube-router" github.com/cloudnativelabs/kube-router/v2 "v$KUBE_ROUTER_VERSION"
  pinned "$here/go/coredns" github.com/coredns/coredns "v$COREDNS_VERSION"
  pinned "$here/go/distribution" github.com/distribution/distribution/v3 "v$DISTRIBUTION_VERSION"
  pinned "$here/go/helm" helm.sh/helm/v3 "v$HELM_VERSION"
  pinned "$here/go/agent-sandbox" sigs.k8s.io/agent-sandbox "v$AGENT_SANDBOX_VERSION"
fi

build etcd "$here/go/etcd" berth.dev/conformance/controlplane/etcd

k8s_minor="${KUBERNETES_VERSION#*.}"; k8s_minor="${k8s_minor%%.*}"
kver="-X k8s.io/component-base/version.gitVersion=v$KUBERNETES_VERSION \
 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$k8s_minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=v$KUBERNETES_VERSION \
 -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$k8s_minor"
build kube-apiserver "$here/go/kube" k8s.io/kubernetes/cmd/kube-apiserver "$kver"
build kube-controller-manager "$here/go/kube" k8s.io/kubernetes/cmd/kube-controller-manager "$kver"
# kubectl is not needed by the harness (it speaks REST itself); it is built for manual use and scripts.
build kubectl "$here/go/kube" k8s.io/kubernetes/cmd/kubectl "$kver"

xpver="-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=v$CROSSPLANE_VERSION"
build crossplane "$here/go/crossplane" github.com/crossplane/crossplane/v2/cmd/crossplane "$xpver"
clsver="-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=v$CROSSPLANE_CLI_VERSION"
build crossplane-cli "$here/go/cli" github.com/crossplane/cli/v2/cmd/crossplane "$clsver"

# Crossplane's CRDs, for `crossplane core init --crds-path` (or kubectl apply).
xpdir="$(cd "$here/go/crossplane" && go list -m -f '{{.Dir}}' github.com/crossplane/crossplane/v2)"
rm -rf "$bin/crossplane-crds"
mkdir -p "$bin/crossplane-crds"
cp "$xpdir"/cluster/crds/*.yaml "$bin/crossplane-crds/"
chmod -R u+w "$bin/crossplane-crds"
log "crossplane CRDs: $(ls "$bin/crossplane-crds" | wc -l) files in $bin/crossplane-crds"
# ... and, for Crossplane in the cluster (the live tier), its webhook configurations (the image's
# /webhookconfigurations) and its Helm chart, both from the same module.
rm -rf "$bin/crossplane-webhookconfigurations" "$bin/crossplane-chart"
cp -r "$xpdir/cluster/webhookconfigurations" "$bin/crossplane-webhookconfigurations"
cp -r "$xpdir/cluster/charts/crossplane" "$bin/crossplane-chart"
chmod -R u+w "$bin/crossplane-webhookconfigurations" "$bin/crossplane-chart"

cat > "$bin/paths.env" <<ENV
BERTH_CP_BIN=$bin
ETCD=$bin/etcd
KUBE_APISERVER=$bin/kube-apiserver
KUBE_CONTROLLER_MANAGER=$bin/kube-controller-manager
KUBECTL=$bin/kubectl
CROSSPLANE=$bin/crossplane
CROSSPLANE_CLI=$bin/crossplane-cli
CROSSPLANE_CRDS=$bin/crossplane-crds
CROSSPLANE_CHART=$bin/crossplane-chart
ENV

if [ "$node" = 1 ]; then
  nodetag="k8s${KUBERNETES_VERSION}-containerd${CONTAINERD_VERSION}-runc${RUNC_VERSION}-crictl${CRICTL_VERSION}-kr${KUBE_ROUTER_VERSION}-coredns${COREDNS_VERSION}-${goversion}"
  nodebin="$cache/bin/node-$nodetag"
  mkdir -p "$nodebin/programs"
  log "node output: $nodebin"
  out="$nodebin" build kubelet "$here/go/kube" k8s.io/kubernetes/cmd/kubelet "$kver"
  out="$nodebin" build kube-scheduler "$here/go/kube" k8s.io/kubernetes/cmd/kube-scheduler "$kver"
  out="$nodebin" build kube-proxy "$here/go/kube" k8s.io/kubernetes/cmd/kube-proxy "$kver"
  ctrver="-X github.com/containerd/containerd/v2/version.Version=v$CONTAINERD_VERSION"
  out="$nodebin" build containerd "$here/go/containerd" github.com/containerd/containerd/v2/cmd/containerd "$ctrver"
  out="$nodebin" build containerd-shim-runc-v2 "$here/go/containerd" github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 "$ctrver"
  out="$nodebin" build ctr "$here/go/containerd" github.com/containerd/containerd/v2/cmd/ctr "$ctrver"
  # runc needs cgo for seccomp (libseccomp); everything else is static.
  if wanted runc && [ ! -e /usr/include/seccomp.h ]; then
    echo "build.sh: runc needs libseccomp-dev (apt-get install -y libseccomp-dev)" >&2
    exit 1
  fi
  CGO_ENABLED=1 tags=seccomp out="$nodebin" build runc "$here/go/runc" github.com/opencontainers/runc "-X main.version=$RUNC_VERSION"
  out="$nodebin" build crictl "$here/go/crictl" sigs.k8s.io/cri-tools/cmd/crictl "-X sigs.k8s.io/cri-tools/pkg/version.Version=v$CRICTL_VERSION"
  out="$nodebin" build kube-router "$here/go/kube-router" github.com/cloudnativelabs/kube-router/v2/cmd/kube-router \
    "-X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=v$KUBE_ROUTER_VERSION"
  out="$nodebin" build coredns "$here/go/coredns" github.com/coredns/coredns
  # Named with its version, so that a new pin builds a new binary in the same node folder.
  out="$nodebin" build "registry-$DISTRIBUTION_VERSION" "$here/go/distribution" github.com/distribution/distribution/v3/cmd/registry \
    "-X github.com/distribution/distribution/v3/version.version=v$DISTRIBUTION_VERSION"
  # Helm, for installing Crossplane from its chart (install/install.sh), versioned like the registry.
  out="$nodebin" build "helm-$HELM_VERSION" "$here/go/helm" helm.sh/helm/v3/cmd/helm \
    "-X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"
  # The agent-sandbox controller, versioned like the registry, and the manifests its release
  # deploys it with (RBAC, Namespace, ServiceAccount, Deployment), from the same module.
  out="$nodebin" build "agent-sandbox-controller-$AGENT_SANDBOX_VERSION" "$here/go/agent-sandbox" sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller \
    "-X sigs.k8s.io/agent-sandbox/internal/version.gitVersion=v$AGENT_SANDBOX_VERSION"
  if wanted "agent-sandbox-controller-$AGENT_SANDBOX_VERSION"; then
    asdir="$(cd "$here/go/agent-sandbox" && go list -m -f '{{.Dir}}' sigs.k8s.io/agent-sandbox)"
    rm -rf "$nodebin/agent-sandbox-$AGENT_SANDBOX_VERSION"
    mkdir -p "$nodebin/agent-sandbox-$AGENT_SANDBOX_VERSION"
    cp "$asdir/k8s/controller.yaml" "$asdir/k8s/rbac.generated.yaml" "$nodebin/agent-sandbox-$AGENT_SANDBOX_VERSION/"
    chmod -R u+w "$nodebin/agent-sandbox-$AGENT_SANDBOX_VERSION"
  fi
  # The live images' own programs (test/live/programs): the project's code, so always rebuilt
  # (Go's build cache makes that quick when nothing changed).
  if wanted programs; then
    t0=$(date +%s)
    programs="$(cd "$here/../../live/programs" && pwd)"
    (cd "$programs" && go mod download && go build -ldflags "-s -w" -o "$nodebin/programs/" ./cmd/...)
    log "programs: $(ls "$nodebin/programs" | tr '\n' ' ')built in $(( $(date +%s) - t0 ))s"
  fi
  cat > "$nodebin/paths.env" <<ENV
BERTH_NODE_BIN=$nodebin
ENV
fi

log "all done in $(( $(date +%s) - start ))s"
echo "BERTH_CP_BIN=$bin"
if [ "$node" = 1 ]; then echo "BERTH_NODE_BIN=$nodebin"; fi
