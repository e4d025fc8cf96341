package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"berth.dev/live/programs/internal/gitfixture"
)

// A distinctive token, so a leak anywhere is easy to find.
const fixtureToken = "berth-test-token-6f1d2c9a"

type fixture struct {
	url     string
	commits gitfixture.Commits
}

func startFixture(t *testing.T) fixture {
	t.Helper()
	repo, err := gitfixture.Build()
	if err != nil {
		t.Fatal(err)
	}
	h, err := gitfixture.NewHandler(repo, fixtureToken, log.New(testWriter{t}, "git-server: ", 0))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h) // listens on 127.0.0.1 only
	t.Cleanup(srv.Close)
	return fixture{url: srv.URL + gitfixture.RepoPath, commits: repo.Commits}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

type result struct {
	code           int
	stdout, stderr string
}

func runCheckout(t *testing.T, env map[string]string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), func(k string) string { return env[k] }, &stdout, &stderr)
	r := result{code, stdout.String(), stderr.String()}
	if tok := env["GIT_TOKEN"]; tok != "" && strings.Contains(r.stdout+r.stderr, tok) {
		t.Fatalf("token leaked into output: %+v", r)
	}
	if strings.Contains(r.stdout+r.stderr, fixtureToken) {
		t.Fatalf("fixture token leaked into output: %+v", r)
	}
	return r
}

func baseEnv(f fixture, dir, rev string) map[string]string {
	return map[string]string{
		"BERTH_SOURCE_REPOSITORY": f.url,
		"BERTH_SOURCE_REVISION":   rev,
		"BERTH_CHECKOUT_DIR":      dir,
		"GIT_TOKEN":               fixtureToken,
	}
}

// assertCheckedOut checks the printed JSON, the record file, the detached
// HEAD and the worktree contents.
func assertCheckedOut(t *testing.T, r result, f fixture, dir, rev string, want plumbing.Hash) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("checkout %s: exit %d\nstdout: %s\nstderr: %s", rev, r.code, r.stdout, r.stderr)
	}
	wantRec := record{Repository: f.url, Revision: rev, Commit: want.String()}
	var printed record
	if err := json.Unmarshal([]byte(r.stdout), &printed); err != nil || printed != wantRec {
		t.Fatalf("printed %q (err %v), want %+v", r.stdout, err, wantRec)
	}
	var written record
	data, err := os.ReadFile(filepath.Join(filepath.Dir(dir), ".berth-checkout.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &written); err != nil || written != wantRec {
		t.Fatalf("record file %q (err %v), want %+v", data, err, wantRec)
	}

	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil {
		t.Fatal(err)
	}
	if head.Name() != plumbing.HEAD || head.Hash() != want {
		t.Fatalf("HEAD is %s at %s, want detached at %s", head.Name(), head.Hash(), want)
	}

	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil || string(readme) != gitfixture.ReadmeContent {
		t.Fatalf("README.md = %q, %v", readme, err)
	}
	hello, err := os.ReadFile(filepath.Join(dir, "src", "hello.txt"))
	if want == f.commits.Main {
		if err != nil || string(hello) != gitfixture.HelloContent {
			t.Fatalf("src/hello.txt = %q, %v", hello, err)
		}
	} else if !os.IsNotExist(err) {
		t.Fatalf("src/hello.txt should not exist at %s (err %v)", want, err)
	}
	assertTokenNotOnDisk(t, filepath.Dir(dir))
}

func assertTokenNotOnDisk(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(fixtureToken)) {
			t.Errorf("token written to %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckoutBranchTagAndHash(t *testing.T) {
	f := startFixture(t)
	for _, tc := range []struct {
		rev  string
		want plumbing.Hash
	}{
		{"main", f.commits.Main},
		{"refs/heads/main", f.commits.Main},
		{"v1", f.commits.V1},
		{"refs/tags/v1", f.commits.V1},
		{f.commits.V1.String(), f.commits.V1},
		{f.commits.Main.String(), f.commits.Main},
	} {
		t.Run(strings.ReplaceAll(tc.rev, "/", "_"), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "src")
			r := runCheckout(t, baseEnv(f, dir, tc.rev))
			assertCheckedOut(t, r, f, dir, tc.rev, tc.want)
		})
	}
}

func TestCheckoutWrongTokenIsAnAuthError(t *testing.T) {
	f := startFixture(t)
	for name, token := range map[string]string{"wrong": "not-the-token-1234", "missing": ""} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "src")
			env := baseEnv(f, dir, "main")
			env["GIT_TOKEN"] = token
			r := runCheckout(t, env)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1; stderr: %s", r.code, r.stderr)
			}
			for _, want := range []string{"authentication required", f.url, `"main"`} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr %q does not mention %q", r.stderr, want)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout should be empty on failure, got %q", r.stdout)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("failed clone left %s behind (err %v)", dir, err)
			}
		})
	}
}

func TestCheckoutUnknownRevision(t *testing.T) {
	f := startFixture(t)
	for _, rev := range []string{"no-such-branch", strings.Repeat("ab", 20)} {
		r := runCheckout(t, baseEnv(f, filepath.Join(t.TempDir(), "src"), rev))
		if r.code != 1 || !strings.Contains(r.stderr, rev) || !strings.Contains(r.stderr, f.url) {
			t.Errorf("revision %s: exit %d, stderr %q; want exit 1 naming revision and repository", rev, r.code, r.stderr)
		}
	}
}

// A restarted workspace runs checkout again over its earlier checkout.
func TestCheckoutRestart(t *testing.T) {
	f := startFixture(t)
	dir := filepath.Join(t.TempDir(), "src")
	env := baseEnv(f, dir, "main")

	assertCheckedOut(t, runCheckout(t, env), f, dir, "main", f.commits.Main)
	// Same revision again: fetch, no change.
	assertCheckedOut(t, runCheckout(t, env), f, dir, "main", f.commits.Main)

	// The user edited a tracked file: a restart at the same commit keeps it.
	readme := filepath.Join(dir, "README.md")
	if err := os.WriteFile(readme, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCheckout(t, env); r.code != 0 {
		t.Fatalf("restart at same commit with local edits: exit %d: %s", r.code, r.stderr)
	}
	if got, _ := os.ReadFile(readme); string(got) != "edited\n" {
		t.Fatalf("restart discarded the local edit: README.md = %q", got)
	}

	// Moving to another commit would discard the edit: refused.
	env["BERTH_SOURCE_REVISION"] = "v1"
	r := runCheckout(t, env)
	if r.code != 1 || !strings.Contains(r.stderr, "local changes") || !strings.Contains(r.stderr, "README.md") {
		t.Fatalf("move with local edits: exit %d, stderr %q; want a refusal naming README.md", r.code, r.stderr)
	}

	// Without the edit, and with an untracked file, the move happens.
	if err := os.WriteFile(readme, []byte(gitfixture.ReadmeContent), 0o644); err != nil {
		t.Fatal(err)
	}
	untracked := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(untracked, []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	assertCheckedOut(t, runCheckout(t, env), f, dir, "v1", f.commits.V1)
	if _, err := os.Stat(untracked); err != nil {
		t.Errorf("untracked file lost: %v", err)
	}
}

// A clone that stopped before its checkout completed (no record) is simply
// finished on the next run.
func TestCheckoutResumesIncompleteClone(t *testing.T) {
	f := startFixture(t)
	dir := filepath.Join(t.TempDir(), "src")
	env := baseEnv(f, dir, "main")
	assertCheckedOut(t, runCheckout(t, env), f, dir, "main", f.commits.Main)
	if err := os.Remove(filepath.Join(filepath.Dir(dir), ".berth-checkout.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "src")); err != nil {
		t.Fatal(err)
	}
	assertCheckedOut(t, runCheckout(t, env), f, dir, "main", f.commits.Main)
}

func TestCheckoutRefusesOtherRepositoryOrStrayFiles(t *testing.T) {
	f := startFixture(t)
	dir := filepath.Join(t.TempDir(), "src")
	env := baseEnv(f, dir, "main")
	assertCheckedOut(t, runCheckout(t, env), f, dir, "main", f.commits.Main)

	env["BERTH_SOURCE_REPOSITORY"] = strings.TrimSuffix(f.url, "fixture.git") + "other.git"
	if r := runCheckout(t, env); r.code != 1 || !strings.Contains(r.stderr, "different repository") {
		t.Fatalf("other repository: exit %d, stderr %q", r.code, r.stderr)
	}

	stray := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(stray, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stray, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runCheckout(t, baseEnv(f, stray, "main")); r.code != 1 || !strings.Contains(r.stderr, "not empty") {
		t.Fatalf("stray files: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestCheckoutConfigurationErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		env  map[string]string
		want string
	}{
		"missing": {map[string]string{}, "BERTH_SOURCE_REPOSITORY, BERTH_SOURCE_REVISION, BERTH_CHECKOUT_DIR"},
		"scheme": {map[string]string{
			"BERTH_SOURCE_REPOSITORY": "ssh://git@example.invalid/x.git", "BERTH_SOURCE_REVISION": "main", "BERTH_CHECKOUT_DIR": "/tmp/x",
		}, "http or https"},
		"credentials in URL": {map[string]string{
			"BERTH_SOURCE_REPOSITORY": "https://u:" + fixtureToken + "@example.invalid/x.git", "BERTH_SOURCE_REVISION": "main", "BERTH_CHECKOUT_DIR": "/tmp/x",
		}, "must not embed credentials"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCheckout(t, tc.env)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 mentioning %q", r.code, r.stderr, tc.want)
			}
		})
	}
}
