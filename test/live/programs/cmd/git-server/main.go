// Command git-server serves the live tests' git fixture repository over smart
// HTTP (clone/fetch only; push is refused) behind HTTP basic auth.
//
// Environment: GIT_FIXTURE_TOKEN (required; the basic-auth password), PORT
// (default 8080), TLS_CERT_FILE and TLS_KEY_FILE (both or neither: https).
// With --print-commits it prints the fixture's commit hashes
// as JSON and exits, so the harness knows which commits to expect.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"berth.dev/live/programs/internal/gitfixture"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	logger := log.New(stderr, "git-server: ", log.LstdFlags|log.LUTC)

	printOnly := false
	for _, a := range args {
		switch a {
		case "--print-commits", "-print-commits":
			printOnly = true
		default:
			fmt.Fprintf(stderr, "git-server: unknown argument %q\nusage: git-server [--print-commits]\n", a)
			return 2
		}
	}

	repo, err := gitfixture.Build()
	if err != nil {
		logger.Printf("building fixture repository: %v", err)
		return 1
	}
	commits, _ := json.Marshal(map[string]string{
		"v1":   repo.Commits.V1.String(),
		"main": repo.Commits.Main.String(),
	})
	fmt.Fprintf(stdout, "%s\n", commits)
	if printOnly {
		return 0
	}

	handler, err := gitfixture.NewHandler(repo, os.Getenv("GIT_FIXTURE_TOKEN"), logger)
	if err != nil {
		logger.Printf("GIT_FIXTURE_TOKEN: %v", err)
		return 2
	}

	// Workspace sources are https:// only, so in the cluster the fixture serves TLS with a
	// certificate the harness issues; plain HTTP stays for the in-process tests.
	certFile, keyFile := os.Getenv("TLS_CERT_FILE"), os.Getenv("TLS_KEY_FILE")
	if (certFile == "") != (keyFile == "") {
		logger.Printf("TLS_CERT_FILE and TLS_KEY_FILE must be set together")
		return 2
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("", port))
	if err != nil {
		logger.Printf("listening on port %s: %v", port, err)
		return 1
	}

	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()

	logger.Printf("serving %s on %s (upload-pack only, tls=%t)", gitfixture.RepoPath, ln.Addr(), certFile != "")
	serve := func() error { return srv.Serve(ln) }
	if certFile != "" {
		serve = func() error { return srv.ServeTLS(ln, certFile, keyFile) }
	}
	if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Printf("serving: %v", err)
		return 1
	}
	return 0
}
