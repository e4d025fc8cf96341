#!/usr/bin/env bash
# Builds the Go floor of `npm run bench` (main.go here) with the local Go toolchain. Its one
# dependency, github.com/crossplane/function-sdk-go, is pinned in go.mod and comes from the Go
# module proxy, checked against go.sum. Nothing lands in the repository: the binary goes to
# ${BERTH_CACHE:-$HOME/.cache/berth}/bench/bin/, named after the sources and the Go version, so
# a binary already built is reused until one of them changes (--force rebuilds).
# If Go is missing or the build fails, the script fails with the reason and the bench runs
# without the Go floor. The last line printed is GO_FLOOR_BIN=<path>.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
force=0
[ "${1:-}" = "--force" ] && force=1

command -v go >/dev/null || { echo "build.sh: go not found in PATH" >&2; exit 1; }
sdk="$(sed -n 's/^\(require \|\t\)github.com\/crossplane\/function-sdk-go \(v[^ ]*\)$/\2/p' "$here/go.mod")"
[ -n "$sdk" ] || { echo "build.sh: $here/go.mod does not pin github.com/crossplane/function-sdk-go" >&2; exit 1; }
sources="$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" | sha256sum | cut -c1-12)"
bin="${BERTH_CACHE:-$HOME/.cache/berth}/bench/bin/go-noop-sdk-$sdk-$sources-$(go env GOVERSION)"

log() { printf '[go-noop %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ -x "$bin" ] && [ "$force" = 0 ]; then
  log "cached: $bin"
  echo "GO_FLOOR_BIN=$bin"
  exit 0
fi

mkdir -p "$(dirname "$bin")"
log "building against function-sdk-go $sdk (dependencies from the Go module proxy, checked against go.sum)"
# -mod=readonly: a go.mod or go.sum that no longer matches fails here instead of being rewritten.
(cd "$here" && CGO_ENABLED=0 go build -mod=readonly -buildvcs=false -trimpath -ldflags "-s -w" -o "$bin.tmp" .)
mv "$bin.tmp" "$bin"
log "built: $bin"
echo "GO_FLOOR_BIN=$bin"
