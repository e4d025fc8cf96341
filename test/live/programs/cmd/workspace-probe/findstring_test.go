package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const needle = "berth-needle-4b8f0e"

// findString runs find-string and checks the needle never reaches stdout.
func findString(t *testing.T, args ...string) (map[string]any, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	full := append([]string{"find-string"}, args...)
	code := dispatch(context.Background(), full, &stdout, &stderr)
	if strings.Contains(stdout.String()+stderr.String(), needle) {
		t.Fatalf("the needle was printed: %s %s", stdout.String(), stderr.String())
	}
	return parseLine(t, stdout.String(), full), code
}

func TestFindString(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "clean", "a.txt"), "nothing here")
	write(filepath.Join(outside, "secret"), "token="+needle)
	// A link from inside the root to the secret outside: not followed.
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "clean", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "clean", "dirlink")); err != nil {
		t.Fatal(err)
	}

	t.Run("absent", func(t *testing.T) {
		v, code := findString(t, needle, root)
		wantCode(t, code, exitOK, v)
		if v["foundCount"].(float64) != 0 || v["filesScanned"].(float64) != 1 {
			t.Fatalf("result %v", v)
		}
	})

	t.Run("in a file", func(t *testing.T) {
		deep := filepath.Join(root, "x", "y", "creds.json")
		write(deep, `{"k":"`+needle+`"}`)
		defer os.Remove(deep)
		v, code := findString(t, needle, root)
		wantCode(t, code, exitFail, v)
		if !slices.Contains(anyStrings(v["found"]), deep) {
			t.Fatalf("result %v; want %s found", v, deep)
		}
	})

	t.Run("in the environment", func(t *testing.T) {
		t.Setenv("BERTH_TEST_CREDENTIAL", "prefix-"+needle)
		v, code := findString(t, needle, root)
		wantCode(t, code, exitFail, v)
		if !slices.Contains(anyStrings(v["found"]), "env:BERTH_TEST_CREDENTIAL") {
			t.Fatalf("result %v", v)
		}
	})

	t.Run("large files skipped", func(t *testing.T) {
		big := filepath.Join(root, "big")
		f, err := os.Create(big)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(maxSearchFile + 1) // sparse: costs no disk
		f.Close()
		defer os.Remove(big)
		v, code := findString(t, needle, root)
		wantCode(t, code, exitOK, v)
		if v["skippedLarge"].(float64) != 1 {
			t.Fatalf("result %v", v)
		}
	})

	t.Run("missing root fails", func(t *testing.T) {
		v, code := findString(t, needle, root, filepath.Join(root, "missing"))
		wantCode(t, code, exitFail, v)
		if !strings.Contains(v["error"].(string), "no such file or directory") {
			t.Fatalf("result %v", v)
		}
	})

	t.Run("root given as a symlink is followed", func(t *testing.T) {
		v, code := findString(t, needle, filepath.Join(root, "clean", "dirlink"))
		wantCode(t, code, exitFail, v)
	})
}

func TestPseudoFilesystemsSkipped(t *testing.T) {
	for path, want := range map[string]bool{
		"/proc": true, "/proc/self/environ": true, "/sys/x": true, "/dev": true,
		"/process": false, "/devices": false, "/tmp": false,
	} {
		if got := isPseudo(path); got != want {
			t.Errorf("isPseudo(%q) = %t, want %t", path, got, want)
		}
	}
}
