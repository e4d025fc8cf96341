package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// finishPath is the file through which `finish` tells `run` to exit. A
// variable so tests can point it elsewhere.
var finishPath = "/tmp/berth-finish"

const (
	finishPoll           = 200 * time.Millisecond
	defaultListenAddress = ":8080"
	startedMarker        = ".berth-runtime-started"
)

type runResult struct {
	identity
	Listen      string `json:"listen"`
	StartedFile string `json:"startedFile"` // "" when BERTH_WORKSPACE_DIR is unset
	Error       string `json:"error"`
	Reason      string `json:"reason"`
}

// cmdRun is the runtime's main behaviour: announce itself, mark the
// workspace as started, serve the banner, and exit with the code `finish`
// leaves in finishPath (or 0 on SIGTERM/SIGINT).
func cmdRun(ctx context.Context, out *output, args []string) int {
	if len(args) != 0 {
		return out.usage("", "run takes no arguments")
	}

	// A finish file left from an earlier container run (if /tmp outlives
	// the container) was addressed to that run, not this one.
	if err := os.Remove(finishPath); err == nil {
		fmt.Fprintf(out.log, "workspace-probe run: removed stale %s\n", finishPath)
	} else if !errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(out.log, "workspace-probe run: removing stale %s: %v\n", finishPath, err)
	}

	res := runResult{identity: inspect()}

	if dir := os.Getenv("BERTH_WORKSPACE_DIR"); dir != "" {
		res.StartedFile = filepath.Join(dir, startedMarker)
		stamp := time.Now().UTC().Format(time.RFC3339) + "\n"
		if err := os.WriteFile(res.StartedFile, []byte(stamp), 0o644); err != nil {
			res.Error, res.Reason = "writing "+res.StartedFile+": "+err.Error(), reason(err)
		}
	}

	addr := os.Getenv("BERTH_PROBE_LISTEN")
	if addr == "" {
		addr = defaultListenAddress
	}
	res.Listen = addr
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		res.OK, res.Error, res.Reason = false, errText(err), reason(err)
		return out.result(false, res)
	}
	res.Listen = ln.Addr().String()
	// A failed marker write is reported (ok:false) but the runtime keeps
	// serving, so the harness can still exec into it and look.
	res.OK = res.Error == ""
	out.print(res)

	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	go serveBanner(serveCtx, ln, bannerLine(), out.log)

	return waitForFinish(ctx, out)
}

// waitForFinish polls finishPath and returns the exit code written there;
// on SIGTERM/SIGINT (ctx done) it returns 0.
func waitForFinish(ctx context.Context, out *output) int {
	tick := time.NewTicker(finishPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(out.log, "workspace-probe run: signalled, exiting 0\n")
			return exitOK
		case <-tick.C:
		}
		data, err := os.ReadFile(finishPath)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			fmt.Fprintf(out.log, "workspace-probe run: reading %s: %v\n", finishPath, err)
			continue
		}
		code, err := parseExitCode(string(data))
		if err != nil {
			fmt.Fprintf(out.log, "workspace-probe run: %s: %v; exiting 1\n", finishPath, err)
			return exitFail
		}
		fmt.Fprintf(out.log, "workspace-probe run: %s asks for exit %d\n", finishPath, code)
		return code
	}
}

// parseExitCode accepts "" (meaning 0) or an integer 0..255.
func parseExitCode(raw string) (int, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return 0, nil
	}
	code, err := strconv.Atoi(raw)
	if err != nil || code < 0 || code > 255 {
		return 0, errors.New("exit code must be an integer from 0 to 255")
	}
	return code, nil
}

type finishResult struct {
	OK     bool   `json:"ok"`
	Path   string `json:"path"`
	Code   int    `json:"code"`
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

// cmdFinish tells the `run` process in the same container to exit with
// CODE (default 0).
func cmdFinish(_ context.Context, out *output, args []string) int {
	pos, err := parseArgs(args, nil)
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) > 1 {
		return out.usage("", "at most one CODE")
	}
	code := 0
	if len(pos) == 1 {
		if code, err = parseExitCode(pos[0]); err != nil || pos[0] == "" {
			return out.usage("", "CODE must be an integer from 0 to 255")
		}
	}
	res := finishResult{Path: finishPath, Code: code}
	err = writeAtomically(finishPath, strconv.Itoa(code)+"\n", 0o600)
	res.OK, res.Error, res.Reason = err == nil, errText(err), reason(err)
	return out.result(res.OK, res)
}

// writeAtomically writes via a temporary file in the same directory and a
// rename, so a reader (`run` polling the finish file, Berth collecting a
// verification result) never sees a half-written file: an empty finish
// file would mean exit 0. The mode is set before the rename for the same
// reason; CreateTemp alone would leave 0600.
func writeAtomically(path, content string, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
