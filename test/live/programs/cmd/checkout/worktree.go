package main

import (
	"fmt"
	"sort"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// checkoutCommit leaves the worktree detached at rec.Commit.
//
// On a restart the worktree may hold the user's work. The rules are:
//   - a fresh clone, or a checkout that never completed (no matching record
//     next to it, so the workspace never ran on it), is (re)written from
//     scratch;
//   - a completed checkout already detached at the commit is left as it is;
//   - a completed checkout that must move to another commit is moved only
//     if no tracked file is modified (untracked files are kept); otherwise
//     checkout fails rather than discard the changes.
func checkoutCommit(repo *git.Repository, fresh bool, cfg config, rec record) error {
	wt, err := repo.Worktree()
	if err != nil {
		return fmt.Errorf("opening worktree of %s: %w", cfg.Dir, err)
	}
	target := plumbing.NewHash(rec.Commit)

	previous := readRecord(recordPath(cfg.Dir))
	completed := !fresh && previous.Commit != "" && sameRepository(previous.Repository, cfg.Repository)
	// A hard reset (Force) also deletes untracked files in go-git, so it is
	// kept for worktrees nobody has used yet; a used, clean worktree is moved
	// with go-git's merge reset, which keeps untracked files.
	force := !completed
	if completed {
		if head, err := repo.Head(); err == nil && head.Name() == plumbing.HEAD && head.Hash() == target {
			return nil
		}
		if err := requireClean(wt, cfg.Dir, previous.Commit, rec.Commit); err != nil {
			return err
		}
	}

	if err := wt.Checkout(&git.CheckoutOptions{Hash: target, Force: force}); err != nil {
		return fmt.Errorf("checking out commit %s in %s: %w", target, cfg.Dir, err)
	}
	return nil
}

func requireClean(wt *git.Worktree, dir, from, to string) error {
	status, err := wt.Status()
	if err != nil {
		return fmt.Errorf("reading status of %s: %w", dir, err)
	}
	var changed []string
	for path, s := range status {
		if s.Worktree == git.Untracked && s.Staging == git.Untracked {
			continue // untracked files survive a checkout
		}
		if s.Worktree != git.Unmodified || s.Staging != git.Unmodified {
			changed = append(changed, path)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	sort.Strings(changed)
	if len(changed) > 5 {
		changed = append(changed[:5], "...")
	}
	return fmt.Errorf("%s has local changes to tracked files (%s); refusing to discard them to move from commit %s to %s",
		dir, strings.Join(changed, ", "), from, to)
}
