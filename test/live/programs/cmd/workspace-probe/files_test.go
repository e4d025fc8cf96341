package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteSuccess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fill")
	const size = 2<<20 + 5 // crosses a chunk boundary and ends mid-chunk
	v, code := probe(t, "write", path, "2097157")
	wantCode(t, code, exitOK, v)
	if v["requested"].(float64) != size || v["written"].(float64) != size || v["path"] != path {
		t.Fatalf("result %v", v)
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) != size {
		t.Fatalf("file has %d bytes (err %v), want %d", len(data), err, size)
	}
	if bytes.IndexByte(data, 0) >= 0 {
		t.Fatal("written data contains zero bytes")
	}
}

// /dev/full fails every write with ENOSPC, for any user: the "volume full"
// path without a real tmpfs.
func TestWriteNoSpace(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("/dev/full is not available:", err)
	}
	v, code := probe(t, "write", "/dev/full", "1Mi")
	wantCode(t, code, exitFail, v)
	if v["reason"] != "no space left on device" || !strings.Contains(v["error"].(string), "no space left on device") {
		t.Fatalf("result %v", v)
	}
}

// A write that stops part way keeps what was written and reports it. The
// limit comes from RLIMIT_FSIZE in a helper process (EFBIG), the one
// unprivileged way to make a write fail after some data.
func TestWritePartialFileIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "partial")
	v, code := runHelper(t, "fsize", nil, "write", path, "4Mi")
	wantCode(t, code, exitFail, v)
	const limit = 3 << 19
	if v["written"].(float64) != limit || v["reason"] != "file too large" {
		t.Fatalf("result %v; want written %d and reason \"file too large\"", v, limit)
	}
	if info, err := os.Stat(path); err != nil || info.Size() != limit {
		t.Fatalf("partial file: %v, %v; want %d bytes kept", info, err, limit)
	}
}

// Writing under a read-only directory fails with "permission denied" (the
// unprivileged stand-in for EROFS, which needs a read-only mount). Root
// bypasses directory permissions, so as root the probe runs as uid 65532,
// as it does in the workspace image.
func TestWriteUnderReadOnlyDirectory(t *testing.T) {
	base, err := os.MkdirTemp("", "berth-probe-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "ro"), 0o755); os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(base, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o555); err != nil { // umask-proof
		t.Fatal(err)
	}
	target := filepath.Join(ro, "file")

	var v map[string]any
	var code int
	if os.Geteuid() != 0 {
		v, code = probe(t, "write", target, "1Mi")
	} else {
		v, code = runHelper(t, "as-user", &syscall.Credential{Uid: 65532, Gid: 65532}, "write", target, "1Mi")
	}
	wantCode(t, code, exitFail, v)
	if v["reason"] != "permission denied" || v["written"].(float64) != 0 {
		t.Fatalf("result %v; want reason \"permission denied\" and nothing written", v)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file created under read-only directory: %v", err)
	}
}

// runHelper re-runs the test binary as the probe under a helper mode.
func runHelper(t *testing.T, mode string, cred *syscall.Credential, args ...string) (map[string]any, int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		// The test binary lives in a directory only its owner may enter;
		// give the other user a copy it can execute.
		dir, err := os.MkdirTemp("", "berth-probe-bin-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(self)
		if err != nil {
			t.Fatal(err)
		}
		self = filepath.Join(dir, "probe.test")
		if err := os.WriteFile(self, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	encoded, _ := json.Marshal(args)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), helperModeEnv+"="+mode, helperArgsEnv+"="+string(encoded))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil && cred != nil:
		t.Skipf("cannot run the probe as uid %d: %v", cred.Uid, err)
	case err != nil:
		t.Fatal(err)
	}
	if code == 99 {
		t.Fatalf("helper setup failed: %s", stderr.String())
	}
	return parseLine(t, stdout.String(), args), code
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v, code := probe(t, "read", small)
	wantCode(t, code, exitOK, v)
	if v["content"] != "hello\n" || v["truncated"] != false {
		t.Fatalf("result %v", v)
	}

	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("a"), 70<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	v, code = probe(t, "read", big)
	wantCode(t, code, exitOK, v)
	if len(v["content"].(string)) != 64<<10 || v["truncated"] != true {
		t.Fatalf("big file: %d bytes, truncated %v", len(v["content"].(string)), v["truncated"])
	}

	v, code = probe(t, "read", filepath.Join(dir, "missing"))
	wantCode(t, code, exitFail, v)
	if v["reason"] != "no such file or directory" {
		t.Fatalf("result %v", v)
	}
}

func TestWriteText(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "src", "pkg", "deep", "change.go")
	// No trailing newline, a leading dash (after --), and multi-byte text:
	// the file must hold exactly these bytes.
	const text = "-package deep\n\nconst Greeting = \"héllo\" // ✓"
	v, code := probe(t, "write-text", path, "--", text)
	wantCode(t, code, exitOK, v)
	if v["path"] != path || v["written"].(float64) != float64(len(text)) || v["error"] != "" || v["reason"] != "" {
		t.Fatalf("result %v", v)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != text {
		t.Fatalf("file holds %q (err %v), want %q", data, err, text)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o644&^umask(t) {
		t.Fatalf("file mode %v, %v; want 0644 less the umask", info.Mode(), err)
	}
	if info, err := os.Stat(filepath.Dir(path)); err != nil || info.Mode().Perm() != 0o755&^umask(t) {
		t.Fatalf("directory mode %v, %v; want 0755 less the umask", info.Mode(), err)
	}

	// Rewriting replaces the whole content, shorter included, and keeps
	// an existing file's mode, so a patch carries only the text change.
	if err := os.Chmod(path, 0o755); err != nil {
		t.Fatal(err)
	}
	v, code = probe(t, "write-text", path, "x")
	wantCode(t, code, exitOK, v)
	if data, _ := os.ReadFile(path); string(data) != "x" {
		t.Fatalf("rewritten file holds %q", data)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o755 {
		t.Fatalf("rewrite changed the mode to %v", info.Mode())
	}

	v, code = probe(t, "write-text", filepath.Join(dir, "empty"), "")
	wantCode(t, code, exitOK, v)
	if info, err := os.Stat(filepath.Join(dir, "empty")); err != nil || info.Size() != 0 {
		t.Fatalf("empty text: %v, %v", info, err)
	}

	// A parent that is a file: the failure is reported, with its errno.
	v, code = probe(t, "write-text", filepath.Join(path, "below"), "x")
	wantCode(t, code, exitFail, v)
	if v["reason"] != "not a directory" || v["written"].(float64) != 0 {
		t.Fatalf("result %v", v)
	}
}

// umask reads the process umask (setting it is the only way to read it).
func umask(t *testing.T) os.FileMode {
	t.Helper()
	old := syscall.Umask(0)
	syscall.Umask(old)
	return os.FileMode(old)
}
