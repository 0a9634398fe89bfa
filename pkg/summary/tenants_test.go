package summary_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
	"github.com/computeplane-dev/computeplane-fn/pkg/summary"
)

// TestTenantsAgreeWithObjects proves that the tenants the summary states
// from the render's model are what the rendered objects say, read as the
// review reads the committed folder, for every tenant that has objects.
func TestTenantsAgreeWithObjects(t *testing.T) {
	for _, example := range []struct{ dir, config string }{
		{"ci", "fleet/config.yaml"}, {"quickstart", "config.yaml"}, {"platform-delivery", "config.yaml"},
	} {
		t.Run(example.dir, func(t *testing.T) {
			dir := filepath.Join("../../examples", example.dir)
			config := filepath.Join(dir, example.config)
			r, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: config})
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			state, err := posture.ReadObjects(r.Objects)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range summary.Tenants(r.Fleet) {
				got := state.Tenants[row.Namespace]
				if got == nil {
					if row.ComputePlane || len(row.Routed)+len(row.Management) > 0 {
						t.Errorf("%s: the objects do not show it: %+v", row.Namespace, row)
					}
					continue
				}
				var routed, management []string
				for app, p := range got.Apps {
					if p == api.PlacementComputePlane {
						routed = append(routed, app)
					} else {
						management = append(management, app)
					}
				}
				slices.Sort(routed)
				slices.Sort(management)
				fromObjects := summary.Tenant{Name: row.Name, Namespace: got.Namespace, ComputePlane: got.ComputePlane, PodSecurity: got.PodSecurity,
					Routed: nonNil(routed), Management: nonNil(management), Reachable: nonNil(got.Reachable), Credentials: got.Credentials}
				if diff := cmp.Diff(row, fromObjects); diff != "" {
					t.Errorf("%s: the model and the objects differ (-model +objects):\n%s", row.Namespace, diff)
				}
			}
		})
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
