package main

import (
	"net/http"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// serviceAccountDir is where the kubelet mounts the pod's service account
// credentials. A variable so tests can point it elsewhere.
var serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// maxKubeBody bounds how much of an API answer is parsed for items.
const maxKubeBody = 8 << 20

// maxKubeText bounds how much of an answer that is not JSON is printed.
const maxKubeText = 4096

// kubeMethods are the methods kube sends; a PATCH is a JSON merge patch.
var kubeMethods = map[string]string{
	http.MethodGet:    "",
	http.MethodPost:   "application/json",
	http.MethodPut:    "application/json",
	http.MethodPatch:  "application/merge-patch+json",
	http.MethodDelete: "application/json",
}

type kubeResult struct {
	OK     bool     `json:"ok"`
	Method string   `json:"method"`
	Path   string   `json:"path"`
	Status int      `json:"status"`
	Items  *int     `json:"items"` // number of .items; null when the answer has none
	Names  []string `json:"names"` // metadata.name of each item; null when no .items
	Name   string   `json:"name"`  // metadata.name of a single-object answer
	UID    string   `json:"uid"`   // metadata.uid of a single-object answer
	Text   string   `json:"text"`  // an answer that is not JSON (a pod's log), up to maxKubeText bytes
	Error  string   `json:"error"`
	Reason string   `json:"reason"`
}

// cmdKube calls the API server the way an in-cluster client would, with the
// pod's own service account token, to show what that token may do: a GET by
// default, or --method POST|PUT|PATCH|DELETE with --body JSON (what a runtime
// granted edit would send to make, change or delete an object).
func cmdKube(ctx context.Context, out *output, args []string) int {
	var timeoutFlag, methodFlag, bodyFlag string
	pos, err := parseArgs(args, map[string]*string{"timeout": &timeoutFlag, "method": &methodFlag, "body": &bodyFlag})
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 1 || !strings.HasPrefix(pos[0], "/") {
		return out.usage("", "exactly one API path starting with / is required, e.g. /api/v1/namespaces/default/pods")
	}
	timeout, err := parseTimeout(timeoutFlag, defaultHTTPTimeout)
	if err != nil {
		return out.usage("", err.Error())
	}
	method := strings.ToUpper(methodFlag)
	if method == "" {
		method = http.MethodGet
	}
	contentType, known := kubeMethods[method]
	if !known {
		return out.usage("", "--method must be GET, POST, PUT, PATCH or DELETE")
	}
	var body []byte
	if bodyFlag != "" {
		if method == http.MethodGet {
			return out.usage("", "--body needs --method POST, PUT, PATCH or DELETE")
		}
		if !json.Valid([]byte(bodyFlag)) {
			return out.usage("", "--body must be JSON")
		}
		body = []byte(bodyFlag)
	}

	res := kubeResult{Method: method, Path: pos[0]}
	fail := func(err error) int {
		res.Error, res.Reason = errText(err), reason(err)
		return out.result(false, res)
	}

	// The token is checked first: "no service account token" is the answer
	// the harness expects from a pod with automounting turned off.
	token, err := os.ReadFile(filepath.Join(serviceAccountDir, "token"))
	if errors.Is(err, os.ErrNotExist) || (err == nil && strings.TrimSpace(string(token)) == "") {
		return fail(errors.New("no service account token"))
	}
	if err != nil {
		return fail(fmt.Errorf("reading service account token: %w", err))
	}
	caPEM, err := os.ReadFile(filepath.Join(serviceAccountDir, "ca.crt"))
	if err != nil {
		return fail(fmt.Errorf("reading service account ca.crt: %w", err))
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return fail(errors.New("service account ca.crt holds no PEM certificate"))
	}

	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return fail(errors.New("KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is not set"))
	}
	target, err := url.Parse("https://" + net.JoinHostPort(host, port) + pos[0])
	if err != nil {
		return out.usage("", "GET-PATH does not form a valid URL")
	}

	// No proxy: the API server is reached directly, as the pod's own
	// in-cluster traffic would be.
	client := newHTTPClient(timeout, roots, nil)
	ans, err := call(ctx, client, method, target.String(), strings.TrimSpace(string(token)), body, contentType, maxKubeBody)
	if err != nil {
		return fail(err)
	}
	res.Status = ans.status
	res.OK = ans.status >= 200 && ans.status < 300
	describeKubeBody(&res, ans.full)
	if !res.OK {
		msg := fmt.Sprintf("http status %d", ans.status)
		res.Reason = msg
		if res.Error != "" {
			msg += ": " + res.Error
		}
		res.Error = msg
	}
	return out.result(res.OK, res)
}

// describeKubeBody fills items/names (lists), name and uid (single objects)
// and, for a Status answer, error with the API server's message; an answer
// that is not JSON (a pod's log) goes to text.
func describeKubeBody(res *kubeResult, body []byte) {
	var doc struct {
		Kind     string `json:"kind"`
		Message  string `json:"message"`
		Metadata struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"metadata"`
		Items *[]struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		if len(body) > maxKubeText {
			body = body[:maxKubeText]
		}
		res.Text = string(body)
		return
	}
	if doc.Items != nil {
		n := len(*doc.Items)
		res.Items = &n
		res.Names = make([]string, 0, n)
		for _, it := range *doc.Items {
			res.Names = append(res.Names, it.Metadata.Name)
		}
	}
	res.Name, res.UID = doc.Metadata.Name, doc.Metadata.UID
	if doc.Kind == "Status" {
		res.Error = doc.Message
	}
}
