package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// verifyCommand makes argv the verification command and returns the result
// file, under directories that do not exist yet. Commands that start with
// "probe" run this test binary as the probe (helper mode "argv").
func verifyCommand(t *testing.T, argv ...string) string {
	t.Helper()
	if len(argv) > 0 && argv[0] == "probe" {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		argv = append([]string{self}, argv[1:]...)
		t.Setenv(helperModeEnv, "argv")
	}
	encoded, err := json.Marshal(argv)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BERTH_VERIFICATION_COMMAND", string(encoded))
	resultFile := filepath.Join(t.TempDir(), "results", "nested", "verification.json")
	t.Setenv("BERTH_VERIFICATION_RESULT", resultFile)
	t.Setenv("BERTH_WORKSPACE_DIR", "")
	return resultFile
}

// readRecord checks the result file holds a JSON object with exactly an
// integer exitCode and a string output, and that no temporary file is
// left beside it.
func readRecord(t *testing.T, path string) verificationRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatalf("result file is not a JSON object: %q: %v", data, err)
	}
	if len(fields) != 2 || fields["exitCode"] == nil || fields["output"] == nil {
		t.Fatalf("result file fields: %s; want exactly exitCode and output", data)
	}
	var record verificationRecord
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&record); err != nil {
		t.Fatalf("result file %s: %v", data, err) // a non-integer exitCode, a non-string output
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o644 {
		t.Fatalf("result file mode: %v, %v; want 0644", info, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("result directory holds %d entries, want only the result file", len(entries))
	}
	return record
}

func wantVerified(t *testing.T, v map[string]any, code int, resultFile string) {
	t.Helper()
	wantCode(t, code, exitOK, v)
	if v["resultFile"] != resultFile || v["error"] != "" || v["reason"] != "" {
		t.Fatalf("result %v", v)
	}
}

func TestVerifyRecordsExitCodeAndOutput(t *testing.T) {
	for _, tc := range []struct {
		code int
		text string
	}{
		{0, "ok"},
		{3, "1 test failed"},       // a failing verification is still recorded: ok, exit 0
		{0, "<a & b>\n\"quoted\""}, // JSON escaping round-trips
	} {
		resultFile := verifyCommand(t, "probe", "say-and-exit", strconv.Itoa(tc.code), tc.text)
		v, code := probe(t, "verify")
		wantVerified(t, v, code, resultFile)
		if v["exitCode"].(float64) != float64(tc.code) {
			t.Fatalf("%q: result %v", tc.text, v)
		}
		if r := readRecord(t, resultFile); r.ExitCode != tc.code || r.Output != tc.text {
			t.Fatalf("record %+v, want exit %d and output %q", r, tc.code, tc.text)
		}
	}
}

// A rerun replaces the earlier record.
func TestVerifyReplacesEarlierResult(t *testing.T) {
	resultFile := verifyCommand(t, "probe", "say-and-exit", "3", "1 test failed")
	if _, code := probe(t, "verify"); code != exitOK {
		t.Fatal("first verify failed")
	}
	verifyCommand(t, "probe", "say-and-exit", "0", "ok")
	t.Setenv("BERTH_VERIFICATION_RESULT", resultFile)
	v, code := probe(t, "verify")
	wantVerified(t, v, code, resultFile)
	if r := readRecord(t, resultFile); r.ExitCode != 0 || r.Output != "ok" {
		t.Fatalf("record %+v after the rerun", r)
	}
}

func TestVerifyCombinesStreamsInOrder(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	resultFile := verifyCommand(t, self)
	t.Setenv(helperModeEnv, "interleave")
	v, code := probe(t, "verify")
	wantVerified(t, v, code, resultFile)
	if r := readRecord(t, resultFile); r.Output != "out1\nerr1\nout2\n" {
		t.Fatalf("output %q, want stdout and stderr interleaved as written", r.Output)
	}
}

func TestVerifyProgramThatCannotStart(t *testing.T) {
	for _, program := range []string{
		filepath.Join(t.TempDir(), "no-such-program"), // a path
		"berth-no-such-program-4e1f",                  // a name looked up in PATH
	} {
		resultFile := verifyCommand(t, program, "arg")
		v, code := probe(t, "verify")
		wantVerified(t, v, code, resultFile)
		if v["exitCode"].(float64) != 127 {
			t.Fatalf("%s: result %v", program, v)
		}
		r := readRecord(t, resultFile)
		if r.ExitCode != 127 || !strings.Contains(r.Output, "no-such-program") ||
			!(strings.Contains(r.Output, "no such file or directory") || strings.Contains(r.Output, "not found")) {
			t.Fatalf("%s: record %+v", program, r)
		}
	}
}

func TestVerifyTruncatesOutput(t *testing.T) {
	// Well past the cap and past a pipe buffer (64 KiB): the command must
	// neither block nor die of a broken pipe, and the first 64 KiB are
	// what is kept. (One argument may be at most 128 KiB.)
	head := strings.Repeat("a", maxVerifyOutput)
	resultFile := verifyCommand(t, "probe", "say-and-exit", "0", head+strings.Repeat("b", 60<<10))
	v, code := probe(t, "verify")
	wantVerified(t, v, code, resultFile)
	if r := readRecord(t, resultFile); r.ExitCode != 0 || r.Output != head {
		t.Fatalf("record: exit %d, %d bytes of output (prefix kept: %t); want exit 0 and the first %d bytes",
			r.ExitCode, len(r.Output), strings.HasPrefix(head, r.Output), maxVerifyOutput)
	}
}

// A cut through a multi-byte character drops the partial character rather
// than leaving bytes JSON would turn into U+FFFD.
func TestCappedBufferKeepsWholeCharacters(t *testing.T) {
	c := cappedBuffer{limit: 4}
	c.Write([]byte("abc"))
	c.Write([]byte("é!")) // é is 2 bytes; only its first fits
	if got := c.text(); got != "abc" || c.dropped != 2 {
		t.Fatalf("text %q, dropped %d", got, c.dropped)
	}
	c = cappedBuffer{limit: 5}
	c.Write([]byte("abcé!"))
	if got := c.text(); got != "abcé" {
		t.Fatalf("text %q", got)
	}
	c = cappedBuffer{limit: 8}
	c.Write([]byte("\xffbinary")) // short output is kept as is
	if got := c.text(); got != "\xffbinary" {
		t.Fatalf("text %q", got)
	}
}

func TestVerifyTimeout(t *testing.T) {
	// listen serves until signalled: only the timeout ends it.
	resultFile := verifyCommand(t, "probe", "listen", "127.0.0.1:0")
	start := time.Now()
	v, code := probe(t, "verify", "--timeout", "200ms")
	elapsed := time.Since(start)
	wantVerified(t, v, code, resultFile)
	if v["exitCode"].(float64) != 124 {
		t.Fatalf("result %v, want exit code 124", v)
	}
	if elapsed > 5*time.Second {
		t.Fatalf("verify took %s with a 200ms timeout", elapsed)
	}
	if r := readRecord(t, resultFile); r.ExitCode != 124 {
		t.Fatalf("record %+v", r)
	}
}

func TestVerifyWorkingDirectory(t *testing.T) {
	t.Run("the checkout", func(t *testing.T) {
		resultFile := verifyCommand(t, "probe", "write-text", "marker.txt", "here")
		ws := t.TempDir()
		if err := os.Mkdir(filepath.Join(ws, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("BERTH_WORKSPACE_DIR", ws)
		v, code := probe(t, "verify")
		wantVerified(t, v, code, resultFile)
		if data, err := os.ReadFile(filepath.Join(ws, "src", "marker.txt")); err != nil || string(data) != "here" {
			t.Fatalf("the command did not run in $BERTH_WORKSPACE_DIR/src: %q, %v", data, err)
		}
	})
	t.Run("no checkout", func(t *testing.T) {
		// main.go is in the test's working directory, the package's.
		resultFile := verifyCommand(t, "probe", "read", "main.go")
		t.Setenv("BERTH_WORKSPACE_DIR", t.TempDir())
		v, code := probe(t, "verify")
		wantVerified(t, v, code, resultFile)
		if r := readRecord(t, resultFile); r.ExitCode != 0 {
			t.Fatalf("the command did not run in the current directory: %+v", r)
		}
	})
}

func TestVerifyResultCannotBeWritten(t *testing.T) {
	verifyCommand(t, "probe", "say-and-exit", "0", "ok")
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	resultFile := filepath.Join(blocker, "verification.json")
	t.Setenv("BERTH_VERIFICATION_RESULT", resultFile)
	v, code := probe(t, "verify")
	wantCode(t, code, exitFail, v)
	if v["reason"] != "not a directory" || v["exitCode"].(float64) != 0 || v["resultFile"] != resultFile {
		t.Fatalf("result %v", v)
	}
}

// SIGTERM to the probe interrupts the command: no result is written, as
// the command never reached one.
func TestVerifyInterrupted(t *testing.T) {
	resultFile := verifyCommand(t, "probe", "listen", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	var stdout bytes.Buffer
	code := dispatch(ctx, []string{"verify"}, &stdout, &bytes.Buffer{})
	v := parseLine(t, stdout.String(), []string{"verify"})
	wantCode(t, code, exitFail, v)
	if !strings.Contains(v["error"].(string), "interrupted") {
		t.Fatalf("result %v", v)
	}
	if _, err := os.Stat(resultFile); !os.IsNotExist(err) {
		t.Fatalf("a result was written for an interrupted verification: %v", err)
	}
}

func TestVerifyUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string // BERTH_VERIFICATION_COMMAND
		result  string // BERTH_VERIFICATION_RESULT
		args    []string
	}{
		{"no command", "", "/tmp/r.json", nil},
		{"not JSON", "/workspace-probe inspect", "/tmp/r.json", nil},
		{"not an array", `{"program":"x"}`, "/tmp/r.json", nil},
		{"empty array", `[]`, "/tmp/r.json", nil},
		{"empty program", `[""]`, "/tmp/r.json", nil},
		{"not strings", `[1]`, "/tmp/r.json", nil},
		{"no result file", `["/workspace-probe","inspect"]`, "", nil},
		{"positional argument", `["/workspace-probe","inspect"]`, "/tmp/r.json", []string{"extra"}},
		{"bad timeout", `["/workspace-probe","inspect"]`, "/tmp/r.json", []string{"--timeout", "soon"}},
	} {
		t.Setenv("BERTH_VERIFICATION_COMMAND", tc.command)
		t.Setenv("BERTH_VERIFICATION_RESULT", tc.result)
		v, code := probe(t, append([]string{"verify"}, tc.args...)...)
		wantCode(t, code, exitUsage, v)
		if !strings.HasPrefix(v["error"].(string), "usage error: ") || v["usage"] != "workspace-probe verify [--timeout DURATION]" {
			t.Errorf("%s: result %v", tc.name, v)
		}
	}
}

// say-and-exit prints its TEXT and nothing else, and exits with CODE.
func TestSayAndExit(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), []string{"say-and-exit", "3", "1 test failed"}, &stdout, &stderr)
	if code != 3 || stdout.String() != "1 test failed" || stderr.Len() != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
