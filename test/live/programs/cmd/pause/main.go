// Command pause is the pod sandbox's PID 1. It holds the pod's namespaces
// open by doing nothing until told to stop (SIGTERM or SIGINT, exit 0), and
// reaps zombies: as PID 1 of the pod's PID namespace it inherits every
// orphaned process, and nobody else will wait for them.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// PID 1 gets no default signal actions from the kernel: without a
	// handler SIGTERM would be ignored and the kubelet would have to SIGKILL
	// the sandbox.
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)

	// Children may have exited before the handler was installed.
	reapChildren()

	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reapChildren()
			continue
		}
		fmt.Fprintf(os.Stderr, "pause: received %s, exiting\n", sig)
		os.Exit(0)
	}
}

// reapChildren waits for every child that has already exited. SIGCHLD
// deliveries coalesce, so one signal may stand for many exits; loop until
// none are left. This program starts no children of its own, so reaping
// any pid cannot steal a status that Go code is waiting for.
func reapChildren() int {
	reaped := 0
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			// ECHILD: no children at all; pid 0: children still running.
			return reaped
		}
		reaped++
	}
}
