package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// maxMCPBody bounds each reply kept in the result: enough for a tools/list.
const maxMCPBody = 64 << 10

// mcpStep is one HTTP POST of an MCP Streamable HTTP exchange, its body
// sent byte for byte (the harness's probes include batches, duplicate keys
// and bodies that do not parse, which no MCP client library would send).
type mcpStep struct {
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
}

type mcpReply struct {
	Status      int    `json:"status"`
	ContentType string `json:"contentType"`
	Body        string `json:"body"`
	Truncated   bool   `json:"truncated"`
}

type mcpResult struct {
	OK      bool       `json:"ok"`
	URL     string     `json:"url"`
	Session string     `json:"session"`
	Replies []mcpReply `json:"replies"`
	Error   string     `json:"error"`
	Reason  string     `json:"reason"`
}

// cmdMCP sends the steps in order to one MCP endpoint, carrying the
// Mcp-Session-Id the server hands out, and prints every reply. It succeeds
// when every step got an HTTP answer: what the answers mean is the
// harness's to judge.
func cmdMCP(ctx context.Context, out *output, args []string) int {
	var script, timeoutFlag string
	pos, err := parseArgs(args, map[string]*string{"script": &script, "timeout": &timeoutFlag})
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 1 || script == "" {
		return out.usage("", "one URL and --script are required")
	}
	target, timeout, err := parseHTTPTarget(pos[0], timeoutFlag)
	if err != nil {
		return out.usage("", err.Error())
	}
	var steps []mcpStep
	if err := json.Unmarshal([]byte(script), &steps); err != nil || len(steps) == 0 {
		return out.usage("", "--script must be a JSON array of {body, headers}")
	}

	res := mcpResult{URL: target.Redacted(), Replies: []mcpReply{}}
	client := newHTTPClient(timeout, nil, nil)
	for _, step := range steps {
		reply, session, err := postMCP(ctx, client, target.String(), res.Session, step)
		if err != nil {
			res.Error, res.Reason = errText(err), reason(err)
			return out.result(false, res)
		}
		if session != "" {
			res.Session = session
		}
		res.Replies = append(res.Replies, reply)
	}
	res.OK = true
	return out.result(true, res)
}

func postMCP(ctx context.Context, client *http.Client, target, session string, step mcpStep) (mcpReply, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader([]byte(step.Body)))
	if err != nil {
		return mcpReply{}, "", err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "berth-workspace-probe")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for name, value := range step.Headers {
		req.Header.Set(name, value)
	}
	resp, err := client.Do(req)
	if err != nil {
		return mcpReply{}, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMCPBody+1))
	if err != nil && !errors.Is(err, io.EOF) {
		return mcpReply{}, "", err
	}
	reply := mcpReply{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: string(data)}
	if len(data) > maxMCPBody {
		reply.Body, reply.Truncated = string(data[:maxMCPBody]), true
	}
	return reply, resp.Header.Get("Mcp-Session-Id"), nil
}
