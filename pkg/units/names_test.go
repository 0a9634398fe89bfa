package units_test

import (
	"fmt"
	"hash/fnv"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// Names that cannot collide (issue 40): a unit's name is unique for every
// tenant tree the platform accepts.

// oldShorten is how names were shortened before: cut, and 8 hex digits of
// the 32-bit FNV-1a hash of the whole name.
func oldShorten(name string) string {
	if len(name) <= 63 {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%s-%08x", strings.TrimRight(name[:54], "-."), h.Sum32())
}

// collidingNamespaces finds two child tenants' namespaces (tenant-acme-<name>,
// 63 characters each, as Kubernetes allows) whose routed units the 32-bit
// hash shortened to one name: a birthday search over at most a few hundred
// thousand names.
func collidingNamespaces(t *testing.T) (string, string) {
	t.Helper()
	seen := map[string]string{}
	for i := range 1 << 22 {
		child := fmt.Sprintf("%s%08d", strings.Repeat("x", 63-len("tenant-acme-")-8), i)
		ns := "tenant-acme-" + child
		short := oldShorten(units.RoutedUnitPrefix + ns)
		if prev, ok := seen[short]; ok {
			return prev, ns
		}
		seen[short] = ns
	}
	t.Fatal("no colliding pair found")
	return "", ""
}

// routedRelease is a release routed onto the tenant's ComputePlane, as the
// render marks it (its own unit, _routed).
func routedRelease(ns, name string) render.Object {
	o := helmRelease(ns, name)
	o.Routed = true
	return o
}

func TestUnitNamesCannotCollide(t *testing.T) {
	a, b := collidingNamespaces(t)
	if oldShorten(units.RoutedUnitPrefix+a) != oldShorten(units.RoutedUnitPrefix+b) {
		t.Fatalf("%s and %s: the old names differ", a, b)
	}
	cases := []struct {
		name string
		cfg  *api.Config
		objs []render.Object
	}{
		{
			name: "two long child tenants whose routed units the 32-bit hash gave one name",
			cfg:  fleetConfig(nil),
			objs: append(sampleFleet(2, 0), helmRelease(a, "computeplane"), routedRelease(a, "jupyterhub-x"),
				helmRelease(b, "computeplane"), routedRelease(b, "jupyterhub-x")),
		},
		{
			name: "a child tenant named part1 beside its parent's split unit",
			cfg:  fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = 10 }),
			objs: append(sampleFleet(3, 25), helmRelease("tenant-big-part1", "computeplane"), helmRelease("tenant-big-part1", "postgres-db")),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, problems := units.NewPlan(c.cfg, c.objs)
			if len(problems) > 0 {
				t.Fatalf("refused: %v", problems)
			}
			seen := map[string]string{}
			for _, u := range p.Units {
				if len(u.Name) > 63 {
					t.Errorf("%s: %d characters", u.Name, len(u.Name))
				}
				if prev, ok := seen[u.Name]; ok {
					t.Errorf("units %s and %s are both %s", prev, u.Folder, u.Name)
				}
				seen[u.Name] = u.Folder
			}
			for _, u := range p.Units {
				for _, d := range u.DependsOn {
					if _, ok := seen[d]; !ok {
						t.Errorf("%s depends on %s, which is no unit", u.Name, d)
					}
				}
			}
			if _, err := p.Files(); err != nil {
				t.Fatal(err)
			}
		})
	}
	// The split parent's second part and the child's unit, by name.
	p, problems := units.NewPlan(cases[1].cfg, cases[1].objs)
	if len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	folders := map[string]string{}
	for _, u := range p.Units {
		folders[u.Name] = u.Folder
	}
	for name, folder := range map[string]string{"computeplane-tenant-big.part1": "tenant-big/part1", "computeplane-tenant-big-part1": "tenant-big-part1"} {
		if folders[name] != folder {
			t.Errorf("unit %s: folder %q, want %q", name, folders[name], folder)
		}
	}
}
