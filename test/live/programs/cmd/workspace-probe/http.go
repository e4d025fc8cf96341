package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

const (
	defaultHTTPTimeout = 5 * time.Second
	maxHTTPBody        = 512
)

type httpResult struct {
	OK        bool   `json:"ok"`
	URL       string `json:"url"`
	Proxy     string `json:"proxy"` // proxy used, credentials removed; "" when direct
	Status    int    `json:"status"`
	Body      string `json:"body"`
	Truncated bool   `json:"truncated"`
	Error     string `json:"error"`
	Reason    string `json:"reason"`
}

func cmdHTTP(ctx context.Context, out *output, args []string) int {
	var bearerFile, caFile, timeoutFlag string
	pos, err := parseArgs(args, map[string]*string{
		"bearer-file": &bearerFile, "ca-file": &caFile, "timeout": &timeoutFlag,
	})
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 1 {
		return out.usage("", "exactly one URL is required")
	}
	target, timeout, err := parseHTTPTarget(pos[0], timeoutFlag)
	if err != nil {
		return out.usage("", err.Error())
	}

	res := httpResult{URL: target.Redacted()}
	fail := func(err error) int {
		res.Error, res.Reason = errText(err), reason(err)
		return out.result(false, res)
	}

	pool, err := systemPoolPlus(caFile)
	if err != nil {
		return fail(err)
	}
	var token string
	if bearerFile != "" {
		if token, err = readToken(bearerFile); err != nil {
			return fail(err)
		}
	}

	// Like curl, honour HTTPS_PROXY/HTTP_PROXY/NO_PROXY, and say so in the
	// result so a reachability answer is never silently a proxy's.
	if p, err := http.ProxyFromEnvironment(&http.Request{URL: target}); err == nil && p != nil {
		res.Proxy = p.Redacted()
	}
	client := newHTTPClient(timeout, pool, http.ProxyFromEnvironment)
	resp, err := get(ctx, client, target.String(), token)
	if err != nil {
		return fail(err)
	}
	res.Status, res.Body, res.Truncated = resp.status, resp.body, resp.truncated
	res.OK = resp.status < 400
	if !res.OK {
		res.Error = fmt.Sprintf("http status %d", resp.status)
		res.Reason = res.Error
	}
	return out.result(res.OK, res)
}

// parseHTTPTarget reads the URL and --timeout the http and mcp subcommands share.
func parseHTTPTarget(raw, timeoutFlag string) (*url.URL, time.Duration, error) {
	timeout, err := parseTimeout(timeoutFlag, defaultHTTPTimeout)
	if err != nil {
		return nil, 0, err
	}
	target, err := url.Parse(raw)
	if err != nil || (target.Scheme != "http" && target.Scheme != "https") || target.Host == "" {
		return nil, 0, errors.New("URL must be an absolute http or https URL")
	}
	return target, timeout, nil
}

// systemPoolPlus is the system roots (possibly none in a bare image) plus
// the certificates in caFile, if given.
func systemPoolPlus(caFile string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if caFile == "" {
		return pool, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("reading CA file: %w", err)
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", caFile)
	}
	return pool, nil
}

// readToken reads a bearer token file. The token itself never appears in
// any result or error.
func readToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading bearer token file: %w", err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", fmt.Errorf("bearer token file %s is empty", path)
	}
	return token, nil
}

func newHTTPClient(timeout time.Duration, roots *x509.CertPool, proxy func(*http.Request) (*url.URL, error)) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Resolver: &net.Resolver{PreferGo: true}}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               proxy,
			DialContext:         dialer.DialContext,
			TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout: timeout,
			DisableKeepAlives:   true,
		},
		// Report the first answer: following a redirect could turn "this
		// destination answered" into "some other destination answered".
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

type httpAnswer struct {
	status    int
	body      string
	truncated bool
	full      []byte // the body as read (up to the caller's keep limit), for parsing
}

// get performs a GET and reads the body; keep bounds how much of it is
// returned in full (the printed body is always cut to maxHTTPBody).
func get(ctx context.Context, client *http.Client, target, token string, keep ...int64) (httpAnswer, error) {
	return call(ctx, client, http.MethodGet, target, token, nil, "", keep...)
}

// call sends one request with an optional body (of contentType) and reads
// the answer as get does.
func call(ctx context.Context, client *http.Client, method, target, token string, body []byte, contentType string, keep ...int64) (httpAnswer, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, reader)
	if err != nil {
		return httpAnswer{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "berth-workspace-probe")
	resp, err := client.Do(req)
	if err != nil {
		return httpAnswer{}, err
	}
	defer resp.Body.Close()

	limit := int64(maxHTTPBody)
	if len(keep) > 0 && keep[0] > limit {
		limit = keep[0]
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil && !errors.Is(err, io.EOF) {
		// The status still counts as an answer; the body is best effort.
		data = append(data, []byte(" [body read failed: "+err.Error()+"]")...)
	}
	ans := httpAnswer{status: resp.StatusCode, full: data}
	if int64(len(data)) > limit {
		ans.full = data[:limit]
	}
	ans.body = string(data)
	if len(data) > maxHTTPBody {
		ans.body, ans.truncated = string(data[:maxHTTPBody]), true
	}
	return ans, nil
}
