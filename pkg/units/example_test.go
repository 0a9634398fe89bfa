package units_test

import (
	"fmt"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// A fleet of two tenants, one of them over the bound of 10 objects: the
// platform unit, a unit per tenant namespace, the large one in parts, and
// the wiring in two groups.
func ExampleLayout() {
	cfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = 10; fc.WiringGroups = 2 })
	objs := []render.Object{
		object("source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator", "cozy-system", "computeplane-application", true, "spec: {}\n"),
		helmRelease("tenant-acme", "computeplane"),
		helmRelease("tenant-acme", "postgres-db"),
	}
	for i := range 12 {
		objs = append(objs, helmRelease("tenant-big", fmt.Sprintf("redis-r%02d", i)))
	}
	plan, problems := units.NewPlan(cfg, objs)
	if len(problems) > 0 {
		fmt.Println(problems)
		return
	}
	for _, u := range plan.Units {
		fmt.Printf("%-29s %-16s %2d objects, group %d, depends on %v\n", u.Name, u.Folder, len(u.Objects), u.Group, u.DependsOn)
	}
	files, err := plan.Files()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(files), "files, the wiring:")
	for _, f := range files {
		if strings.HasPrefix(f.Path, "_flux/") {
			fmt.Println(" ", f.Path)
		}
	}
	// Output:
	// computeplane-platform         _platform         1 objects, group 1, depends on []
	// computeplane-tenant-acme      tenant-acme       2 objects, group 0, depends on [computeplane-platform]
	// computeplane-tenant-big       tenant-big        5 objects, group 0, depends on [computeplane-platform computeplane-tenant-big.part1]
	// computeplane-tenant-big.part1 tenant-big/part1  7 objects, group 0, depends on [computeplane-platform]
	// 28 files, the wiring:
	//   _flux/0-of-2/kustomization-computeplane-tenant-acme.yaml
	//   _flux/0-of-2/kustomization-computeplane-tenant-big.part1.yaml
	//   _flux/0-of-2/kustomization-computeplane-tenant-big.yaml
	//   _flux/0-of-2/kustomization.yaml
	//   _flux/1-of-2/kustomization-computeplane-platform.yaml
	//   _flux/1-of-2/kustomization.yaml
	//   _flux/kustomization-computeplane-wiring-0-of-2.yaml
	//   _flux/kustomization-computeplane-wiring-1-of-2.yaml
	//   _flux/kustomization.yaml
}
