package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestMCPSendsBodiesVerbatimAndCarriesTheSession(t *testing.T) {
	var got []string
	var sessions []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, string(body))
		sessions = append(sessions, r.Header.Get("Mcp-Session-Id")+"|"+r.Header.Get("X-Mcp-Tool"))
		w.Header().Set("Mcp-Session-Id", "s-1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"ok":1}`))
	}))
	defer srv.Close()

	script, _ := json.Marshal([]mcpStep{
		{Body: `{"a":1,"a":2}`},
		{Body: `[1,`, Headers: map[string]string{"X-Mcp-Tool": "search"}},
	})
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), []string{"mcp", srv.URL, "--script", string(script)}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	if got[0] != `{"a":1,"a":2}` || got[1] != `[1,` {
		t.Fatalf("bodies not sent verbatim: %q", got)
	}
	if sessions[0] != "|" || sessions[1] != "s-1|search" {
		t.Fatalf("session or headers not carried: %q", sessions)
	}
	var res mcpResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if !res.OK || len(res.Replies) != 2 || res.Replies[1].Status != http.StatusAccepted || res.Replies[1].Body != `{"ok":1}` || res.Session != "s-1" {
		t.Fatalf("result: %+v", res)
	}
}

func TestMCPFailsWhenNothingAnswers(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), []string{"mcp", url, "--script", `[{"body":"{}"}]`, "--timeout", "1s"}, &stdout, &stderr)
	if code != exitFail {
		t.Fatalf("exit %d, want %d: %s", code, exitFail, stdout.String())
	}
}
