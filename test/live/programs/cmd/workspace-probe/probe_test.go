package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
)

// Helper-process modes: the test binary re-runs itself to probe under
// conditions that must not apply to the whole test process (a file-size
// limit, another uid), or to be the command `verify` runs ("argv": the
// probe with the process's own arguments; "interleave": writes to stdout
// and stderr in turn).
const (
	helperModeEnv = "BERTH_PROBE_TEST_HELPER"
	helperArgsEnv = "BERTH_PROBE_TEST_ARGS"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperModeEnv) {
	case "":
		os.Exit(m.Run())
	case "argv":
		// m.Run, which parses the test flags, never runs here, so the
		// arguments are the probe's.
		os.Exit(dispatch(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	case "interleave":
		fmt.Fprint(os.Stdout, "out1\n")
		fmt.Fprint(os.Stderr, "err1\n")
		fmt.Fprint(os.Stdout, "out2\n")
		os.Exit(0)
	case "fsize":
		// Ignore SIGXFSZ so exceeding the limit is an EFBIG write error
		// rather than death by signal.
		signal.Ignore(syscall.SIGXFSZ)
		lim := syscall.Rlimit{Cur: 3 << 19, Max: 3 << 19} // 1.5 MiB
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			os.Exit(99)
		}
	}
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(helperArgsEnv)), &args); err != nil {
		fmt.Fprintln(os.Stderr, "helper args:", err)
		os.Exit(99)
	}
	os.Exit(dispatch(context.Background(), args, os.Stdout, os.Stderr))
}

// probe runs a subcommand in-process and checks the stdout contract: one
// line holding one JSON object.
func probe(t *testing.T, args ...string) (map[string]any, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), args, &stdout, &stderr)
	return parseLine(t, stdout.String(), args), code
}

func parseLine(t *testing.T, out string, args []string) map[string]any {
	t.Helper()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("%v: stdout is not exactly one line: %q", args, out)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: stdout is not JSON: %q: %v", args, out, err)
	}
	if _, ok := v["ok"].(bool); !ok {
		t.Fatalf("%v: no boolean ok in %q", args, out)
	}
	return v
}

func wantCode(t *testing.T, got, want int, v map[string]any) {
	t.Helper()
	if got != want {
		t.Fatalf("exit %d, want %d; result %v", got, want, v)
	}
	if ok := v["ok"].(bool); ok != (want == exitOK) {
		t.Fatalf("ok=%t with exit %d; result %v", ok, got, v)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"bogus"},
		{"tcp"},
		{"tcp", "no-port"},
		{"tcp", "127.0.0.1:1", "--timeout", "soon"},
		{"tcp", "127.0.0.1:1", "--nope", "1"},
		{"tcp", "127.0.0.1:1", "--timeout"},
		{"dns"},
		{"http", "ftp://example.invalid/"},
		{"kube", "api/v1/pods"},
		{"write", "/tmp/x"},
		{"write", "/tmp/x", "5Mb"},
		{"write", "/tmp/x", "-1"},
		{"read"},
		{"finish", "256"},
		{"finish", "x"},
		{"listen", "port"},
		{"listen", "70000"},
		{"inspect", "extra"},
		{"run", "extra"},
		{"find-string", "needle"},
		{"find-string", "", "/tmp"},
		{"write-text", "/tmp/x"},
		{"write-text", "/tmp/x", "-text"},
		{"say-and-exit", "0"},
		{"say-and-exit", "126", "x"},
		{"say-and-exit", "-1", "x"},
		{"say-and-exit", "x", "x"},
	} {
		v, code := probe(t, args...)
		wantCode(t, code, exitUsage, v)
		if !strings.HasPrefix(v["error"].(string), "usage error: ") || v["usage"] == "" {
			t.Errorf("%v: result %v lacks a usage error and usage text", args, v)
		}
	}
}

func TestReasonPhrases(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, "connection refused"},
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}, "i/o timeout"},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), "i/o timeout"},
		{&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, "no such host"},
		{&os.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}, "no space left on device"},
		{&os.PathError{Op: "open", Path: "/x", Err: syscall.EROFS}, "read-only file system"},
		{&os.PathError{Op: "write", Path: "/x", Err: syscall.EDQUOT}, "disk quota exceeded"},
		{&net.DNSError{Err: "read udp [::1]:1->[::1]:53: read: connection refused", Name: "x", Server: "[::1]:53"}, "connection refused"},
		{errors.New("plain"), ""},
		{nil, ""},
	} {
		if got := reason(tc.err); got != tc.want {
			t.Errorf("reason(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for raw, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "5Mi": 5 << 20, "1Gi": 1 << 30, "3Ki": 3 << 10, "2Ti": 2 << 40, "1k": 1000, "2M": 2e6, "1G": 1e9,
	} {
		if got, err := parseSize(raw); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "Mi", "1.5Gi", "5MB", "-1", "99999999999Ti"} {
		if _, err := parseSize(raw); err == nil {
			t.Errorf("parseSize(%q) accepted", raw)
		}
	}
}
