package main

import (
	"errors"
	"fmt"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// isFullHash reports whether rev is a full SHA-1 commit hash. Abbreviated
// hashes are not accepted: they would be ambiguous with branch names.
func isFullHash(rev string) bool {
	if len(rev) != 40 {
		return false
	}
	for _, r := range rev {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// resolveRevision finds the commit rev names. A full hash must be reachable
// from a fetched branch or tag; a name is tried as a branch of origin first,
// then as a tag (git's own order for checkout).
func resolveRevision(repo *git.Repository, rev string) (plumbing.Hash, error) {
	if isFullHash(rev) {
		h := plumbing.NewHash(strings.ToLower(rev))
		if _, err := repo.CommitObject(h); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("commit %s is not in any branch or tag of the repository: %w", h, err)
		}
		return h, nil
	}

	var candidates []plumbing.ReferenceName
	switch {
	case strings.HasPrefix(rev, "refs/heads/"):
		candidates = []plumbing.ReferenceName{plumbing.NewRemoteReferenceName(git.DefaultRemoteName, strings.TrimPrefix(rev, "refs/heads/"))}
	case strings.HasPrefix(rev, "refs/tags/"):
		candidates = []plumbing.ReferenceName{plumbing.ReferenceName(rev)}
	default:
		candidates = []plumbing.ReferenceName{
			plumbing.NewRemoteReferenceName(git.DefaultRemoteName, rev),
			plumbing.NewTagReferenceName(rev),
		}
	}

	for _, name := range candidates {
		ref, err := repo.Reference(name, true)
		if errors.Is(err, plumbing.ErrReferenceNotFound) {
			continue
		}
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("reading reference %s: %w", name, err)
		}
		return peelToCommit(repo, ref.Hash())
	}
	return plumbing.ZeroHash, errors.New("no branch or tag of that name in the repository")
}

// peelToCommit follows annotated tags (possibly nested) down to a commit.
func peelToCommit(repo *git.Repository, h plumbing.Hash) (plumbing.Hash, error) {
	for range 10 {
		obj, err := repo.Object(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("reading object %s: %w", h, err)
		}
		switch o := obj.(type) {
		case *object.Commit:
			return o.Hash, nil
		case *object.Tag:
			h = o.Target
		default:
			return plumbing.ZeroHash, fmt.Errorf("revision points to a %s, not a commit", obj.Type())
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("tag chain at %s is too deep", h)
}
