package main

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestInspect(t *testing.T) {
	const secret = "inspect-secret-value-71aa"
	t.Setenv("BERTH_TEST_SECRET", secret)
	t.Setenv("HOME", t.TempDir())

	var stdout bytes.Buffer
	code := dispatch(context.Background(), []string{"inspect"}, &stdout, &bytes.Buffer{})
	if strings.Contains(stdout.String(), secret) {
		t.Fatal("inspect printed an environment value")
	}
	v := parseLine(t, stdout.String(), []string{"inspect"})
	wantCode(t, code, exitOK, v)

	if int(v["uid"].(float64)) != os.Getuid() || int(v["gid"].(float64)) != os.Getgid() {
		t.Errorf("uid/gid %v/%v", v["uid"], v["gid"])
	}
	if !slices.Contains(anyStrings(v["envNames"]), "BERTH_TEST_SECRET") {
		t.Errorf("envNames lacks BERTH_TEST_SECRET: %v", v["envNames"])
	}
	if m, ok := v["uidMap"].([]any); !ok || len(m) == 0 || len(m[0].([]any)) != 3 {
		t.Errorf("uidMap %v", v["uidMap"])
	}
	w := v["writable"].(map[string]any)
	for _, key := range []string{"/", "/tmp", "/workspace", "$HOME"} {
		if _, ok := w[key]; !ok {
			t.Errorf("writable lacks %q", key)
		}
	}
	if w["$HOME"].(map[string]any)["ok"] != true {
		t.Errorf("HOME (a temp dir) not writable: %v", w["$HOME"])
	}
	if entries, _ := os.ReadDir(os.Getenv("HOME")); len(entries) != 0 {
		t.Errorf("inspect left files behind in HOME: %v", entries)
	}
}
