// Package gitfixture builds the live tests' git fixture repository in memory
// and serves it over git's smart HTTP protocol (upload-pack only).
//
// It lives under internal/ because two programs need it: cmd/git-server
// serves it in the cluster, and cmd/checkout's tests start it in-process.
package gitfixture

import (
	"fmt"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
)

// RepoPath is the URL path the fixture repository is served at.
const RepoPath = "/fixture.git"

// The fixture's contents. The harness and the tests check these exact bytes.
// Main also holds a binary file and attributes, so that the evidence suite
// proves a patch that carries a binary file and a checkout that git converts.
const (
	ReadmeContent     = "berth live fixture\n"
	HelloContent      = "hello from the fixture\n"
	AttributesContent = "*.png binary\n*.txt text eol=crlf\n"
	// LogoContent is a PNG signature and a few bytes with NULs: binary to git
	// by its content as well as by its attributes.
	LogoContent = "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x01\x02\xff"
)

// fixtureSignature is used as author and committer of both commits. The
// timestamps are fixed (and in UTC) so that every build of the fixture
// produces byte-identical objects and therefore the same commit hashes; the
// harness relies on that to know which commit a checkout must land on.
func fixtureSignature(when time.Time) object.Signature {
	return object.Signature{Name: "Berth Fixture", Email: "fixture@berth.invalid", When: when}
}

var (
	firstCommitTime  = time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)
	secondCommitTime = time.Date(2024, time.January, 1, 1, 0, 0, 0, time.UTC)
)

// Commits names the fixture's two commits.
type Commits struct {
	V1   plumbing.Hash // first commit, README.md only; lightweight tag v1
	Main plumbing.Hash // second commit, adds src/hello.txt, logo.png, .gitattributes; branch main
}

// Repository is the in-memory fixture: its object/reference storage and the
// hashes of its commits.
type Repository struct {
	Storage *memory.Storage
	Commits Commits
}

// Build creates the fixture repository. It is deterministic: the hashes
// returned are the same on every call and every machine.
func Build() (*Repository, error) {
	b := &builder{sto: memory.NewStorage()}

	readme := b.blob(ReadmeContent)
	hello := b.blob(HelloContent)
	attributes := b.blob(AttributesContent)
	logo := b.blob(LogoContent)

	rootV1 := b.tree(object.TreeEntry{Name: "README.md", Mode: filemode.Regular, Hash: readme})
	src := b.tree(object.TreeEntry{Name: "hello.txt", Mode: filemode.Regular, Hash: hello})
	rootMain := b.tree(
		object.TreeEntry{Name: ".gitattributes", Mode: filemode.Regular, Hash: attributes},
		object.TreeEntry{Name: "README.md", Mode: filemode.Regular, Hash: readme},
		object.TreeEntry{Name: "logo.png", Mode: filemode.Regular, Hash: logo},
		object.TreeEntry{Name: "src", Mode: filemode.Dir, Hash: src},
	)

	v1 := b.commit(rootV1, firstCommitTime, "Add README\n")
	main := b.commit(rootMain, secondCommitTime, "Add src/hello.txt, logo.png and .gitattributes\n", v1)
	if b.err != nil {
		return nil, fmt.Errorf("building fixture objects: %w", b.err)
	}

	refs := []*plumbing.Reference{
		plumbing.NewHashReference(plumbing.NewTagReferenceName("v1"), v1),
		plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), main),
		plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName("main")),
	}
	for _, ref := range refs {
		if err := b.sto.SetReference(ref); err != nil {
			return nil, fmt.Errorf("setting fixture reference %s: %w", ref.Name(), err)
		}
	}

	return &Repository{Storage: b.sto, Commits: Commits{V1: v1, Main: main}}, nil
}

// builder writes objects straight into storage. Building trees and commits
// from plumbing objects (rather than through a worktree) keeps the fixture
// free of any filesystem and of clock or config lookups that would make the
// hashes vary.
type builder struct {
	sto *memory.Storage
	err error // first error; later calls become no-ops
}

func (b *builder) store(kind string, encode func(plumbing.EncodedObject) error) plumbing.Hash {
	if b.err != nil {
		return plumbing.ZeroHash
	}
	obj := b.sto.NewEncodedObject()
	if err := encode(obj); err != nil {
		b.err = fmt.Errorf("encoding %s: %w", kind, err)
		return plumbing.ZeroHash
	}
	h, err := b.sto.SetEncodedObject(obj)
	if err != nil {
		b.err = fmt.Errorf("storing %s: %w", kind, err)
	}
	return h
}

func (b *builder) blob(content string) plumbing.Hash {
	return b.store("blob", func(o plumbing.EncodedObject) error {
		o.SetType(plumbing.BlobObject)
		w, err := o.Writer()
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte(content)); err != nil {
			w.Close()
			return err
		}
		return w.Close()
	})
}

func (b *builder) tree(entries ...object.TreeEntry) plumbing.Hash {
	// Git requires tree entries in its own order (directories sort as if
	// their name ended in "/"); an unsorted tree is rejected by git fsck.
	sort.Sort(object.TreeEntrySorter(entries))
	t := &object.Tree{Entries: entries}
	return b.store("tree", t.Encode)
}

func (b *builder) commit(tree plumbing.Hash, when time.Time, msg string, parents ...plumbing.Hash) plumbing.Hash {
	c := &object.Commit{
		Author:       fixtureSignature(when),
		Committer:    fixtureSignature(when),
		Message:      msg,
		TreeHash:     tree,
		ParentHashes: parents,
	}
	return b.store("commit", c.Encode)
}
