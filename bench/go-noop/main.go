// The Go floor of `npm run bench`: a composition function that does nothing, written the way a
// function on github.com/crossplane/function-sdk-go is (function.Serve and its options, the
// standard flags), so that Berth can be compared with the cheapest call the Go SDK can serve as
// well as with the TypeScript one (bench/noop-function.ts). It answers every request with
// response.To(req, response.DefaultTTL): the request's own desired state, unchanged.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	function "github.com/crossplane/function-sdk-go"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
)

type noop struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
}

func (noop) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	return response.To(req, response.DefaultTTL), nil
}

func main() {
	address := flag.String("address", function.DefaultAddress, "Address at which to listen for gRPC connections.")
	insecure := flag.Bool("insecure", false, "Run without mTLS credentials; --tls-server-certs-dir is then ignored.")
	certs := flag.String("tls-server-certs-dir", os.Getenv("TLS_SERVER_CERTS_DIR"), "Directory holding tls.crt, tls.key and the ca.crt that verifies clients.")
	// Serve starts a Prometheus endpoint and its interceptor unless told otherwise; the flag keeps
	// both (they are part of what the SDK costs) while letting the bench move them off the fixed
	// default port, which something else on a shared machine may hold.
	metrics := flag.String("metrics-address", function.DefaultMetricsAddress, "Address of the Prometheus metrics endpoint.")
	flag.Parse()

	err := function.Serve(noop{},
		function.Listen(function.DefaultNetwork, *address),
		function.MTLSCertificates(*certs),
		function.Insecure(*insecure),
		function.WithMetricsServer(*metrics),
	)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
