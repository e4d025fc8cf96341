#!/usr/bin/env bash
# Builds the peer reference of `npm run bench`: crossplane-contrib/function-go-templating at a
# pinned release, compiled here with the local Go toolchain. Nothing lands in the repository:
# the binary goes to ${BERTH_CACHE:-$HOME/.cache/berth}/bench/bin/.
#
# Where the source comes from, in this order:
#   1. the Go module proxy (go install MODULE@VERSION);
#   2. if the proxy refuses the module (this workplace's proxy serves the module's .info but
#      answers 403 for its .mod and .zip, for every release), a source tree of exactly that
#      release: $GO_TEMPLATING_SRC, either a checked-out directory or a git directory (a
#      clone or mirror) holding the tag, whose commit must be PINNED_COMMIT. Its dependencies
#      still come from the Go module proxy, checked against the release's own go.sum.
# If neither works the script fails with the reason, and the bench runs without the peer.
#
# The last line printed is PEER_BIN=<path>. A binary already built is reused (--force rebuilds).
set -euo pipefail

MODULE=github.com/crossplane-contrib/function-go-templating
# v0.12.2 (2026-06-15) is the newest release. Pinned by tag and by commit.
VERSION=v0.12.2
PINNED_COMMIT=0a1e6d386f4363fae257ddbfb5b497416370e830

force=0
[ "${1:-}" = "--force" ] && force=1

command -v go >/dev/null || { echo "build.sh: go not found in PATH" >&2; exit 1; }
cache="${BERTH_CACHE:-$HOME/.cache/berth}/bench"
goversion="$(go env GOVERSION)"
bin="$cache/bin/function-go-templating-$VERSION-$goversion"
mkdir -p "$cache/bin" "$cache/src"

log() { printf '[go-templating %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ -x "$bin" ] && [ "$force" = 0 ]; then
  log "cached: $bin"
  echo "PEER_BIN=$bin"
  exit 0
fi

export CGO_ENABLED=0
export GOFLAGS="${GOFLAGS:-} -buildvcs=false -trimpath"
ldflags="-s -w"

# 1. The Go module proxy.
tmpbin="$(mktemp -d "$cache/bin/.install.XXXXXX")"
trap 'rm -rf "$tmpbin"' EXIT
log "trying the Go module proxy: go install $MODULE@$VERSION"
if proxy_err="$(GOBIN="$tmpbin" go install -ldflags "$ldflags" "$MODULE@$VERSION" 2>&1)"; then
  mv "$tmpbin/function-go-templating" "$bin"
  log "built from the module proxy: $bin"
  echo "PEER_BIN=$bin"
  exit 0
fi
log "the module proxy did not serve it:"
printf '%s\n' "$proxy_err" | sed 's/^/    /' >&2

# 2. A source tree of the pinned release.
src="${GO_TEMPLATING_SRC:-}"
if [ -z "$src" ]; then
  echo "build.sh: cannot build $MODULE@$VERSION: the Go module proxy refused it (above), and GO_TEMPLATING_SRC is not set." >&2
  echo "build.sh: set GO_TEMPLATING_SRC to a clone (or bare mirror) of https://$MODULE holding tag $VERSION." >&2
  exit 1
fi
tree="$cache/src/function-go-templating-$VERSION"
if git --git-dir="$src" rev-parse --git-dir >/dev/null 2>&1 || git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  gitdir="$(git -C "$src" rev-parse --absolute-git-dir 2>/dev/null || (cd "$src" && pwd))"
  commit="$(git --git-dir="$gitdir" rev-parse "$VERSION^{commit}")"
  if [ "$commit" != "$PINNED_COMMIT" ]; then
    echo "build.sh: tag $VERSION in $src is $commit, expected $PINNED_COMMIT" >&2
    exit 1
  fi
  rm -rf "$tree" && mkdir -p "$tree"
  git --git-dir="$gitdir" archive "$PINNED_COMMIT" | tar -x -C "$tree"
  log "source: $src at $VERSION ($commit), exported to $tree"
else
  tree="$(cd "$src" && pwd)"
  log "source: directory $tree (not a git checkout: its version is not verified)"
fi
grep -q "^module $MODULE\$" "$tree/go.mod" || { echo "build.sh: $tree/go.mod is not module $MODULE" >&2; exit 1; }
log "downloading dependencies from the Go module proxy (checked against go.sum)"
(cd "$tree" && go mod download)
log "building"
(cd "$tree" && go build -ldflags "$ldflags" -o "$bin.tmp" .)
mv "$bin.tmp" "$bin"
log "built from source: $bin"
echo "PEER_BIN=$bin"
