package units_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/fleetgen"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// generatedFleetFiles renders a fleet of internal/testkit/fleetgen (its benchmark
// shape: half of the tenants with a ComputePlane, routed apps) with the
// given spec.fleet and lays it out.
func generatedFleetFiles(t *testing.T, tenants int, fleetSpec string) ([]units.File, *api.Config) {
	t.Helper()
	objs, cfg := generatedFleet(t, tenants, fleetSpec)
	files, problems := units.Files(cfg, objs)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return files, cfg
}

// generatedFleet renders a fleet of internal/testkit/fleetgen with the given
// spec.fleet.
func generatedFleet(t *testing.T, tenants int, fleetSpec string) ([]render.Object, *api.Config) {
	t.Helper()
	dir := t.TempDir()
	if _, err := fleetgen.Generate(dir, fleetgen.Defaults(tenants)); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, fleetgen.ConfigFile)
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, append(cfg, fleetSpec...), 0o644); err != nil {
		t.Fatal(err)
	}
	run, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: cfgPath})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return run.Objects, run.Config
}

// TestShardsSpreadTenants lays out generated fleets of 100 and 1,000
// tenants with shards: 2 and counts every Kustomization the fleet folder
// holds (the wiring's, the units', the routed units' and the tenants'
// in-cluster baselines): every one carries a shard, all Kustomizations of a
// namespace share it, and each shard gets between 40% and 60% of them.
func TestShardsSpreadTenants(t *testing.T) {
	for _, tenants := range []int{100, 1000} {
		t.Run(fmt.Sprint(tenants), func(t *testing.T) {
			files, cfg := generatedFleetFiles(t, tenants, `  fleet:
    sourceRef: {kind: GitRepository, name: fleet, namespace: flux-system}
    path: ./fleet
    shards: 2
    unitSource: FleetSource
`)
			perShard := map[string]int{}
			shardOf := map[string]string{} // namespace -> shard
			kinds := map[string]int{}      // what was counted
			for _, f := range files {
				docs, err := yaml.Parse(string(f.Data))
				if err != nil {
					t.Fatalf("%s: %v", f.Path, err)
				}
				if docs.GetKind() != "Kustomization" || !strings.HasPrefix(docs.GetApiVersion(), "kustomize.toolkit.fluxcd.io/") {
					continue
				}
				name := docs.GetNamespace() + "/" + docs.GetName()
				shard := docs.GetLabels()[units.ShardLabel]
				if shard != "shard1" && shard != "shard2" {
					t.Errorf("%s (%s): sharding label %q, want shard1 or shard2", name, f.Path, shard)
					continue
				}
				perShard[shard]++
				p, err := docs.GetString("spec.path")
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				folder := strings.Split(strings.TrimPrefix(p, "./"+cfg.Fleet.Path+"/"), "/")[0]
				switch {
				case strings.HasPrefix(folder, "_"):
					kinds["wiring, account and platform"]++
					continue
				case docs.GetName() == "computeplane-baseline":
					kinds["baselines"]++
				case strings.Contains(p, "/_routed"):
					kinds["routed units"]++
				default:
					kinds["namespace units"]++
				}
				if prev, ok := shardOf[folder]; ok && prev != shard {
					t.Errorf("%s is on %s, another Kustomization of namespace %s on %s", name, shard, folder, prev)
				}
				shardOf[folder] = shard
			}
			total := perShard["shard1"] + perShard["shard2"]
			t.Logf("%d tenants: %d Kustomizations (%v), per shard %v", tenants, total, kinds, perShard)
			if kinds["baselines"] == 0 || kinds["routed units"] == 0 {
				t.Fatalf("the generated fleet has no baselines or no routed units: %v", kinds)
			}
			for _, s := range []string{"shard1", "shard2"} {
				if share := float64(perShard[s]) / float64(total); share < 0.4 || share > 0.6 {
					t.Errorf("%s reconciles %d of %d Kustomizations (%.1f%%), want 40%% to 60%%", s, perShard[s], total, 100*share)
				}
			}
		})
	}
}

// TestWiringGroupsFollowTheFleet checks the group count that
// spec.fleet.wiringGroups: 0 chooses: the smallest power of two whose
// square holds the units, doubled while a group is over the bound, and an
// explicit count is kept whatever the size.
func TestWiringGroupsFollowTheFleet(t *testing.T) {
	fleetOf := func(tenants int) []render.Object {
		var objs []render.Object
		for i := range tenants {
			objs = append(objs, helmRelease(fmt.Sprintf("tenant-t%05d", i), "computeplane"))
		}
		return objs
	}
	for _, tc := range []struct {
		units, limit, explicit, want int
	}{
		{units: 1, limit: 500, want: 1},
		{units: 2, limit: 500, want: 2},
		{units: 4, limit: 500, want: 2},
		{units: 5, limit: 500, want: 4},
		{units: 16, limit: 500, want: 4},
		{units: 17, limit: 500, want: 8},
		{units: 64, limit: 500, want: 8},
		{units: 65, limit: 500, want: 16},
		{units: 1024, limit: 500, want: 32},
		{units: 1025, limit: 500, want: 64},
		// 32 groups of 1,000 units average 31: the bound of 10 doubles the
		// count until no group is over it.
		{units: 1000, limit: 10, want: 256},
		{units: 1000, limit: 500, explicit: 3, want: 3},
		{units: 3, limit: 500, explicit: 64, want: 64},
	} {
		cfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = tc.limit; fc.WiringGroups = tc.explicit })
		p, problems := units.NewPlan(cfg, fleetOf(tc.units))
		if len(problems) > 0 {
			t.Fatalf("%d units, bound %d, wiringGroups %d: %v", tc.units, tc.limit, tc.explicit, problems)
		}
		if len(p.Units) != tc.units {
			t.Fatalf("%d tenants made %d units", tc.units, len(p.Units))
		}
		if len(p.Groups) != tc.want {
			t.Errorf("%d units, bound %d, wiringGroups %d: %d groups, want %d", tc.units, tc.limit, tc.explicit, len(p.Groups), tc.want)
		}
		for _, g := range p.Groups {
			if len(g.Units) > tc.limit {
				t.Errorf("%d units: group %s holds %d, over the bound %d", tc.units, g.Name, len(g.Units), tc.limit)
			}
			if want := fmt.Sprintf("-of-%d", tc.want); !strings.HasSuffix(g.Name, want) {
				t.Errorf("%d units: group %s, want a name ending in %s", tc.units, g.Name, want)
			}
		}
	}
}

// TestSizedGroupsOverTheBound: past 512 groups the size no longer raises
// the count, and a group over the bound is refused with the count to set.
func TestSizedGroupsOverTheBound(t *testing.T) {
	var objs []render.Object
	for i := range 6000 {
		objs = append(objs, helmRelease(fmt.Sprintf("tenant-t%05d", i), "computeplane"))
	}
	_, problems := units.NewPlan(fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = 10 }), objs)
	if len(problems) == 0 {
		t.Fatal("6,000 units in 512 groups of at most 10 were not refused")
	}
	got := problems[0].Error()
	for _, want := range []string{"spec.fleet.wiringGroups", "more than spec.fleet.maxObjectsPerUnit (10)", "set spec.fleet.wiringGroups to at least 1000", "up to 512 groups"} {
		if !strings.Contains(got, want) {
			t.Errorf("the problem %q does not say %q", got, want)
		}
	}
}

// TestSizedGroups pins the rule at sizes too large to lay out here: the
// count changes only when the number of units crosses a power of 4, and
// stops at MaxAutoWiringGroups.
func TestSizedGroups(t *testing.T) {
	for _, tc := range []struct{ units, want int }{
		{0, 1}, {1, 1}, {4, 2}, {4096, 64}, {4097, 128}, {16_384, 128}, {16_385, 256},
		{65_536, 256}, {65_537, 512}, {1 << 30, units.MaxAutoWiringGroups},
	} {
		if got := units.SizedGroups(tc.units); got != tc.want {
			t.Errorf("SizedGroups(%d) = %d, want %d", tc.units, got, tc.want)
		}
	}
}

// TestAddingATenantMovesFewOwnKustomizations: with shards: 2, a tenant added
// moves no other tenant (TestAddingATenantMovesNothing) and moves at most
// as many of the fleet's own Kustomizations (the account's, the platform's
// and the wiring groups, which even out the shards) as it brings.
func TestAddingATenantMovesFewOwnKustomizations(t *testing.T) {
	objs := []render.Object{
		object("source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator", "cozy-system", "computeplane-application", true, "spec: {}\n"),
	}
	for i := range 300 {
		objs = append(objs, helmRelease(fmt.Sprintf("tenant-t%05d", i), "computeplane"))
	}
	cfg := fleetConfig(func(fc *api.FleetConfig) { fc.Shards = 2; fc.WiringGroups = 40 })
	own := func(p *units.Plan) map[string]int {
		m := map[string]int{}
		for _, u := range p.Units {
			if u.Namespace == "" {
				m[u.Name] = u.Shard
			}
		}
		for _, g := range p.Groups {
			m[g.Name] = g.Shard
		}
		return m
	}
	before, problems := units.NewPlan(cfg, objs)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	for i := range 50 {
		added := fmt.Sprintf("tenant-new%02d", i)
		after, problems := units.NewPlan(cfg, append(slices.Clone(objs), helmRelease(added, "computeplane")))
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		was, now := own(before), own(after)
		moved := 0
		for name, s := range was {
			if now[name] != s {
				moved++
			}
		}
		if moved > 1 {
			t.Errorf("adding %s (1 Kustomization) moved %d of the fleet's own Kustomizations between shards", added, moved)
		}
	}
}

// TestSmallFleetSmallWiring: a fleet of 3 tenants gets a _flux of a few
// files, not one folder per group of a fixed 64.
func TestSmallFleetSmallWiring(t *testing.T) {
	files, _ := generatedFleetFiles(t, 3, `  fleet:
    sourceRef: {kind: GitRepository, name: fleet, namespace: flux-system}
    path: ./fleet
    unitSource: FleetSource
`)
	wiring := 0
	groups := map[string]bool{}
	for _, f := range files {
		if rest, ok := strings.CutPrefix(f.Path, api.DefaultWiringPath+"/"); ok {
			wiring++
			if g, _, nested := strings.Cut(rest, "/"); nested {
				groups[g] = true
			}
		}
	}
	t.Logf("3 tenants: %d files, %d in %s/, %d groups", len(files), wiring, api.DefaultWiringPath, len(groups))
	if len(groups) > 4 {
		t.Errorf("3 tenants are wired through %d groups, want at most 4", len(groups))
	}
	if wiring > 20 {
		t.Errorf("3 tenants have %d files in %s/, want at most 20", wiring, api.DefaultWiringPath)
	}
}
