package main

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testBearer = "probe-test-bearer-9c2e"

func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.crt")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, block, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestHTTP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, strings.Repeat("x", 600))
	})
	mux.HandleFunc("/forbidden", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nope", http.StatusForbidden)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/forbidden", http.StatusFound)
	})
	mux.HandleFunc("/secured", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testBearer {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "welcome")
	})
	plain := httptest.NewServer(mux)
	defer plain.Close()
	tlsSrv := quietTLSServer(mux)
	defer tlsSrv.Close()

	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte(testBearer+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	caFile := writeCA(t, tlsSrv)

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		status float64
		check  func(map[string]any) bool
	}{
		{"ok body capped", []string{plain.URL + "/ok"}, exitOK, 200, func(v map[string]any) bool {
			return len(v["body"].(string)) == 512 && v["truncated"] == true
		}},
		{"403", []string{plain.URL + "/forbidden"}, exitFail, 403, func(v map[string]any) bool {
			return v["reason"] == "http status 403" && strings.HasPrefix(v["body"].(string), "nope")
		}},
		{"redirect not followed", []string{plain.URL + "/redirect"}, exitOK, 302, nil},
		{"bearer missing", []string{plain.URL + "/secured"}, exitFail, 401, nil},
		{"bearer sent", []string{plain.URL + "/secured", "--bearer-file", tokenFile}, exitOK, 200, func(v map[string]any) bool {
			return v["body"] == "welcome"
		}},
		{"tls with CA", []string{tlsSrv.URL + "/ok", "--ca-file=" + caFile, "--timeout", "2s"}, exitOK, 200, nil},
		{"tls without CA", []string{tlsSrv.URL + "/ok"}, exitFail, 0, func(v map[string]any) bool {
			return strings.Contains(v["error"].(string), "certificate")
		}},
		{"missing bearer file", []string{plain.URL + "/secured", "--bearer-file", "/nonexistent/token"}, exitFail, 0, func(v map[string]any) bool {
			return v["reason"] == "no such file or directory"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, code := probe(t, append([]string{"http"}, tc.args...)...)
			wantCode(t, code, tc.code, v)
			if v["status"].(float64) != tc.status || (tc.check != nil && !tc.check(v)) {
				t.Fatalf("result %v", v)
			}
			if strings.Contains(fmt.Sprint(v), testBearer) {
				t.Fatal("bearer token appears in the result")
			}
		})
	}

	// Connection refused: no HTTP answer at all.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	v, code := probe(t, "http", "http://"+addr+"/")
	wantCode(t, code, exitFail, v)
	if v["reason"] != "connection refused" || v["status"].(float64) != 0 {
		t.Fatalf("result %v", v)
	}
}

// fakeAPIServer answers like the Kubernetes API for a token it knows.
func fakeAPIServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/namespaces/berth/pods", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testBearer {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`)
	})
	mux.HandleFunc("/api/v1/namespaces/berth/pods/made", func(w http.ResponseWriter, r *http.Request) {
		// What a runtime granted edit sends: the method, the content type and the body arrive.
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodDelete:
			fmt.Fprint(w, `{"kind":"Status","status":"Success"}`)
		case r.Method == http.MethodPatch && r.Header.Get("Content-Type") == "application/merge-patch+json":
			fmt.Fprintf(w, `{"kind":"Pod","metadata":{"name":"made","uid":"u-1","annotations":%s}}`, body)
		default:
			http.Error(w, "unexpected "+r.Method, http.StatusBadRequest)
		}
	})
	mux.HandleFunc("/api/v1/namespaces/berth/pods/made/log", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "hello from the pod\n")
	})
	mux.HandleFunc("/api/v1/namespaces/berth", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"kind":"Namespace","metadata":{"name":"berth"}}`)
	})
	mux.HandleFunc("/api/v1/secrets", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"kind":"Status","status":"Failure","message":"secrets is forbidden: User \"system:serviceaccount:berth:ws\" cannot list resource \"secrets\"","reason":"Forbidden","code":403}`)
	})
	srv := quietTLSServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// quietTLSServer is httptest.NewTLSServer without the handshake-failure
// log lines that the "no CA" case provokes on purpose.
func quietTLSServer(h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	return srv
}

func TestKube(t *testing.T) {
	srv := fakeAPIServer(t)
	u, _ := url.Parse(srv.URL)
	host, port, _ := net.SplitHostPort(u.Host)
	t.Setenv("KUBERNETES_SERVICE_HOST", host)
	t.Setenv("KUBERNETES_SERVICE_PORT", port)

	saDir := t.TempDir()
	old := serviceAccountDir
	serviceAccountDir = saDir
	t.Cleanup(func() { serviceAccountDir = old })

	// No token mounted.
	v, code := probe(t, "kube", "/api/v1/namespaces/berth/pods")
	wantCode(t, code, exitFail, v)
	if v["error"] != "no service account token" {
		t.Fatalf("without token: %v", v)
	}

	if err := os.WriteFile(filepath.Join(saDir, "token"), []byte(testBearer), 0o600); err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(writeCA(t, srv))
	if err := os.WriteFile(filepath.Join(saDir, "ca.crt"), caPEM, 0o644); err != nil {
		t.Fatal(err)
	}

	v, code = probe(t, "kube", "/api/v1/namespaces/berth/pods")
	wantCode(t, code, exitOK, v)
	if v["status"].(float64) != 200 || v["items"].(float64) != 2 || fmt.Sprint(v["names"]) != "[a b]" {
		t.Fatalf("list: %v", v)
	}

	v, code = probe(t, "kube", "/api/v1/namespaces/berth")
	wantCode(t, code, exitOK, v)
	if v["items"] != nil || v["names"] != nil || v["name"] != "berth" {
		t.Fatalf("single object: %v", v)
	}

	v, code = probe(t, "kube", "/api/v1/namespaces/berth/pods/made", "--method", "patch", "--body", `{"a":"b"}`)
	wantCode(t, code, exitOK, v)
	if v["method"] != "PATCH" || v["name"] != "made" || v["uid"] != "u-1" {
		t.Fatalf("patch: %v", v)
	}
	v, code = probe(t, "kube", "/api/v1/namespaces/berth/pods/made", "--method", "DELETE")
	wantCode(t, code, exitOK, v)
	v, code = probe(t, "kube", "/api/v1/namespaces/berth/pods/made/log")
	wantCode(t, code, exitOK, v)
	if v["text"] != "hello from the pod\n" {
		t.Fatalf("log: %v", v)
	}
	for _, bad := range [][]string{{"--method", "TRACE"}, {"--body", "{}"}, {"--method", "POST", "--body", "not json"}} {
		v, code = probe(t, append([]string{"kube", "/api/v1/namespaces/berth/pods"}, bad...)...)
		wantCode(t, code, exitUsage, v)
	}

	v, code = probe(t, "kube", "/api/v1/secrets")
	wantCode(t, code, exitFail, v)
	if v["status"].(float64) != 403 || !strings.HasPrefix(v["error"].(string), "http status 403: secrets is forbidden") {
		t.Fatalf("forbidden: %v", v)
	}
	if strings.Contains(fmt.Sprint(v), testBearer) {
		t.Fatal("token appears in the result")
	}
}
