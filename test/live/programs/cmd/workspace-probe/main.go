// Command workspace-probe is the workspace runtime image's entrypoint (the
// "run" subcommand) and the test harness's in-container probe, run with
// `crictl exec <container> /workspace-probe <subcommand> ...`.
//
// Every subcommand prints exactly one line of JSON on stdout, which the
// harness parses, and exits 0 when the probe succeeded, 1 when it was
// refused or failed (the JSON's "error" and "reason" say why), and 2 on a
// usage error. Diagnostics that are not the result go to stderr. The one
// exception is say-and-exit, which stands in for a verification command
// and prints only its TEXT.
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// command is one subcommand. It prints its JSON line through out and
// returns the exit code.
type command struct {
	usage string
	run   func(ctx context.Context, out *output, args []string) int
}

var commands = map[string]command{
	"run":          {"run", cmdRun},
	"finish":       {"finish [CODE]", cmdFinish},
	"listen":       {"listen PORT", cmdListen},
	"tcp":          {"tcp HOST:PORT [--timeout DURATION]", cmdTCP},
	"dns":          {"dns NAME [--timeout DURATION]", cmdDNS},
	"http":         {"http URL [--bearer-file PATH] [--ca-file PATH] [--timeout DURATION]", cmdHTTP},
	"mcp":          {"mcp URL --script JSON [--timeout DURATION]", cmdMCP},
	"kube":         {"kube PATH [--method GET|POST|PUT|PATCH|DELETE] [--body JSON] [--timeout DURATION]", cmdKube},
	"write":        {"write PATH SIZE", cmdWrite},
	"write-text":   {"write-text PATH TEXT", cmdWriteText},
	"read":         {"read PATH", cmdRead},
	"inspect":      {"inspect", cmdInspect},
	"find-string":  {"find-string NEEDLE ROOT...", cmdFindString},
	"verify":       {"verify [--timeout DURATION]", cmdVerify},
	"say-and-exit": {"say-and-exit CODE TEXT", cmdSayAndExit},
}

func main() {
	// The image has no libc and no nsswitch; make the pure-Go resolver
	// (which reads /etc/resolv.conf) explicit even though CGO_ENABLED=0
	// already implies it.
	net.DefaultResolver.PreferGo = true

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &output{w: stdout, log: stderr}
	if len(args) == 0 {
		return out.usage("", "a subcommand is required: "+subcommandList())
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return out.usage("", fmt.Sprintf("unknown subcommand %q; one of: %s", args[0], subcommandList()))
	}
	out.command = args[0]
	out.usageText = "workspace-probe " + cmd.usage
	code := cmd.run(ctx, out, args[1:])
	if !out.printed {
		// Every path should have printed; never leave the harness without
		// its line.
		out.print(map[string]any{"ok": code == exitOK, "error": "no result recorded"})
	}
	return code
}

func subcommandList() string {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
