package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
)

// output writes a subcommand's single JSON line.
type output struct {
	w         io.Writer
	log       io.Writer // stderr, for diagnostics
	command   string
	usageText string
	printed   bool
}

// print writes v as one line of JSON. A second call is a bug; it is
// reported on stderr instead, so stdout stays a single line.
func (o *output) print(v any) {
	if o.printed {
		fmt.Fprintf(o.log, "workspace-probe %s: internal error: second result suppressed\n", o.command)
		return
	}
	o.printed = true
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // bodies and errors read better unescaped
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		fmt.Fprintf(&buf, "{\"ok\":false,\"error\":%q}\n", "encoding result: "+err.Error())
	}
	_, _ = o.w.Write(buf.Bytes())
}

// raw writes text as the whole of stdout, with no JSON and no newline. Only
// say-and-exit uses it: its output is a verified command's own, not a
// probe result.
func (o *output) raw(text string) {
	if o.printed {
		fmt.Fprintf(o.log, "workspace-probe %s: internal error: second result suppressed\n", o.command)
		return
	}
	o.printed = true
	_, _ = io.WriteString(o.w, text)
}

// result prints v and returns exitOK or exitFail according to ok.
func (o *output) result(ok bool, v any) int {
	o.print(v)
	if ok {
		return exitOK
	}
	return exitFail
}

// usage prints a usage error and returns exitUsage. The message never
// echoes argument values, so a find-string needle cannot leak through it.
func (o *output) usage(usage, msg string) int {
	if usage == "" {
		usage = o.usageText
	}
	if usage == "" {
		usage = "workspace-probe SUBCOMMAND [ARGS...]"
	}
	o.print(usageResult{Error: "usage error: " + msg, Usage: usage})
	return exitUsage
}

type usageResult struct {
	OK    bool   `json:"ok"` // always false
	Error string `json:"error"`
	Usage string `json:"usage"`
}

// errText is err's message, or "" for nil, for the "error" JSON fields.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// reason condenses err into a short stable phrase the harness can match
// exactly: the errno text ("connection refused", "no space left on
// device", "read-only file system", "permission denied", "disk quota
// exceeded", ...), "i/o timeout" for any timeout, "no such host" for a
// name that does not resolve. "" when nothing more specific is known.
func reason(err error) string {
	if err == nil {
		return ""
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		switch {
		case dnsErr.IsNotFound:
			return "no such host"
		case dnsErr.IsTimeout:
			return "i/o timeout"
		}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return "i/o timeout"
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return "i/o timeout"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	// Some errors (a DNS lookup's, for one) keep the cause only as text.
	msg := err.Error()
	for _, phrase := range textualReasons {
		if strings.HasSuffix(msg, phrase) {
			return phrase
		}
	}
	return ""
}

var textualReasons = []string{
	"connection refused", "connection reset by peer", "no route to host",
	"network is unreachable", "i/o timeout", "server misbehaving",
}
