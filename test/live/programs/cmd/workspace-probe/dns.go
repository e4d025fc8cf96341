package main

import (
	"context"
	"net"
	"time"
)

const defaultDNSTimeout = 5 * time.Second

type dnsResult struct {
	OK        bool     `json:"ok"`
	Name      string   `json:"name"`
	Addresses []string `json:"addresses"`
	Error     string   `json:"error"`
	Reason    string   `json:"reason"`
}

// cmdDNS resolves NAME with Go's own resolver (/etc/hosts, then the servers
// in /etc/resolv.conf), never through libc.
func cmdDNS(ctx context.Context, out *output, args []string) int {
	var timeoutFlag string
	pos, err := parseArgs(args, map[string]*string{"timeout": &timeoutFlag})
	if err != nil {
		return out.usage("", err.Error())
	}
	if len(pos) != 1 || pos[0] == "" {
		return out.usage("", "exactly one NAME is required")
	}
	timeout, err := parseTimeout(timeoutFlag, defaultDNSTimeout)
	if err != nil {
		return out.usage("", err.Error())
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r := &net.Resolver{PreferGo: true}
	addrs, err := r.LookupHost(ctx, pos[0])
	if addrs == nil {
		addrs = []string{} // [] rather than null in the JSON
	}
	res := dnsResult{OK: err == nil, Name: pos[0], Addresses: addrs, Error: errText(err), Reason: reason(err)}
	return out.result(res.OK, res)
}
