// Command checkout is the workspace's checkout init container. It clones
// BERTH_SOURCE_REPOSITORY into BERTH_CHECKOUT_DIR with go-git, leaves the
// worktree detached at BERTH_SOURCE_REVISION (a branch, a tag or a full
// commit hash), and records what it checked out in
// BERTH_CHECKOUT_DIR/../.berth-checkout.json.
//
// GIT_TOKEN, when set, is sent as HTTP basic auth (user "x-access-token").
// It is never printed or written anywhere.
//
// Exit codes: 0 checked out, 1 clone/fetch/checkout failed, 2 bad
// configuration (a variable missing or malformed).
package main

import (
	"context"
	"net"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The image has no libc; make the pure-Go resolver (which reads
	// /etc/resolv.conf) explicit even though CGO_ENABLED=0 already implies it.
	net.DefaultResolver.PreferGo = true

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := run(ctx, os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
