package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"slices"
	"testing"
	"time"
)

// startDispatch runs a long-lived subcommand (listen, run) and returns its
// first stdout line, a cancel func standing for SIGTERM, and a channel with
// its exit code.
func startDispatch(t *testing.T, args ...string) (map[string]any, context.CancelFunc, <-chan int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	finished := make(chan struct{})
	go func() {
		done <- dispatch(ctx, args, pw, io.Discard)
		pw.Close()
		close(finished)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(5 * time.Second):
			t.Errorf("%v did not stop after cancel", args)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("%v: reading first line: %v", args, err)
	}
	go io.Copy(io.Discard, pr) // nothing more is expected, but never block the writer
	var v map[string]any
	if err := json.Unmarshal([]byte(line), &v); err != nil {
		t.Fatalf("%v: %q is not JSON: %v", args, line, err)
	}
	return v, cancel, done
}

func wantBanner(t *testing.T) string {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return "berth-probe " + host
}

func TestListenAndTCP(t *testing.T) {
	v, cancel, done := startDispatch(t, "listen", "127.0.0.1:0")
	if v["ok"] != true || v["banner"] != wantBanner(t) {
		t.Fatalf("listen result %v", v)
	}
	addr := v["listen"].(string)

	res, code := probe(t, "tcp", addr, "--timeout", "2s")
	wantCode(t, code, exitOK, res)
	if res["banner"] != wantBanner(t) || res["target"] != addr || res["error"] != "" {
		t.Fatalf("tcp result %v", res)
	}

	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("listen exited %d after SIGTERM, want 0", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("listen did not exit after SIGTERM")
	}
}

func TestListenPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	v, code := probe(t, "listen", ln.Addr().String())
	wantCode(t, code, exitFail, v)
	if v["reason"] != "address already in use" {
		t.Fatalf("result %v", v)
	}
}

func TestTCPRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	v, code := probe(t, "tcp", addr)
	wantCode(t, code, exitFail, v)
	if v["reason"] != "connection refused" || v["banner"] != "" {
		t.Fatalf("result %v", v)
	}
}

// A destination that accepts but says nothing is still reachable; the probe
// gives up on the banner after a second.
func TestTCPSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, silent
		}
	}()
	start := time.Now()
	v, code := probe(t, "tcp", ln.Addr().String())
	wantCode(t, code, exitOK, v)
	if v["banner"] != "" {
		t.Fatalf("result %v", v)
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 3*time.Second {
		t.Fatalf("took %s, want about the 1s banner wait", d)
	}
}

// localhost comes from /etc/hosts through the pure-Go resolver: no network.
func TestDNSLocalhost(t *testing.T) {
	v, code := probe(t, "dns", "localhost")
	wantCode(t, code, exitOK, v)
	var addrs []string
	for _, a := range v["addresses"].([]any) {
		addrs = append(addrs, a.(string))
	}
	if !slices.Contains(addrs, "127.0.0.1") && !slices.Contains(addrs, "::1") {
		t.Fatalf("result %v", v)
	}
}
