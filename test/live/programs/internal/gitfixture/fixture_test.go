package gitfixture

import (
	"bytes"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/memory"
)

const testToken = "fixture-test-token-a41b7e"

// The harness hard-codes nothing, but these pin the fixture: if they change,
// every live test expectation built from --print-commits changes with them.
const (
	wantV1   = "17adce6956ef237d7ee380bab8d48fc60281769d"
	wantMain = "5ff79d18ace1f638406204538236caaa17748b20"
)

func TestBuildIsDeterministic(t *testing.T) {
	for range 2 {
		repo, err := Build()
		if err != nil {
			t.Fatal(err)
		}
		if repo.Commits.V1.String() != wantV1 || repo.Commits.Main.String() != wantMain {
			t.Fatalf("commits = %+v, want v1 %s main %s", repo.Commits, wantV1, wantMain)
		}
	}
}

// startServer serves the fixture on 127.0.0.1 and returns its repository
// URL and the request log.
func startServer(t *testing.T) (string, *bytes.Buffer) {
	t.Helper()
	repo, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	h, err := NewHandler(repo, testToken, log.New(&logBuf, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		if strings.Contains(logBuf.String(), testToken) {
			t.Errorf("token appears in the request log:\n%s", logBuf.String())
		}
	})
	return srv.URL + RepoPath, &logBuf
}

func TestNewHandlerRefusesEmptyToken(t *testing.T) {
	repo, err := Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewHandler(repo, "", nil); err == nil {
		t.Fatal("NewHandler accepted an empty token")
	}
}

func TestHTTPResponses(t *testing.T) {
	url, logBuf := startServer(t)
	for _, tc := range []struct {
		name, method, path, password string
		want                         int
	}{
		{"no auth", "GET", "/info/refs?service=git-upload-pack", "", 401},
		{"wrong token", "GET", "/info/refs?service=git-upload-pack", "nope", 401},
		{"advertisement", "GET", "/info/refs?service=git-upload-pack", testToken, 200},
		{"receive-pack discovery", "GET", "/info/refs?service=git-receive-pack", testToken, 403},
		{"receive-pack", "POST", "/git-receive-pack", testToken, 403},
		{"dumb protocol", "GET", "/info/refs", testToken, 403},
		{"other path", "GET", "/../other.git/info/refs", testToken, 404},
		{"empty upload-pack", "POST", "/git-upload-pack", testToken, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, url+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.password != "" {
				req.SetBasicAuth("anyone", tc.password)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 401 && resp.Header.Get("WWW-Authenticate") != `Basic realm="fixture"` {
				t.Errorf("WWW-Authenticate = %q", resp.Header.Get("WWW-Authenticate"))
			}
			if tc.want == 200 && resp.Header.Get("Content-Type") != "application/x-git-upload-pack-advertisement" {
				t.Errorf("Content-Type = %q", resp.Header.Get("Content-Type"))
			}
		})
	}
	if !strings.Contains(logBuf.String(), "status=401 authorised=false") ||
		!strings.Contains(logBuf.String(), "status=200 authorised=true") {
		t.Errorf("request log lacks status/authorised fields:\n%s", logBuf.String())
	}
}

// go-git's own client, in memory: the same client code cmd/checkout uses.
func TestGoGitClone(t *testing.T) {
	url, _ := startServer(t)
	repo, err := git.Clone(memory.NewStorage(), nil, &git.CloneOptions{
		URL:  url,
		Auth: &githttp.BasicAuth{Username: "x-access-token", Password: testToken},
		Tags: git.AllTags,
	})
	if err != nil {
		t.Fatal(err)
	}
	head, err := repo.Head()
	if err != nil || head.Hash().String() != wantMain || head.Name() != plumbing.NewBranchReferenceName("main") {
		t.Fatalf("HEAD = %v, %v; want refs/heads/main at %s", head, err, wantMain)
	}
	tag, err := repo.Tag("v1")
	if err != nil || tag.Hash().String() != wantV1 {
		t.Fatalf("tag v1 = %v, %v; want %s", tag, err, wantV1)
	}
}
