package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestPrintCommits(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--print-commits"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var commits map[string]string
	if err := json.Unmarshal(stdout.Bytes(), &commits); err != nil {
		t.Fatalf("%q: %v", stdout.String(), err)
	}
	if commits["v1"] != "17adce6956ef237d7ee380bab8d48fc60281769d" || commits["main"] != "5ff79d18ace1f638406204538236caaa17748b20" {
		t.Fatalf("commits %v", commits)
	}
}

func TestRefusesBadArgumentsAndMissingToken(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"--push"}, &stdout, &stderr); code != 2 {
		t.Fatalf("unknown flag: exit %d", code)
	}
	t.Setenv("GIT_FIXTURE_TOKEN", "")
	stderr.Reset()
	if code := run(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "GIT_FIXTURE_TOKEN") {
		t.Fatalf("missing token: exit %d, stderr %q", code, stderr.String())
	}
}

func TestRefusesHalfATLSConfiguration(t *testing.T) {
	var stdout, stderr bytes.Buffer
	t.Setenv("GIT_FIXTURE_TOKEN", "secret")
	t.Setenv("TLS_CERT_FILE", "/nonexistent/tls.crt")
	t.Setenv("TLS_KEY_FILE", "")
	if code := run(nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "TLS_CERT_FILE and TLS_KEY_FILE") {
		t.Fatalf("certificate without key: exit %d, stderr %q", code, stderr.String())
	}
}
