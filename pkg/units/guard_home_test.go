package units_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// guardObjects are the management-plane guard as render.RenderGuard marks
// it: platform objects of the account's unit.
func guardObjects() []render.Object {
	objs := []render.Object{
		object("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", "computeplane-guard", true, "spec: {failurePolicy: Fail}\n"),
		object("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", "computeplane-guard", true, "spec: {policyName: computeplane-guard}\n"),
	}
	for i := range objs {
		objs[i].Account = true
	}
	return objs
}

// TestGuardNeverMoves (issue 40): whatever the layout (the platform unit
// whole or split in any number of parts, either unitSource, any number of
// wiring groups, shards), the guard is in the same unit, under the same
// name, folder and files, and every other unit waits for that unit,
// directly or through the units it waits for. So no change between two
// layouts moves it, and no unit that reconciles a new revision can run
// before the guard's unit has applied it.
func TestGuardNeverMoves(t *testing.T) {
	type home struct {
		unit, folder string
		files        []string
	}
	var first *home
	var firstLayout string
	for _, max := range []int{20, 40, 500} {
		for _, source := range []string{api.UnitSourceFleet, api.UnitSourceExternalArtifact} {
			for _, groups := range []int{0, 8, 13} {
				for _, shards := range []int{1, 3} {
					layout := fmt.Sprintf("maxObjectsPerUnit %d, unitSource %s, wiringGroups %d, shards %d", max, source, groups, shards)
					cfg := fleetConfig(func(fc *api.FleetConfig) {
						fc.MaxObjectsPerUnit, fc.UnitSource, fc.WiringGroups, fc.Shards = max, source, groups, shards
					})
					objs := append(sampleFleet(12, 60), guardObjects()...)
					// Enough platform objects to split the platform unit at
					// the small bounds.
					for i := range 30 {
						objs = append(objs, object("rbac.authorization.k8s.io/v1", "ClusterRole", "", fmt.Sprintf("computeplane-installer-tenant-t%d", i), true, "rules: []\n"))
					}
					p, problems := units.NewPlan(cfg, objs)
					if len(problems) > 0 {
						t.Fatalf("%s: %v", layout, problems)
					}
					var h *home
					byName := map[string]*units.Unit{}
					platformParts := 0
					for _, u := range p.Units {
						byName[u.Name] = u
						if u.Platform {
							platformParts++
						}
						for i, o := range u.Objects {
							if o.Kind == "ValidatingAdmissionPolicy" || o.Kind == "ValidatingAdmissionPolicyBinding" {
								if h == nil {
									h = &home{unit: u.Name, folder: u.Folder}
								} else if h.unit != u.Name {
									t.Errorf("%s: the guard is in %s and %s", layout, h.unit, u.Name)
								}
								h.files = append(h.files, u.Files[i])
							}
						}
					}
					if h == nil {
						t.Fatalf("%s: no unit holds the guard", layout)
					}
					slices.Sort(h.files)
					if max == 20 && platformParts < 2 {
						t.Errorf("%s: the platform unit is in %d part, want it split", layout, platformParts)
					}
					if first == nil {
						first, firstLayout = h, layout
					} else if h.unit != first.unit || h.folder != first.folder || !slices.Equal(h.files, first.files) {
						t.Errorf("%s: the guard is in %s (%s) as %v; with %s in %s (%s) as %v", layout, h.unit, h.folder, h.files, firstLayout, first.unit, first.folder, first.files)
					}
					// Every other unit waits for the guard's, through its
					// dependencies.
					var waits func(name string, seen map[string]bool) bool
					waits = func(name string, seen map[string]bool) bool {
						if name == h.unit {
							return true
						}
						if seen[name] {
							return false
						}
						seen[name] = true
						for _, d := range byName[name].DependsOn {
							if waits(d, seen) {
								return true
							}
						}
						return false
					}
					for _, u := range p.Units {
						if u.Name != h.unit && !waits(u.Name, map[string]bool{}) {
							t.Errorf("%s: %s does not wait for %s, the guard's unit", layout, u.Name, h.unit)
						}
					}
				}
			}
		}
	}
	if first.unit != units.AccountUnitName || first.folder != api.AccountUnitFolder {
		t.Errorf("the guard is in %s (%s), want the account's unit %s (%s)", first.unit, first.folder, units.AccountUnitName, api.AccountUnitFolder)
	}
}
