package gitfixture

import (
	"context"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gitCLI runs command-line git against the fixture, isolated from the
// machine's and the user's git configuration, credential helpers and
// proxies, with prompts disabled.
type gitCLI struct {
	t    *testing.T
	bin  string
	home string
}

func newGitCLI(t *testing.T) *gitCLI {
	t.Helper()
	bin, err := exec.LookPath("git")
	if err != nil {
		// Printed (not only logged) so the reason shows without -v.
		os.Stdout.WriteString("SKIP: git is not installed; the command-line git interoperability test did not run\n")
		t.Skip("git is not installed (apt-get install -y git); skipping the command-line git interoperability test")
	}
	return &gitCLI{t: t, bin: bin, home: t.TempDir()}
}

// run executes git with an Authorization header for password and returns
// combined output. A timeout and, where sh exists, an address-space cap keep
// a protocol bug from hanging the suite or exhausting the machine's memory
// (a client stuck mid-response can grow without bound).
func (g *gitCLI) run(dir, password string, args ...string) (string, error) {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	auth := base64.StdEncoding.EncodeToString([]byte("x-access-token:" + password))
	full := append([]string{"-c", "http.extraHeader=Authorization: Basic " + auth}, args...)

	var cmd *exec.Cmd
	if sh, err := exec.LookPath("sh"); err == nil {
		cmd = exec.CommandContext(ctx, sh, append([]string{"-c", `ulimit -v 4194304; exec "$0" "$@"`, g.bin}, full...)...)
	} else {
		cmd = exec.CommandContext(ctx, g.bin, full...)
	}
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + g.home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=",
		"no_proxy=*",
		"NO_PROXY=*",
		"LC_ALL=C",
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (g *gitCLI) revParse(dir, rev string) string {
	g.t.Helper()
	out, err := g.run(dir, "", "rev-parse", rev)
	if err != nil {
		g.t.Fatalf("git rev-parse %s: %v\n%s", rev, err, out)
	}
	return strings.TrimSpace(out)
}

func TestGitCLIClone(t *testing.T) {
	g := newGitCLI(t)
	url, _ := startServer(t)

	// protocol.version=2 is git's default; the fixture answers in v0 and git
	// must fall back. Both are tried explicitly.
	for _, proto := range []string{"0", "2"} {
		t.Run("protocol v"+proto, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "clone")
			if out, err := g.run("", testToken, "-c", "protocol.version="+proto, "clone", url, dir); err != nil {
				t.Fatalf("git clone: %v\n%s", err, out)
			}
			if got := g.revParse(dir, "HEAD"); got != wantMain {
				t.Errorf("HEAD = %s, want %s", got, wantMain)
			}
			if got := g.revParse(dir, "v1^{commit}"); got != wantV1 {
				t.Errorf("v1 = %s, want %s", got, wantV1)
			}
			out, err := g.run(dir, "", "symbolic-ref", "HEAD")
			if err != nil || strings.TrimSpace(out) != "refs/heads/main" {
				t.Errorf("symbolic-ref HEAD = %q, %v; want refs/heads/main", out, err)
			}
			if out, err := g.run(dir, "", "fsck", "--strict", "--no-dangling"); err != nil {
				t.Errorf("git fsck: %v\n%s", err, out)
			}
			// git applies the fixture's attributes on checkout: *.txt gets CRLF.
			want := map[string]string{"README.md": ReadmeContent, "src/hello.txt": strings.ReplaceAll(HelloContent, "\n", "\r\n"), "logo.png": LogoContent, ".gitattributes": AttributesContent}
			for path, want := range want {
				if got, err := os.ReadFile(filepath.Join(dir, path)); err != nil || string(got) != want {
					t.Errorf("%s = %q, %v; want %q", path, got, err, want)
				}
			}
		})
	}
}

// An incremental fetch makes git send "have" lines, exercising negotiation.
func TestGitCLIIncrementalFetch(t *testing.T) {
	g := newGitCLI(t)
	url, _ := startServer(t)
	dir := filepath.Join(t.TempDir(), "clone")
	if out, err := g.run("", testToken, "clone", "--branch", "v1", "--single-branch", url, dir); err != nil {
		t.Fatalf("git clone --branch v1: %v\n%s", err, out)
	}
	if out, err := g.run(dir, testToken, "fetch", "origin", "main"); err != nil {
		t.Fatalf("git fetch origin main: %v\n%s", err, out)
	}
	if got := g.revParse(dir, "FETCH_HEAD"); got != wantMain {
		t.Errorf("FETCH_HEAD = %s, want %s", got, wantMain)
	}
	if out, err := g.run(dir, "", "fsck", "--strict"); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
}

func TestGitCLIRefusals(t *testing.T) {
	g := newGitCLI(t)
	url, _ := startServer(t)

	dir := filepath.Join(t.TempDir(), "clone")
	out, err := g.run("", "wrong-token", "clone", url, dir)
	if err == nil {
		t.Fatalf("git clone with a wrong token succeeded:\n%s", out)
	}
	if !strings.Contains(out, "401") && !strings.Contains(out, "Authentication failed") && !strings.Contains(out, "could not read Username") {
		t.Errorf("wrong-token clone failed without an authentication error:\n%s", out)
	}

	if out, err := g.run("", testToken, "clone", url, dir); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	out, err = g.run(dir, testToken, "push", "origin", "HEAD:refs/heads/pushed")
	if err == nil || !strings.Contains(out, "403") {
		t.Errorf("git push: err %v, output %q; want a 403 refusal", err, out)
	}
}
