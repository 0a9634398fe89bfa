// Command fleetgen writes a synthetic Cozystack fleet for benchmarks into a
// folder; render it with computeplane-fn from that folder:
//
//	go run ./internal/fleetgen/cmd/fleetgen -tenants 1000 -out /tmp/fleet
//	cd /tmp/fleet && computeplane-fn config.yaml > rendered.yaml
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/fleetgen"
)

func main() {
	p := fleetgen.Defaults(1000)
	out := flag.String("out", "", "folder to write the fleet into (must be empty or absent)")
	flag.IntVar(&p.Tenants, "tenants", p.Tenants, "number of tenants")
	flag.IntVar(&p.AppsPerTenant, "apps", p.AppsPerTenant, "apps per tenant")
	flag.Float64Var(&p.ComputePlaneShare, "computeplane-share", p.ComputePlaneShare, "share of tenants with a ComputePlane")
	flag.Float64Var(&p.RoutedShare, "routed-share", p.RoutedShare, "share of the apps of tenants with a ComputePlane that are routed onto it")
	flag.Float64Var(&p.KnobsShare, "knobs-share", p.KnobsShare, "share of tenants with a ComputePlane that set knobs")
	flag.Float64Var(&p.NestedShare, "nested-share", p.NestedShare, "share of tenants nested below another tenant")
	flag.IntVar(&p.MaxDepth, "max-depth", p.MaxDepth, "deepest level of the tenant tree (1-3)")
	flag.Uint64Var(&p.Seed, "seed", p.Seed, "random seed")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "fleetgen: -out is required")
		os.Exit(2)
	}
	stats, err := fleetgen.Generate(*out, p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetgen:", err)
		os.Exit(1)
	}
	data, _ := json.Marshal(stats)
	fmt.Println(string(data))
}
