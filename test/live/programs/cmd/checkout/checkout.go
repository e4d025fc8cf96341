package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	gitconfig "github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
)

// record is both what checkout prints and what it writes next to the
// checkout, so later steps know exactly which commit the workspace holds.
type record struct {
	Repository string `json:"repository"`
	Revision   string `json:"revision"`
	Commit     string `json:"commit"`
}

const recordName = ".berth-checkout.json"

func recordPath(dir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(dir)), recordName)
}

// run performs the checkout and returns the process exit code.
func run(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := loadConfig(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "checkout: configuration: %s\n", redact(err.Error(), cfg.Token))
		return 2
	}

	rec, err := checkout(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "checkout: revision %q of repository %s: %s\n",
			cfg.Revision, displayURL(cfg.Repository), redact(describe(err, cfg), cfg.Token))
		return 1
	}

	line, _ := json.Marshal(rec)
	fmt.Fprintf(stdout, "%s\n", line)
	return 0
}

func checkout(ctx context.Context, cfg config) (record, error) {
	var auth transport.AuthMethod
	if cfg.Token != "" {
		auth = &githttp.BasicAuth{Username: "x-access-token", Password: cfg.Token}
	}

	repo, fresh, err := openOrClone(ctx, cfg, auth)
	if err != nil {
		return record{}, err
	}

	commit, err := resolveRevision(repo, cfg.Revision)
	if err != nil {
		return record{}, err
	}

	rec := record{Repository: displayURL(cfg.Repository), Revision: cfg.Revision, Commit: commit.String()}
	if err := checkoutCommit(repo, fresh, cfg, rec); err != nil {
		return record{}, err
	}
	if err := writeRecord(recordPath(cfg.Dir), rec); err != nil {
		return record{}, err
	}
	return rec, nil
}

// openOrClone clones cfg.Repository into cfg.Dir, or, when cfg.Dir already
// holds a clone of the same repository (the workspace pod restarted), opens
// it and fetches. fresh is true for a new clone.
func openOrClone(ctx context.Context, cfg config, auth transport.AuthMethod) (repo *git.Repository, fresh bool, err error) {
	if _, err := os.Stat(filepath.Join(cfg.Dir, git.GitDirName)); err == nil {
		repo, err := reopen(ctx, cfg, auth)
		return repo, false, err
	}

	if err := requireEmptyDir(cfg.Dir); err != nil {
		return nil, false, err
	}
	// NoCheckout: the worktree is written once, at the requested commit,
	// rather than first at the remote HEAD.
	repo, err = git.PlainCloneContext(ctx, cfg.Dir, false, &git.CloneOptions{
		URL:        cfg.Repository,
		Auth:       auth,
		RemoteName: git.DefaultRemoteName,
		NoCheckout: true,
		Tags:       git.AllTags,
	})
	if err != nil {
		return nil, false, fmt.Errorf("cloning into %s: %w", cfg.Dir, err)
	}
	return repo, true, nil
}

func reopen(ctx context.Context, cfg config, auth transport.AuthMethod) (*git.Repository, error) {
	repo, err := git.PlainOpen(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("opening the existing checkout in %s: %w", cfg.Dir, err)
	}
	remote, err := repo.Remote(git.DefaultRemoteName)
	if err != nil {
		return nil, fmt.Errorf("the existing checkout in %s has no usable %q remote: %w", cfg.Dir, git.DefaultRemoteName, err)
	}
	urls := remote.Config().URLs
	if len(urls) == 0 || !sameRepository(urls[0], cfg.Repository) {
		existing := "(none)"
		if len(urls) > 0 {
			existing = displayURL(urls[0])
		}
		return nil, fmt.Errorf("%s already holds a checkout of a different repository (%s)", cfg.Dir, existing)
	}

	err = repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: git.DefaultRemoteName,
		Auth:       auth,
		RefSpecs: []gitconfig.RefSpec{
			"+refs/heads/*:refs/remotes/origin/*",
			"+refs/tags/*:refs/tags/*",
		},
		Tags:  git.AllTags,
		Force: true,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return nil, fmt.Errorf("fetching into the existing checkout in %s: %w", cfg.Dir, err)
	}
	return repo, nil
}

// requireEmptyDir refuses to clone over unrelated files. A missing directory
// is fine (go-git creates it); lost+found is ignored because the directory
// may be the root of a freshly formatted volume.
func requireEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading checkout directory: %w", err)
	}
	for _, e := range entries {
		if e.Name() != "lost+found" {
			return fmt.Errorf("%s is not empty and holds no git checkout (found %q)", dir, e.Name())
		}
	}
	return nil
}

// describe turns go-git's transport errors into messages that say what to
// do; the rest pass through.
func describe(err error, cfg config) string {
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired):
		if cfg.Token == "" {
			return "authentication required (HTTP 401): GIT_TOKEN is not set"
		}
		return "authentication required (HTTP 401): the server rejected GIT_TOKEN"
	case errors.Is(err, transport.ErrAuthorizationFailed):
		return "authorization failed (HTTP 403): GIT_TOKEN may not read this repository"
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return "repository not found (HTTP 404, or hidden from this token)"
	}
	return err.Error()
}

// redact removes the token from text, in case any library error ever
// carries it (for example inside a URL).
func redact(text, token string) string {
	if token == "" {
		return text
	}
	return strings.ReplaceAll(text, token, "[REDACTED]")
}

func writeRecord(path string, rec record) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encoding %s: %w", recordName, err)
	}
	// Write then rename, so a reader (or a restarted checkout) never sees a
	// half-written record.
	tmp, err := os.CreateTemp(filepath.Dir(path), recordName+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// readRecord returns the previous run's record; the zero record when there
// is none or it cannot be read.
func readRecord(path string) record {
	var rec record
	if data, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(data, &rec)
	}
	return rec
}
