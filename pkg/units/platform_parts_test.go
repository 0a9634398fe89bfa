package units_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// TestPlatformPartsWaitForTheFirst lays out generated fleets whose platform
// unit is split (its per-tenant installer objects over the bound): every
// object of the platform unit that may be pruned is in its first part, a
// tenant's objects share one part, the first part waits for the account's
// unit and every other part for the first, and the unit that holds a
// tenant's cluster waits for the platform unit and for the part that holds
// the tenant's objects. So a wait for the platform takes two dependency
// checks whatever the part count, and no part prunes an object that moves.
func TestPlatformPartsWaitForTheFirst(t *testing.T) {
	for _, tenants := range []int{300, 1000} {
		t.Run(fmt.Sprint(tenants), func(t *testing.T) {
			objs, cfg := generatedFleet(t, tenants, `  fleet:
    sourceRef: {kind: GitRepository, name: fleet, namespace: flux-system}
    path: ./fleet
    unitSource: ExternalArtifact
`)
			p, problems := units.NewPlan(cfg, objs)
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			tenantPart := map[string]string{}
			platformParts := 0
			for _, u := range p.Units {
				if !u.Platform {
					continue
				}
				platformParts++
				want := []string{units.PlatformUnitName}
				if u.Part == 0 {
					want = []string{units.AccountUnitName}
				}
				if !slices.Equal(u.DependsOn, want) {
					t.Errorf("platform part %s depends on %v, want %v", u.Name, u.DependsOn, want)
				}
				for _, o := range u.Objects {
					if !o.Kept && u.Part > 0 {
						t.Errorf("%s %s/%s may be pruned and is in platform part %s, not in the first", o.Kind, o.Namespace, o.Name, u.Name)
					}
					if o.Tenant == "" {
						continue
					}
					if prev, ok := tenantPart[o.Tenant]; ok && prev != u.Name {
						t.Errorf("the objects of %s are in platform parts %s and %s", o.Tenant, prev, u.Name)
					}
					tenantPart[o.Tenant] = u.Name
				}
			}
			if platformParts < 2 {
				t.Fatalf("the platform unit of %d tenants is in %d part; the test needs a split one", tenants, platformParts)
			}
			clusters := 0
			for _, u := range p.Units {
				if u.Platform || !slices.ContainsFunc(u.Objects, func(o render.Object) bool { return o.Cluster && o.Kind == "HelmRelease" }) {
					continue
				}
				clusters++
				want := []string{units.PlatformUnitName}
				if part := tenantPart[u.Namespace]; part != units.PlatformUnitName {
					want = append(want, part)
				}
				if !slices.Equal(u.DependsOn, want) {
					t.Errorf("%s holds the cluster of %s and depends on %v, want %v", u.Name, u.Namespace, u.DependsOn, want)
				}
			}
			if clusters != tenants/2 {
				t.Errorf("%d units hold a cluster, want %d", clusters, tenants/2)
			}
		})
	}
}
