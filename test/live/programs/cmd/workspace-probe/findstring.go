package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const (
	maxSearchFile = 16 << 20 // larger files are skipped (and counted)
	maxListed     = 100      // cap on paths listed in found/unreadable
)

// pseudoFilesystems are never searched: their contents are not stored
// data, reading some of them blocks or has side effects, and /proc would
// find the needle in this very process's command line.
var pseudoFilesystems = []string{"/proc", "/sys", "/dev"}

type findResult struct {
	OK              bool     `json:"ok"` // true when the needle was NOT found
	Found           []string `json:"found"`
	FoundCount      int      `json:"foundCount"`
	Roots           []string `json:"roots"`
	FilesScanned    int      `json:"filesScanned"`
	SkippedLarge    int      `json:"skippedLarge"`
	Unreadable      []string `json:"unreadable"`
	UnreadableCount int      `json:"unreadableCount"`
	Error           string   `json:"error"`
}

// cmdFindString looks for NEEDLE in environment variable values and in
// every regular file under each ROOT, to prove a credential is absent.
// The needle is never printed. Files this user cannot read are listed under
// "unreadable", since absence is only proven for what could be read.
func cmdFindString(_ context.Context, out *output, args []string) int {
	pos, err := parseArgs(args, nil)
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) < 2 {
		return out.usage("", "NEEDLE and at least one ROOT are required")
	}
	needle := []byte(pos[0])
	if len(needle) == 0 {
		return out.usage("", "NEEDLE must not be empty")
	}

	s := &searcher{needle: needle, res: findResult{Found: []string{}, Unreadable: []string{}, Roots: []string{}}}
	s.searchEnv()
	for _, root := range pos[1:] {
		if err := s.searchRoot(root); err != nil {
			// A missing root must not pass as "not found": fail instead.
			s.res.Error = err.Error()
			break
		}
	}

	res := s.res
	res.OK = res.FoundCount == 0 && res.Error == ""
	return out.result(res.OK, res)
}

type searcher struct {
	needle []byte
	res    findResult
}

func (s *searcher) found(where string) {
	s.res.FoundCount++
	if len(s.res.Found) < maxListed {
		s.res.Found = append(s.res.Found, where)
	}
}

func (s *searcher) unreadable(path string) {
	s.res.UnreadableCount++
	if len(s.res.Unreadable) < maxListed {
		s.res.Unreadable = append(s.res.Unreadable, path)
	}
}

func (s *searcher) searchEnv() {
	env := os.Environ()
	sort.Strings(env)
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if bytes.Contains([]byte(value), s.needle) {
			s.found("env:" + name)
		}
	}
}

func (s *searcher) searchRoot(root string) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return errors.New("resolving root " + root + ": " + err.Error())
	}
	// The named root itself may be a symlink (e.g. /etc/ssl -> ...); follow
	// that one, never a link found inside it.
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return errors.New("root " + root + ": " + reasonOr(err))
	}
	s.res.Roots = append(s.res.Roots, resolved)

	return filepath.WalkDir(resolved, func(path string, d fs.DirEntry, err error) error {
		if isPseudo(path) {
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if err != nil {
			s.unreadable(path)
			if d != nil && d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		// WalkDir reports symlinks as links and does not follow them, so a
		// link cannot lead the search out of the root. Sockets, FIFOs and
		// devices are skipped: reading them may block forever.
		if !d.Type().IsRegular() {
			return nil
		}
		s.searchFile(path, d)
		return nil
	})
}

func (s *searcher) searchFile(path string, d fs.DirEntry) {
	info, err := d.Info()
	if err != nil {
		s.unreadable(path)
		return
	}
	if info.Size() > maxSearchFile {
		s.res.SkippedLarge++
		return
	}
	f, err := os.Open(path)
	if err != nil {
		s.unreadable(path)
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSearchFile))
	if err != nil {
		s.unreadable(path)
		return
	}
	s.res.FilesScanned++
	if bytes.Contains(data, s.needle) {
		s.found(path)
	}
}

func isPseudo(path string) bool {
	for _, p := range pseudoFilesystems {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// reasonOr is the errno phrase for err when there is one, else its text.
func reasonOr(err error) string {
	if r := reason(err); r != "" {
		return r
	}
	return err.Error()
}
