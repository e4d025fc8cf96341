package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"
)

const (
	defaultVerifyTimeout = 5 * time.Minute
	maxVerifyOutput      = 64 << 10
	// verifyPipeGrace bounds the wait for stdout/stderr to close after the
	// command has exited or been killed: a background process it left
	// behind may hold the pipe open for ever.
	verifyPipeGrace = 2 * time.Second

	exitTimedOut      = 124 // as timeout(1)
	exitCannotStart   = 127 // as a shell's "command not found"
	exitSignalBase    = 128 // a shell's 128+N for death by signal N
	maxSayAndExitCode = 125 // 126 and up mean "not run" or "signalled" to a shell
)

// verificationRecord is the file Berth reads back: exactly these two
// fields.
type verificationRecord struct {
	ExitCode int    `json:"exitCode"`
	Output   string `json:"output"`
}

type verifyResult struct {
	OK         bool   `json:"ok"`
	ExitCode   int    `json:"exitCode"`
	ResultFile string `json:"resultFile"`
	Error      string `json:"error"`
	Reason     string `json:"reason"`
}

// cmdVerify is the runtime's side of Berth's verification contract: run
// the command Berth names in BERTH_VERIFICATION_COMMAND and record its
// exit code and output in BERTH_VERIFICATION_RESULT. A command that fails
// is still a verification with a result, so ok means "recorded", not
// "passed"; so does a program that cannot be started (exit code 127).
func cmdVerify(ctx context.Context, out *output, args []string) int {
	var timeoutFlag string
	pos, err := parseArgs(args, map[string]*string{"timeout": &timeoutFlag})
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 0 {
		return out.usage("", "verify takes no positional arguments; the command comes from BERTH_VERIFICATION_COMMAND")
	}
	timeout, err := parseTimeout(timeoutFlag, defaultVerifyTimeout)
	if err != nil {
		return out.usage("", err.Error())
	}
	argv, err := verificationCommand()
	if err != nil {
		return out.usage("", err.Error())
	}
	resultFile := os.Getenv("BERTH_VERIFICATION_RESULT")
	if resultFile == "" {
		return out.usage("", "BERTH_VERIFICATION_RESULT must name the result file")
	}

	record, err := runVerification(ctx, out.log, argv, verificationDir(), timeout)
	res := verifyResult{ExitCode: record.ExitCode, ResultFile: resultFile}
	if err != nil {
		// Interrupted, not finished: a result would claim an outcome the
		// command never reached.
		res.Error, res.Reason = errText(err), reason(err)
		return out.result(false, res)
	}
	err = writeVerificationRecord(resultFile, record)
	res.OK, res.Error, res.Reason = err == nil, errText(err), reason(err)
	return out.result(res.OK, res)
}

// verificationCommand reads BERTH_VERIFICATION_COMMAND. The message never
// quotes the value, as usage messages never echo arguments.
func verificationCommand() ([]string, error) {
	bad := errors.New(`BERTH_VERIFICATION_COMMAND must be a JSON array of strings, the program first, such as ["/workspace-probe","inspect"]`)
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv("BERTH_VERIFICATION_COMMAND")), &argv); err != nil {
		return nil, bad
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, bad
	}
	return argv, nil
}

// verificationDir is the checkout ($BERTH_WORKSPACE_DIR/src) when there is
// one, else "" (the probe's own working directory), so a command such as
// `go test ./...` runs against the source Berth checked out.
func verificationDir() string {
	ws := os.Getenv("BERTH_WORKSPACE_DIR")
	if ws == "" {
		return ""
	}
	src := filepath.Join(ws, "src")
	if info, err := os.Stat(src); err == nil && info.IsDir() {
		return src
	}
	return ""
}

// runVerification runs argv directly (no shell) with the probe's
// environment and returns its exit code and combined output. It returns an
// error only when ctx (SIGTERM/SIGINT to the probe) interrupted it; a
// timeout is a result, exit code 124. Diagnostics go to log.
func runVerification(ctx context.Context, log io.Writer, argv []string, dir string, timeout time.Duration) (verificationRecord, error) {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var captured cappedBuffer
	captured.limit = maxVerifyOutput
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir = dir
	// One writer for both streams: os/exec then hands the child a single
	// pipe as fd 1 and fd 2, so the output keeps the order it was written
	// in, and only one goroutine writes to captured.
	cmd.Stdout, cmd.Stderr = &captured, &captured
	// Its own process group, so a timeout kills what the command started
	// (a test runner's children) and not only the command.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = verifyPipeGrace

	if err := cmd.Start(); err != nil {
		fmt.Fprintf(log, "workspace-probe verify: cannot start the command: %v\n", err)
		return verificationRecord{ExitCode: exitCannotStart, Output: err.Error()}, nil
	}
	waitErr := cmd.Wait()
	record := verificationRecord{Output: captured.text()}
	if captured.dropped > 0 {
		fmt.Fprintf(log, "workspace-probe verify: output truncated, %d bytes dropped\n", captured.dropped)
	}
	state := cmd.ProcessState
	switch {
	case state.Exited():
		// It finished on its own, even if the deadline came while a
		// leftover process held the pipe.
		record.ExitCode = state.ExitCode()
	case ctx.Err() != nil:
		return record, fmt.Errorf("interrupted before the verification command finished: %w", ctx.Err())
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		fmt.Fprintf(log, "workspace-probe verify: killed after %s\n", timeout)
		record.ExitCode = exitTimedOut
	default:
		fmt.Fprintf(log, "workspace-probe verify: the command ended abnormally: %v\n", waitErr)
		record.ExitCode = signalledExitCode(state)
	}
	return record, nil
}

// signalledExitCode is a shell's 128+N for a command killed by signal N.
func signalledExitCode(state *os.ProcessState) int {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitSignalBase + int(ws.Signal())
	}
	return exitSignalBase
}

// writeVerificationRecord writes the record atomically: Berth may read the
// file at any moment and must never see half of it.
func writeVerificationRecord(path string, record verificationRecord) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // test output reads better with <, > and & as they are
	if err := enc.Encode(record); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// 0644: whoever collects the result may not run as this uid.
	return writeAtomically(path, buf.String(), 0o644)
}

// cappedBuffer keeps the first limit bytes written to it and counts the
// rest. It never fails a write: a command whose output is too long must
// not die of a broken pipe, or the verification would record that instead
// of its real exit code.
type cappedBuffer struct {
	buf     []byte
	limit   int
	dropped int64
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	keep := min(len(p), c.limit-len(c.buf))
	c.buf = append(c.buf, p[:keep]...)
	c.dropped += int64(len(p) - keep)
	return len(p), nil
}

// text is the kept output. When the cut fell inside a UTF-8 character,
// that character's first bytes are dropped too; JSON would otherwise turn
// them into U+FFFD, which the command never printed.
func (c *cappedBuffer) text() string {
	b := c.buf
	if c.dropped > 0 {
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return string(b)
}

// cmdSayAndExit prints TEXT and exits with CODE: a verification command
// whose result a test can predict. It is the one subcommand that prints no
// JSON line when it succeeds, because it is the verified command itself,
// and its stdout is the output under test. A usage error still prints the
// usual JSON and exits 2.
func cmdSayAndExit(_ context.Context, out *output, args []string) int {
	pos, err := parseArgs(args, nil)
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 2 {
		return out.usage("", "CODE and TEXT are required (put -- before a TEXT that starts with -)")
	}
	code, err := strconv.Atoi(pos[0])
	if err != nil || code < 0 || code > maxSayAndExitCode {
		return out.usage("", fmt.Sprintf("CODE must be an integer from 0 to %d", maxSayAndExitCode))
	}
	out.raw(pos[1])
	return code
}
