package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

const (
	writeChunk  = 1 << 20 // write in 1 MiB chunks
	maxReadSize = 64 << 10
)

type writeResult struct {
	OK        bool   `json:"ok"`
	Path      string `json:"path"`
	Requested int64  `json:"requested"`
	Written   int64  `json:"written"`
	Error     string `json:"error"`
	Reason    string `json:"reason"`
}

// cmdWrite fills PATH with SIZE bytes, to probe a volume's size limit,
// quota or read-only mount. A failed write leaves the partial file in
// place: what did fit is part of the answer.
func cmdWrite(_ context.Context, out *output, args []string) int {
	pos, err := parseArgs(args, nil)
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 2 {
		return out.usage("", "PATH and SIZE are required")
	}
	size, err := parseSize(pos[1])
	if err != nil {
		return out.usage("", err.Error())
	}
	res := writeResult{Path: pos[0], Requested: size}
	res.Written, err = fillFile(pos[0], size)
	res.OK, res.Error, res.Reason = err == nil, errText(err), reason(err)
	return out.result(res.OK, res)
}

func fillFile(path string, size int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	// Random, non-zero bytes: zeros could be stored sparsely or
	// deduplicated, and constant bytes compressed, either of which would
	// let a size limit go untested.
	chunk := make([]byte, writeChunk)
	rng := rand.New(rand.NewChaCha8([32]byte{'b', 'e', 'r', 't', 'h'}))
	for i := range chunk {
		chunk[i] = byte(rng.UintN(255)) + 1
	}

	var written int64
	for written < size {
		n := min(int64(len(chunk)), size-written)
		m, err := f.Write(chunk[:n])
		written += int64(m)
		if err != nil {
			f.Close()
			return written, err
		}
	}
	// Some filesystems (and quota accounting) only report ENOSPC/EDQUOT
	// when the data is flushed.
	if err := f.Sync(); err != nil {
		f.Close()
		return written, err
	}
	return written, f.Close()
}

// cmdWriteText writes TEXT, byte for byte, to PATH: the stand-in for an
// agent editing a source file, so the workspace has a change a patch can
// carry. Missing parent directories are created, as an editor creating a
// new file would.
func cmdWriteText(_ context.Context, out *output, args []string) int {
	pos, err := parseArgs(args, nil)
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 2 {
		return out.usage("", "PATH and TEXT are required (put -- before a TEXT that starts with -)")
	}
	res := writeResult{Path: pos[0], Requested: int64(len(pos[1]))}
	res.Written, err = writeText(pos[0], pos[1])
	res.OK, res.Error, res.Reason = err == nil, errText(err), reason(err)
	return out.result(res.OK, res)
}

// writeText creates a new file as 0644 but leaves an existing file's mode
// alone: a patch should carry the text change, not a mode change.
func writeText(path, text string) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	n, err := f.WriteString(text)
	if err != nil {
		f.Close()
		return int64(n), err
	}
	return int64(n), f.Close()
}

// parseSize accepts a byte count ("1048576"), a binary suffix (Ki, Mi, Gi,
// Ti) or a decimal one (k/K, M, G, T), as in Kubernetes quantities.
func parseSize(raw string) (int64, error) {
	bad := errors.New("SIZE must be a byte count such as 1048576, 5Mi or 1Gi")
	units := []struct {
		suffix string
		factor int64
	}{
		{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
		{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
	}
	factor := int64(1)
	num := raw
	for _, u := range units {
		if strings.HasSuffix(raw, u.suffix) {
			num, factor = strings.TrimSuffix(raw, u.suffix), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, bad
	}
	if n > math.MaxInt64/factor {
		return 0, fmt.Errorf("SIZE is too large")
	}
	return n * factor, nil
}

type readResult struct {
	OK        bool   `json:"ok"`
	Path      string `json:"path"`
	Content   string `json:"content"`
	Truncated bool   `json:"truncated"`
	Error     string `json:"error"`
	Reason    string `json:"reason"`
}

func cmdRead(_ context.Context, out *output, args []string) int {
	pos, err := parseArgs(args, nil)
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 1 {
		return out.usage("", "exactly one PATH is required")
	}
	res := readResult{Path: pos[0]}
	content, truncated, err := readCapped(pos[0], maxReadSize)
	res.OK, res.Content, res.Truncated = err == nil, content, truncated
	res.Error, res.Reason = errText(err), reason(err)
	return out.result(res.OK, res)
}

func readCapped(path string, limit int64) (string, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return "", false, err
	}
	if int64(len(data)) > limit {
		return string(data[:limit]), true, nil
	}
	return string(data), false, nil
}
