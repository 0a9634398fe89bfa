package units_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// TestClusterStaysInTheBaseUnit is the property of the cluster's hardening
// (docs/security.md): whatever the
// split, a tenant's cluster HelmRelease, its computeplane-admission
// ConfigMap and its computeplane-egress policy land in one unit, the
// namespace's base unit (part 0), so that the cluster is never applied
// before its fence. It renders fleets of many random tenant names, each with
// its own number of apps (the case among them: 120 apps with
// maxObjectsPerUnit 50), under both deliveries, and lays them out at
// several bounds.
func TestClusterStaysInTheBaseUnit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 120))
	sizes := []int{0, 1, 9, 10, 11, 47, 48, 49, 50, 51, 99, 120, 121, 149, 150, 151, 250, 333}
	const tenants = 40
	var b strings.Builder
	b.WriteString(`apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: postgres}
spec:
  application: {kind: Postgres, plural: postgreses, singular: postgres, openAPISchema: "{}"}
  release: {prefix: postgres-, chartRef: {kind: ExternalArtifact, name: postgres, namespace: cozy-system}}
`)
	namespaces := map[string]int{}
	for i := range tenants {
		name := randomTenantName(r)
		ns := "tenant-" + name
		if _, dup := namespaces[ns]; dup {
			continue
		}
		n := sizes[i%len(sizes)]
		if i >= len(sizes) {
			n = r.IntN(400)
		}
		namespaces[ns] = n
		fmt.Fprintf(&b, "---\napiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: %s, namespace: tenant-root}\nspec: {computeplane: true}\n", name)
		for j := range n {
			fmt.Fprintf(&b, "---\napiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata: {name: db%s%d, namespace: %s}\n", randomTenantName(r), j, ns)
		}
	}
	objs, err := input.Decode([]byte(b.String()), "fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, delivery := range []api.Delivery{api.Direct, api.Platform} {
		cfg := &api.Config{Delivery: delivery}
		if delivery == api.Direct {
			cfg.Cluster = api.ClusterConfig{Values: api.DefaultClusterValues(), PodSecurity: api.PodSecurityRestricted}
			cfg.Source = api.SourceConfig{Generate: true, Kind: "OCIRepository", Name: "cozystack-packages", Namespace: "cozy-system"}
		}
		run, problems := pipeline.Run(pipeline.Options{Config: cfg, Items: objs})
		if len(problems) > 0 {
			t.Fatalf("%s: refused: %v", delivery, problems)
		}
		rendered := run.Objects
		want := []string{"CiliumNetworkPolicy/computeplane-egress"}
		if delivery == api.Direct {
			want = append(want, "ConfigMap/computeplane-admission", "HelmRelease/computeplane")
		}
		for _, limit := range []int{25, 50, 120, 500} {
			fleetCfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = limit; fc.WiringGroups = 400 })
			fleetCfg.Delivery = delivery
			plan, err := units.NewPlan(fleetCfg, rendered)
			if err != nil {
				t.Fatalf("%s, maxObjectsPerUnit %d: %v", delivery, limit, err)
			}
			split := 0
			found := map[string]string{} // namespace/kind/name -> unit folder
			for _, u := range plan.Units {
				if u.Part == 0 && u.Parts > 1 {
					split++
				}
				if len(u.Objects) > limit {
					t.Errorf("%s, maxObjectsPerUnit %d: unit %s holds %d objects", delivery, limit, u.Folder, len(u.Objects))
				}
				for _, o := range u.Objects {
					id := o.Namespace + "/" + o.Kind + "/" + o.Name
					for _, w := range want {
						if o.Kind+"/"+o.Name != w {
							continue
						}
						found[id] = u.Folder
						if u.Part != 0 {
							t.Errorf("%s, maxObjectsPerUnit %d: %s (namespace of %d apps) is in part %d of %d (%s), not in the base unit",
								delivery, limit, id, namespaces[o.Namespace], u.Part, u.Parts, u.Folder)
						}
					}
				}
			}
			for ns := range namespaces {
				for _, w := range want {
					if _, ok := found[ns+"/"+w]; !ok {
						t.Errorf("%s, maxObjectsPerUnit %d: %s/%s is in no unit", delivery, limit, ns, w)
					}
				}
			}
			if limit <= 50 && split < tenants/3 {
				t.Errorf("%s, maxObjectsPerUnit %d: only %d namespaces were split; the property is not exercised", delivery, limit, split)
			}
		}
	}
}

// randomTenantName is a name Cozystack accepts: ^[a-z][a-z0-9]*$, short.
func randomTenantName(r *rand.Rand) string {
	const first, rest = "abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz0123456789"
	b := []byte{first[r.IntN(len(first))]}
	for range r.IntN(12) {
		b = append(b, rest[r.IntN(len(rest))])
	}
	return string(b)
}
