#!/usr/bin/env bash
# Installs Berth into the cluster of $KUBECONFIG, the way the README and docs/operations.md tell
# operators to: Crossplane (from its Helm chart, only when the cluster has none), then Berth's
# admission policies and RBAC, then the Function and Configuration packages, pulled by
# Crossplane's package manager from a registry. The live tier (test/live/cluster.ts) and
# `npm run conformance:kind` both install with this script; they differ only in how the
# cluster is made and how images reach it.
#
#   BERTH_OPERATORS_GROUP=platform-admins install/install.sh   # everything from the public registries
#
# Crossplane (BERTH_INSTALL_CROSSPLANE):
#   auto (default)  No Crossplane in the cluster (no Deployment crossplane-system/crossplane and no
#                   functions.pkg.crossplane.io CRD): install it with `helm upgrade --install` from
#                   the chart at CROSSPLANE_VERSION of test/conformance/controlplane/versions.env,
#                   webhooks on, args={--enable-operations}.
#                   Crossplane already there: never run helm; check it and stop (exit 1, before
#                   changing anything) with the command that fixes what is missing:
#                     - its version, read from the tag of the crossplane container's image, must be
#                       the tested minor (2.4.x) or a newer 2.x: older is untested, 3.x unknown;
#                     - the crossplane container's args must hold --enable-operations (Berth's
#                       lifecycle rules are a CronOperation);
#                     - with REGISTRY_CA_FILE, the Deployment must mount the ConfigMap
#                       berth-registry-ca (registryCaBundleConfig), or you add the CA to the one
#                       it mounts.
#                   Webhooks off is only warned about: Berth composes no Usages and needs none of
#                   Crossplane's webhooks, but it is tested with them on.
#   upgrade         Run helm on purpose: `helm upgrade --install` of release crossplane to
#                   CROSSPLANE_VERSION with --reset-then-reuse-values (--reuse-values with Helm
#                   older than 3.14), so every value already set (image overrides, resources, your
#                   own args...) is kept and only what Berth needs is added: --enable-operations to
#                   the args the Deployment runs with, and the registry CA if REGISTRY_CA_FILE is
#                   set. A Crossplane newer than CROSSPLANE_VERSION keeps its version (no downgrade).
#
# Operators (BERTH_OPERATORS_GROUP): admission/params.yaml's operatorsGroup, the only group whose
#   members may create WorkspaceProfiles, ExecutionWorkspaceClasses and DeveloperWorkspaces
#   (berth-operators-only). It has no default: set it to the group your identity provider puts
#   platform operators in. On a cluster where Berth is installed already it may be left unset,
#   and the group in berth-system/berth-admission is kept. A group every identity has
#   (system:authenticated, system:unauthenticated, system:serviceaccounts) is refused. Then the
#   identity running this script, read with `kubectl auth whoami`, must be in that group or in
#   system:masters (exempt), so that its next step, `kubectl apply -f examples/profile.yaml`, is
#   admitted; otherwise it stops before changing anything, naming the groups you are in.
#   BERTH_SKIP_OPERATOR_CHECK=1 skips that check, for an installer that will not operate Berth
#   (a CI identity).
#
# Other settings (environment), each optional:
#   BERTH_VERSION     package tag to install (default: v<version in package.json>)
#   BERTH_MIRROR      a registry path holding function-berth and configuration-berth, for
#                     clusters that pull through a mirror: an ImageConfig rewrites
#                     xpkg.crossplane.io/berth-dev/* to it, so the packages keep their public
#                     names (and the Configuration's dependency resolves to the same Function)
#   REGISTRY_CA_FILE  a PEM bundle Crossplane's package manager trusts for that registry (the
#                     ConfigMap crossplane-system/berth-registry-ca, key ca.crt)
#   CROSSPLANE_CHART  the chart: a folder, or a repo/chart name (default: crossplane-stable/crossplane
#                     at CROSSPLANE_VERSION from test/conformance/controlplane/versions.env)
#   CROSSPLANE_IMAGE  repository:tag of the Crossplane image, when helm runs (default: the chart's own)
#   CROSSPLANE_IMAGE_PULL_POLICY  when helm runs (default: the chart's own, IfNotPresent)
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
# A stop before anything is changed: what is wrong, then exactly what to do about it.
stop() { { printf 'install.sh: %s\n' "$1"; shift; for l in "$@"; do printf '  %s\n' "$l"; done; } >&2; exit 1; }
need() { command -v "$1" >/dev/null || { echo "install.sh needs $1 (set ${2:-it} or put it in PATH)" >&2; exit 1; }; }
need "$kubectl" KUBECTL
[ -n "${KUBECONFIG:-}" ] || { echo "install.sh: set KUBECONFIG to the cluster to install into" >&2; exit 1; }
mode="${BERTH_INSTALL_CROSSPLANE:-auto}"
case "$mode" in
  auto | upgrade) ;;
  *) stop "BERTH_INSTALL_CROSSPLANE=$mode: use auto (the default: install Crossplane only where there is none) or upgrade" ;;
esac
tested_minor="${CROSSPLANE_VERSION%.*}"
ca_configmap=berth-registry-ca
ca_key=ca.crt

# "2.4.1" from v2.4.1, 2.4.1-rc.0 or 2.4.1+meta; empty when it is no version.
semver() { sed -n 's/^v\{0,1\}\([0-9][0-9]*\.[0-9][0-9]*\.[0-9][0-9]*\).*$/\1/p' <<<"$1"; }
# Whether version $1 is older than $2 (both X.Y.Z).
older() {
  local a b i
  IFS=. read -r -a a <<<"$1"
  IFS=. read -r -a b <<<"$2"
  for i in 0 1 2; do
    [ "${a[i]}" -lt "${b[i]}" ] && return 0
    [ "${a[i]}" -gt "${b[i]}" ] && return 1
  done
  return 1
}
# A JSON array of strings, for helm --set-json (Crossplane's flags hold no control characters).
json_array() {
  local out="" a
  for a in "$@"; do
    a="${a//\\/\\\\}"
    out+="${out:+,}\"${a//\"/\\\"}\""
  done
  printf '[%s]' "$out"
}

# 1. What is in the cluster already, read before anything is changed.
#    Crossplane: the chart's Deployment, its crossplane container's image, args and env, and the
#    ConfigMap it mounts as the registry CA bundle (registryCaBundleConfig).
deployment="$("$kubectl" -n "$ns" get deployment crossplane --ignore-not-found -o jsonpath='{range .spec.template.spec.containers[?(@.name=="crossplane")]}image={.image}{"\n"}{range .args[*]}arg={@}{"\n"}{end}{range .env[*]}env={.name}={.value}{"\n"}{end}{end}{range .spec.template.spec.volumes[?(@.name=="ca-certs")]}ca={.configMap.name}{"\n"}{end}')"
crds="$("$kubectl" get crd functions.pkg.crossplane.io --ignore-not-found -o name)"
present=""
if [ -n "$deployment" ]; then
  present=deployment
elif [ -n "$crds" ]; then
  present=crds
fi

xp_image="" xp_args=() xp_ops=0 xp_webhooks=1 xp_ca="" xp_ca_key=""
while IFS= read -r line; do
  case "$line" in
    image=*) xp_image="${line#image=}" ;;
    arg=*)
      a="${line#arg=}"
      case "$a" in
        --enable-operations | --enable-operations=true) xp_ops=1 ;;
        --enable-operations=false) xp_ops=0; continue ;;
        --enable-webhooks=false | --webhook-enabled=false) xp_webhooks=0 ;;
      esac
      xp_args+=("$a")
      ;;
    env=ENABLE_WEBHOOKS=false | env=WEBHOOK_ENABLED=false) xp_webhooks=0 ;;
    env=CA_BUNDLE_PATH=*) xp_ca_key="${line#env=CA_BUNDLE_PATH=/certs/}" ;;
    ca=*) xp_ca="${line#ca=}" ;;
  esac
done <<<"$deployment"
# The chart's args are what follows `core start`.
if [ "${#xp_args[@]}" -ge 2 ] && [ "${xp_args[0]}" = core ] && [ "${xp_args[1]}" = start ]; then
  chart_xp_args=("${xp_args[@]:2}")
else
  chart_xp_args=("${xp_args[@]}")
fi
# The version: the image's tag (the chart's default tag is v<appVersion>, the Crossplane version).
xp_tag="${xp_image%@*}"
xp_tag="${xp_tag##*/}"
case "$xp_tag" in *:*) xp_tag="${xp_tag##*:}" ;; *) xp_tag="" ;; esac
xp_version="$(semver "$xp_tag")"

#    Berth's operators group: the one asked for, else the one a previous install left.
current_group="$("$kubectl" -n berth-system get configmap berth-admission --ignore-not-found -o jsonpath='{.data.operatorsGroup}')"
group="${BERTH_OPERATORS_GROUP:-$current_group}"
[ -n "$group" ] || stop "set BERTH_OPERATORS_GROUP to the group whose members operate Berth" \
  "Only its members (and system:masters) may create WorkspaceProfiles, ExecutionWorkspaceClasses and" \
  "DeveloperWorkspaces. Your own groups are what \`kubectl auth whoami\` prints; for example:" \
  "BERTH_OPERATORS_GROUP=platform-admins install/install.sh"
case "$group" in
  system:authenticated | system:unauthenticated | system:serviceaccounts)
    stop "BERTH_OPERATORS_GROUP=$group would make every identity in it a Berth operator; name a group of operators" ;;
esac
case "$group" in
  *[\"\\]* | *$'\n'* | *$'\r'* | *$'\t'*) stop "BERTH_OPERATORS_GROUP holds a quote, backslash or control character: name the group as your identity provider writes it" ;;
esac
[ -z "$current_group" ] || [ "$current_group" = "$group" ] || log "changing Berth's operators group from $current_group to $group"
#    Who runs this: its next step (kubectl apply -f examples/profile.yaml) needs it to be an operator.
if [ "${BERTH_SKIP_OPERATOR_CHECK:-}" != 1 ]; then
  if who="$("$kubectl" auth whoami -o jsonpath='{.status.userInfo.username}{"\n"}{range .status.userInfo.groups[*]}{@}{"\n"}{end}' 2>/dev/null)" && [ -n "$who" ]; then
    user="$(head -n1 <<<"$who")"
    groups="$(tail -n +2 <<<"$who")"
    if ! grep -qxF -e "$group" -e system:masters <<<"$groups"; then
      stop "you ($user) are not in $group, so Berth would refuse your next step, kubectl apply -f examples/profile.yaml" \
        "Your groups: $(paste -sd, - <<<"$groups" | sed 's/,/, /g')." \
        "Either add $user to $group in your identity provider, or set BERTH_OPERATORS_GROUP to a group of" \
        "operators you are in; if this identity will not operate Berth (a CI job), set BERTH_SKIP_OPERATOR_CHECK=1."
    fi
  else
    log "warning: \`kubectl auth whoami\` did not answer, so whether you are in $group is not checked"
  fi
fi

# 2. Crossplane: installed where there is none, checked where there is one, upgraded when asked.
chart_args=()
chart_version="$CROSSPLANE_VERSION"
chart_ref() {
  if [ -d "${CROSSPLANE_CHART:-}" ]; then
    chart_args+=("$CROSSPLANE_CHART")
  else
    local chart="${CROSSPLANE_CHART:-crossplane-stable/crossplane}"
    if [ "${chart%%/*}" = crossplane-stable ]; then
      "$helm" repo add crossplane-stable https://charts.crossplane.io/stable --force-update >/dev/null
    fi
    chart_args+=("$chart" --version "$chart_version")
  fi
}
ca_configmap_apply() {
  "$kubectl" -n "$ns" create configmap "$ca_configmap" --from-file="$ca_key=$REGISTRY_CA_FILE" --dry-run=client -o yaml |
    "$kubectl" apply --server-side -f - >/dev/null
}
image_args() {
  if [ -n "${CROSSPLANE_IMAGE:-}" ]; then
    chart_args+=(--set "image.repository=${CROSSPLANE_IMAGE%:*}" --set "image.tag=${CROSSPLANE_IMAGE##*:}")
  fi
  if [ -n "${CROSSPLANE_IMAGE_PULL_POLICY:-}" ]; then
    chart_args+=(--set "image.pullPolicy=$CROSSPLANE_IMAGE_PULL_POLICY")
  fi
}
ca_args=()
[ -z "${REGISTRY_CA_FILE:-}" ] || ca_args=(--set "registryCaBundleConfig.name=$ca_configmap" --set "registryCaBundleConfig.key=$ca_key")

if [ "$present" = crds ] && [ "$mode" != upgrade ]; then
  stop "Crossplane's CRDs are installed (crd/functions.pkg.crossplane.io) but there is no Deployment $ns/crossplane." \
    "Berth's admission policies exempt Crossplane as system:serviceaccount:$ns:crossplane, the chart's; if" \
    "Crossplane runs under another namespace or name, install Berth by hand (docs/operations.md) after replacing" \
    "that name in admission/policies.yaml. If the CRDs are left over from a Crossplane removed since, run" \
    "BERTH_INSTALL_CROSSPLANE=upgrade install/install.sh to install Crossplane with Helm."
fi

if [ -z "$present" ] || [ "$present" = crds ]; then
  # No Crossplane: from its chart, with what Berth needs. The registry CA, if any, goes into a
  # ConfigMap the chart mounts for the package manager (registryCaBundleConfig).
  need "$helm" HELM
  "$kubectl" create namespace "$ns" --dry-run=client -o yaml | "$kubectl" apply --server-side -f - >/dev/null
  chart_ref
  [ -z "${REGISTRY_CA_FILE:-}" ] || ca_configmap_apply
  chart_args+=("${ca_args[@]}")
  image_args
  # Operations (alpha in Crossplane v2) run Berth's lifecycle rules: operations/lifecycle.yaml.
  log "installing Crossplane $CROSSPLANE_VERSION with Helm (webhooks on, Operations on, Deployment runtime)"
  "$helm" upgrade --install crossplane "${chart_args[@]}" --namespace "$ns" --set webhooks.enabled=true --set 'args={--enable-operations}' --wait --timeout "$timeout"
elif [ "$mode" = upgrade ]; then
  # Asked to: the release's values kept, Berth's needs added.
  need "$helm" HELM
  # Never a downgrade: a newer Crossplane keeps its version (the chart's version is Crossplane's).
  if [ -n "$xp_version" ] && older "$CROSSPLANE_VERSION" "$xp_version"; then chart_version="$xp_version"; fi
  "$helm" status crossplane --namespace "$ns" >/dev/null 2>&1 ||
    stop "BERTH_INSTALL_CROSSPLANE=upgrade: Deployment $ns/crossplane is not Helm release crossplane in $ns, so install.sh cannot upgrade it" \
      "Upgrade Crossplane the way it was installed, to $tested_minor.x or a newer 2.x with --enable-operations in its args."
  reuse=--reset-then-reuse-values
  hv="$(semver "$("$helm" version --template '{{.Version}}' 2>/dev/null || true)")"
  if [ -z "$hv" ] || older "$hv" 3.14.0; then reuse=--reuse-values; fi
  chart_ref
  [ -z "${REGISTRY_CA_FILE:-}" ] || ca_configmap_apply
  chart_args+=("${ca_args[@]}")
  image_args
  [ "$xp_ops" = 1 ] || chart_xp_args+=(--enable-operations)
  log "upgrading Crossplane ${xp_version:-(version unknown)} to $chart_version with Helm ($reuse; args $(json_array "${chart_xp_args[@]}"))"
  "$helm" upgrade --install crossplane "${chart_args[@]}" --namespace "$ns" "$reuse" --set-json "args=$(json_array "${chart_xp_args[@]}")" --wait --timeout "$timeout"
else
  # Crossplane is there: use it as it is, or say what to change. Helm never runs here.
  fixed_args=("${chart_xp_args[@]}")
  [ "$xp_ops" = 1 ] || fixed_args+=(--enable-operations)
  problems=()
  if [ -z "$xp_version" ]; then
    problems+=("cannot read Crossplane's version from its image $xp_image (Deployment $ns/crossplane, container crossplane): run an image tagged v<version>")
  elif older "$xp_version" "$tested_minor.0" || [ "${xp_version%%.*}" != "${CROSSPLANE_VERSION%%.*}" ]; then
    problems+=("Crossplane $xp_version runs here; Berth is tested on $CROSSPLANE_VERSION and needs $tested_minor.x or a newer ${CROSSPLANE_VERSION%%.*}.x")
  fi
  [ "$xp_ops" = 1 ] || problems+=("the crossplane container's args lack --enable-operations (Berth's lifecycle rules run as a CronOperation)")
  if [ -n "${REGISTRY_CA_FILE:-}" ] && [ "$xp_ca" != "$ca_configmap" ]; then
    if [ -z "$xp_ca" ]; then
      problems+=("REGISTRY_CA_FILE is set but Crossplane trusts no registry CA bundle (registryCaBundleConfig)")
    else
      stop "REGISTRY_CA_FILE is set but Crossplane trusts the CA bundle in ConfigMap $ns/$xp_ca (key ${xp_ca_key:-?}), not $ca_configmap" \
        "Add your registry's CA ($REGISTRY_CA_FILE) to that ConfigMap, restart Crossplane" \
        "(kubectl -n $ns rollout restart deployment/crossplane), and run install.sh again without REGISTRY_CA_FILE."
    fi
  fi
  if [ "${#problems[@]}" -gt 0 ]; then
    to="$CROSSPLANE_VERSION"
    if [ -n "$xp_version" ] && ! older "$xp_version" "$tested_minor.0" && [ "${xp_version%%.*}" = "${CROSSPLANE_VERSION%%.*}" ]; then to="$xp_version"; fi
    fix=()
    [ -z "${REGISTRY_CA_FILE:-}" ] || fix+=("kubectl -n $ns create configmap $ca_configmap --from-file=$ca_key=$REGISTRY_CA_FILE")
    helm_fix="helm upgrade crossplane crossplane-stable/crossplane --namespace $ns --version $to"
    if [ "$to" = "$xp_version" ]; then helm_fix+=" --reuse-values"; else helm_fix+=" --reset-then-reuse-values"; fi
    [ "$to" = "$xp_version" ] || reset_note=" (--reset-then-reuse-values needs Helm 3.14 or later; before, --reuse-values)"
    helm_fix+=" --set-json 'args=$(json_array "${fixed_args[@]}")'"
    [ -z "${REGISTRY_CA_FILE:-}" ] || helm_fix+=" --set registryCaBundleConfig.name=$ca_configmap --set registryCaBundleConfig.key=$ca_key"
    fix+=("$helm_fix --wait")
    lines=()
    for p in "${problems[@]}"; do lines+=("- $p"); done
    lines+=("Nothing was changed. If Crossplane is Helm release crossplane (its chart from https://charts.crossplane.io/stable,"
      "the repository added as crossplane-stable), this keeps its other values and fixes it${reset_note:-}:")
    for f in "${fix[@]}"; do lines+=("  $f"); done
    lines+=("or run BERTH_INSTALL_CROSSPLANE=upgrade install/install.sh, which runs the same for you. Installed some other way:"
      "run Crossplane $to with --enable-operations in the args of Deployment $ns/crossplane's container crossplane."
      "Then run install.sh again.")
    stop "Crossplane is installed already, and is not what Berth needs:" "${lines[@]}"
  fi
  [ "$xp_webhooks" = 1 ] || log "warning: Crossplane's webhooks are off; Berth needs none of them, but is tested with them on"
  [ -z "${REGISTRY_CA_FILE:-}" ] || ca_configmap_apply
  log "using the Crossplane $xp_version already installed (Operations on; Helm not run, its values untouched)"
fi
"$kubectl" wait --for=condition=Established crd/functions.pkg.crossplane.io crd/configurations.pkg.crossplane.io crd/imageconfigs.pkg.crossplane.io --timeout="$timeout" >/dev/null

# 3. A mirror: packages keep their public names, Crossplane pulls them from the mirror.
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

# 4. Berth's admission policies and RBAC: a Configuration package cannot carry them. rbac.yaml
#    aggregates into Crossplane's ClusterRole exactly the kinds Berth composes. params.yaml goes
#    in with operatorsGroup set to the group above.
log "applying admission/ (policies, parameters with operators group $group, RBAC)"
params="" set_group=0
while IFS= read -r l; do
  case "$l" in "  operatorsGroup: "*) l="  operatorsGroup: \"$group\"" set_group=1 ;; esac
  params+="$l"$'\n'
done <admission/params.yaml
[ "$set_group" = 1 ] || stop "admission/params.yaml has no line '  operatorsGroup: ...' to set"
"$kubectl" apply --server-side -f - >/dev/null <<<"$params"
"$kubectl" apply --server-side -f admission/policies.yaml -f admission/rbac.yaml >/dev/null

# 5. The Function, pinned to this release under the name the Compositions call, then the
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
