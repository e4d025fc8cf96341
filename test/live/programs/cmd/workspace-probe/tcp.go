package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

const (
	defaultDialTimeout = 3 * time.Second
	// bannerWait is how long tcp waits for a banner after connecting; a
	// destination that sends nothing still counts as reachable.
	bannerWait = time.Second
)

type tcpResult struct {
	OK        bool   `json:"ok"`
	Target    string `json:"target"`
	Banner    string `json:"banner"`
	Error     string `json:"error"`
	Reason    string `json:"reason"`
	ElapsedMs int64  `json:"elapsedMs"`
}

func cmdTCP(ctx context.Context, out *output, args []string) int {
	var timeoutFlag string
	pos, err := parseArgs(args, map[string]*string{"timeout": &timeoutFlag})
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 1 {
		return out.usage("", "exactly one HOST:PORT is required")
	}
	timeout, err := parseTimeout(timeoutFlag, defaultDialTimeout)
	if err != nil {
		return out.usage("", err.Error())
	}
	target := pos[0]
	if _, _, err := net.SplitHostPort(target); err != nil {
		return out.usage("", "target must be HOST:PORT")
	}

	res := tcpResult{Target: target}
	start := time.Now()
	banner, err := dialAndReadBanner(ctx, target, timeout)
	res.ElapsedMs = time.Since(start).Milliseconds()
	res.OK, res.Banner, res.Error, res.Reason = err == nil, banner, errText(err), reason(err)
	return out.result(res.OK, res)
}

func dialAndReadBanner(ctx context.Context, target string, timeout time.Duration) (string, error) {
	d := net.Dialer{Timeout: timeout, Resolver: &net.Resolver{PreferGo: true}}
	conn, err := d.DialContext(ctx, "tcp", target)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(bannerWait))
	line, _ := bufio.NewReader(io.LimitReader(conn, 4096)).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), nil
}

type listenResult struct {
	OK     bool   `json:"ok"`
	Listen string `json:"listen"`
	Banner string `json:"banner"`
	Error  string `json:"error"`
	Reason string `json:"reason"`
}

// cmdListen serves the banner until SIGTERM/SIGINT. Fixture pods run it to
// stand for a reviewed destination.
func cmdListen(ctx context.Context, out *output, args []string) int {
	pos, err := parseArgs(args, nil)
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 1 {
		return out.usage("", "exactly one PORT is required")
	}
	addr, err := listenAddress(pos[0])
	if err != nil {
		return out.usage("", err.Error())
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return out.result(false, listenResult{Listen: addr, Error: errText(err), Reason: reason(err)})
	}
	banner := bannerLine()
	out.print(listenResult{OK: true, Listen: ln.Addr().String(), Banner: banner})
	serveBanner(ctx, ln, banner, out.log)
	return exitOK
}

// listenAddress accepts "8080", ":8080" or "HOST:8080".
func listenAddress(raw string) (string, error) {
	if !strings.Contains(raw, ":") {
		raw = ":" + raw
	}
	_, port, err := net.SplitHostPort(raw)
	if err != nil {
		return "", errors.New("PORT must be a port number, :PORT or HOST:PORT")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", errors.New("PORT must be a number from 0 to 65535")
	}
	return raw, nil
}

// bannerLine is what each connection receives, without the newline.
func bannerLine() string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return "berth-probe " + host
}

// serveBanner writes banner and a newline to each connection, closes it,
// and returns when ctx is done.
func serveBanner(ctx context.Context, ln net.Listener, banner string, logw io.Writer) {
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(logw, "workspace-probe: accept on %s: %v\n", ln.Addr(), err)
				// Do not spin if accept keeps failing (e.g. EMFILE).
				time.Sleep(100 * time.Millisecond)
				continue
			}
			return
		}
		go func() {
			defer conn.Close()
			_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, _ = io.WriteString(conn, banner+"\n")
		}()
	}
}
