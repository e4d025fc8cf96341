package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// When set, the test binary acts as the pause program; the tests run it as
// a child so signals and exits can be observed.
const helperEnv = "BERTH_PAUSE_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func startPause(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	time.Sleep(200 * time.Millisecond) // let it install its handlers
	return cmd
}

func TestExitsZeroOnTermAndInt(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := startPause(t)
			// SIGCHLD with no children must not make it exit.
			if err := cmd.Process.Signal(syscall.SIGCHLD); err != nil {
				t.Fatal(err)
			}
			time.Sleep(100 * time.Millisecond)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatalf("pause exited before %s: %v", sig, err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit after %s: %v, want status 0", sig, err)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("pause did not exit within 5s of %s", sig)
			}
		})
	}
}

func TestReapChildren(t *testing.T) {
	// Start a child without os/exec's Wait, like an orphan re-parented to
	// PID 1, and let it exit: it stays a zombie until reaped.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := syscall.ForkExec(self, []string{self, "-test.run=^$"}, &syscall.ProcAttr{Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if reapChildren() > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Reaped: the pid no longer names a process (not even a zombie).
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("child %d still exists after reaping (kill 0: %v)", pid, err)
	}
}
