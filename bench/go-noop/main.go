// The Go floors of the benches, written the way a function on github.com/crossplane/function-sdk-go
// is (function.Serve and its options, the standard flags).
//
// Without --compose-from it is the floor of `npm run bench`: a composition function that does
// nothing, so that Berth can be compared with the cheapest call the Go SDK can serve as well as
// with the TypeScript one (bench/noop-function.ts). It answers every request with
// response.To(req, response.DefaultTTL): the request's own desired state, unchanged.
//
// With --compose-from FILE it is the Crossplane floor of `npm run bench:system`: it returns, for
// each XR, exactly the objects Berth converges to for that workspace (FILE, written by the bench:
// {"<XR name>": [{"name": <composition resource name>, "step": 1|2|3, "resource": {...}}]}),
// each marked ready, and computes nothing. --steps 1 returns them all in the first call;
// --steps 3 returns them in Berth's creation order, each step once every object of the steps
// before it is observed (Namespace, then the boundary, then the workload). The gap between this
// and Berth is what Berth's own logic costs the whole system; the gap between this and a direct
// apply is what Crossplane costs.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"google.golang.org/protobuf/types/known/structpb"

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

// A composed object as the bench wrote it: its composition resource name, its creation step and
// its body, converted once at start-up so that a call only copies pointers.
type composedObject struct {
	name     string
	step     int
	resource *structpb.Struct
}

type composer struct {
	fnv1.UnimplementedFunctionRunnerServiceServer
	byXR  map[string][]composedObject
	steps int
}

func (c *composer) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	xr := req.GetObserved().GetComposite().GetResource().GetFields()["metadata"].GetStructValue().GetFields()["name"].GetStringValue()
	if xr == "" {
		// An Operation (Berth's lifecycle CronOperation runs in the bench too): nothing to compose.
		return rsp, nil
	}
	// One line per call, the counterpart of Berth's "rendered" line: the bench counts calls by them.
	fmt.Fprintf(os.Stderr, "composed %s\n", xr)
	objects, ok := c.byXR[xr]
	if !ok {
		response.Fatal(rsp, fmt.Errorf("no objects for composite resource %q in --compose-from", xr))
		return rsp, nil
	}
	observed := req.GetObserved().GetResources()
	// The last step to return: every object of each step before it is observed.
	upTo := 1
	if c.steps == 1 {
		upTo = 3
	}
	for upTo < 3 {
		all := true
		for _, o := range objects {
			if _, seen := observed[o.name]; o.step == upTo && !seen {
				all = false
			}
		}
		if !all {
			break
		}
		upTo++
	}
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = map[string]*fnv1.Resource{}
	}
	for _, o := range objects {
		if o.step <= upTo {
			rsp.Desired.Resources[o.name] = &fnv1.Resource{Resource: o.resource, Ready: fnv1.Ready_READY_TRUE}
		}
	}
	return rsp, nil
}

func loadComposer(file string, steps int) (*composer, error) {
	if steps != 1 && steps != 3 {
		return nil, fmt.Errorf("--steps must be 1 or 3, not %d", steps)
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var doc map[string][]struct {
		Name     string         `json:"name"`
		Step     int            `json:"step"`
		Resource map[string]any `json:"resource"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	c := &composer{byXR: map[string][]composedObject{}, steps: steps}
	for xr, objects := range doc {
		for _, o := range objects {
			s, err := structpb.NewStruct(o.Resource)
			if err != nil {
				return nil, fmt.Errorf("%s: %s/%s: %w", file, xr, o.Name, err)
			}
			if o.Step < 1 || o.Step > 3 {
				return nil, fmt.Errorf("%s: %s/%s: step must be 1, 2 or 3, not %d", file, xr, o.Name, o.Step)
			}
			c.byXR[xr] = append(c.byXR[xr], composedObject{name: o.Name, step: o.Step, resource: s})
		}
	}
	return c, nil
}

func main() {
	address := flag.String("address", function.DefaultAddress, "Address at which to listen for gRPC connections.")
	insecure := flag.Bool("insecure", false, "Run without mTLS credentials; --tls-server-certs-dir is then ignored.")
	certs := flag.String("tls-server-certs-dir", os.Getenv("TLS_SERVER_CERTS_DIR"), "Directory holding tls.crt, tls.key and the ca.crt that verifies clients.")
	// Serve starts a Prometheus endpoint and its interceptor unless told otherwise; the flag keeps
	// both (they are part of what the SDK costs) while letting the bench move them off the fixed
	// default port, which something else on a shared machine may hold.
	metrics := flag.String("metrics-address", function.DefaultMetricsAddress, "Address of the Prometheus metrics endpoint.")
	composeFrom := flag.String("compose-from", "", "JSON file of the objects to compose for each XR; without it, a no-op.")
	steps := flag.Int("steps", 1, "With --compose-from: 1 returns every object at once, 3 in Berth's creation order.")
	flag.Parse()

	var server fnv1.FunctionRunnerServiceServer = noop{}
	if *composeFrom != "" {
		c, err := loadComposer(*composeFrom, *steps)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		server = c
	}
	err := function.Serve(server,
		function.Listen(function.DefaultNetwork, *address),
		function.MTLSCertificates(*certs),
		function.Insecure(*insecure),
		function.WithMetricsServer(*metrics),
	)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
