package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// useFinishFile points finish/run at a private file for the test.
func useFinishFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "berth-finish")
	old := finishPath
	finishPath = path
	t.Cleanup(func() { finishPath = old })
	return path
}

func waitExit(t *testing.T, done <-chan int) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(5 * time.Second):
		t.Fatal("run did not exit")
		return -1
	}
}

func TestRunServesAndExitsWithFinishCode(t *testing.T) {
	finish := useFinishFile(t)
	// A finish file left by an earlier container must not stop this run.
	if err := os.WriteFile(finish, []byte("9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	t.Setenv("BERTH_WORKSPACE_DIR", ws)
	t.Setenv("BERTH_PROBE_LISTEN", "127.0.0.1:0")
	t.Setenv("BERTH_TEST_SECRET_ENV", "value-that-must-not-print")

	v, _, done := startDispatch(t, "run")
	if v["ok"] != true || v["uid"] == nil || v["hostname"] == nil || v["writable"] == nil {
		t.Fatalf("run identity line: %v", v)
	}
	if strings.Contains(strings.Join(anyStrings(v["envNames"]), ","), "value-that-must-not-print") {
		t.Fatal("an environment value was printed")
	}
	marker := filepath.Join(ws, ".berth-runtime-started")
	if v["startedFile"] != marker {
		t.Fatalf("startedFile = %v, want %s", v["startedFile"], marker)
	}
	stamp, err := os.ReadFile(marker)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.RFC3339, strings.TrimSpace(string(stamp))); err != nil {
		t.Fatalf("marker %q is not RFC3339: %v", stamp, err)
	}

	tcp, code := probe(t, "tcp", v["listen"].(string))
	wantCode(t, code, exitOK, tcp)
	if tcp["banner"] != wantBanner(t) {
		t.Fatalf("banner %v", tcp)
	}

	time.Sleep(3 * finishPoll) // the stale file must have been ignored
	select {
	case code := <-done:
		t.Fatalf("run exited %d on a stale finish file", code)
	default:
	}

	fin, code := probe(t, "finish", "7")
	wantCode(t, code, exitOK, fin)
	if fin["code"].(float64) != 7 || fin["path"] != finish {
		t.Fatalf("finish result %v", fin)
	}
	if got := waitExit(t, done); got != 7 {
		t.Fatalf("run exited %d, want 7", got)
	}
}

func TestRunFinishDefaultsAndSignals(t *testing.T) {
	t.Setenv("BERTH_WORKSPACE_DIR", "")
	t.Setenv("BERTH_PROBE_LISTEN", "127.0.0.1:0")

	t.Run("finish without code", func(t *testing.T) {
		useFinishFile(t)
		v, _, done := startDispatch(t, "run")
		if v["startedFile"] != "" {
			t.Fatalf("startedFile without BERTH_WORKSPACE_DIR: %v", v)
		}
		if _, code := probe(t, "finish"); code != exitOK {
			t.Fatal("finish failed")
		}
		if got := waitExit(t, done); got != 0 {
			t.Fatalf("run exited %d, want 0", got)
		}
	})
	t.Run("empty finish file", func(t *testing.T) {
		finish := useFinishFile(t)
		_, _, done := startDispatch(t, "run")
		time.Sleep(finishPoll) // let run clear stale files first
		if err := os.WriteFile(finish, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := waitExit(t, done); got != 0 {
			t.Fatalf("run exited %d, want 0", got)
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		useFinishFile(t)
		_, cancel, done := startDispatch(t, "run")
		cancel()
		if got := waitExit(t, done); got != 0 {
			t.Fatalf("run exited %d after SIGTERM, want 0", got)
		}
	})
	t.Run("marker cannot be written", func(t *testing.T) {
		useFinishFile(t)
		t.Setenv("BERTH_WORKSPACE_DIR", filepath.Join(t.TempDir(), "missing"))
		v, cancel, _ := startDispatch(t, "run")
		defer cancel()
		if v["ok"] != false || v["reason"] != "no such file or directory" || v["listen"] == "" {
			t.Fatalf("result %v; want ok=false naming the marker error, still listening", v)
		}
	})
}

func anyStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}
