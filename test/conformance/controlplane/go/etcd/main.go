// Command etcd is a minimal entry point around etcd's own server main, so the
// conformance control plane can build etcd from the Go module proxy (the etcd
// server module carries replace directives, which rule out `go install`).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
