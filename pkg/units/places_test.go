package units_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// TestPlacesHoldEveryFile: every file of every fixture that renders, laid
// out as its config says (the default layout or Flux units, with a source
// per namespace, routed units, parts), is in one of the layout's places.
func TestPlacesHoldEveryFile(t *testing.T) {
	configs, err := filepath.Glob("../../fixtures/*/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, config := range configs {
		dir := filepath.Dir(config)
		if _, err := os.Stat(filepath.Join(dir, "errors.txt")); err == nil {
			continue
		}
		inputs, _ := filepath.Glob(filepath.Join(dir, "input*.yaml"))
		run, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: config, Inputs: inputs})
		if len(problems) > 0 {
			continue
		}
		files, problems := units.Files(run.Config, run.Objects)
		if len(problems) > 0 {
			t.Fatalf("%s: %v", dir, problems)
		}
		placed := units.Places(run.Config)
		for _, f := range files {
			if !placed(f.Path) {
				t.Errorf("%s: %s is written, but is in none of the layout's places", filepath.Base(dir), f.Path)
			}
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d fixtures rendered", checked)
	}
	for _, tc := range []struct {
		fleet func(*api.FleetConfig)
		files []units.File
	}{
		{func(f *api.FleetConfig) { f.MaxObjectsPerUnit = 2 }, nil},
		{func(f *api.FleetConfig) { f.MaxObjectsPerUnit = 2; f.WiringPath = "_wiring" }, nil},
	} {
		files, problems := units.Files(fleetConfig(tc.fleet), sampleFleet(6, 30))
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		placed := units.Places(fleetConfig(tc.fleet))
		parts := 0
		for _, f := range files {
			if strings.Contains(f.Path, "/part") {
				parts++
			}
			if !placed(f.Path) {
				t.Errorf("%s is written, but is in none of the layout's places", f.Path)
			}
		}
		if parts == 0 {
			t.Errorf("the sample fleet has no parts; the test checks none")
		}
	}
}

// TestPlacesLeaveTheRest: what no layout writes is no place of it.
func TestPlacesLeaveTheRest(t *testing.T) {
	placed := units.Places(&api.Config{})
	for _, p := range []string{
		"README.md",
		"helmrelease-x.yaml", // no folder
		"staging/rendered/tenant-acme/helmrelease-x.yaml",        // another fleet's folder below
		"tenant-acme/sub/deeper/helmrelease-x.yaml",              // deeper than any unit
		"Tenant-Acme/helmrelease-x.yaml",                         // no namespace
		"tenant-acme/notes.yaml",                                 // no <kind>-<name>
		"_other/helmrelease-x.yaml",                              // no layout folder
		"_flux/sub/kustomization.yaml",                           // no wiring group
		"tenant-acme/_baseline/x/y/configmap-a.yaml",             // deeper than a baseline
		"_flux/01-of-04/tenant-acme/sub/deeper/configmap-a.yaml", // deeper than a unit
	} {
		if placed(p) {
			t.Errorf("%s: a place of the layout, want none", p)
		}
	}
	for _, p := range []string{
		"tenant-acme/helmrelease-x.yaml",
		"_cluster/clusterrole-x.yaml",
		"tenant-acme/kustomization.yaml",
		"tenant-acme/_routed/part2/helmrelease-x.yaml",
		"_platform/part1/kustomization.yaml",
		"tenant-acme/_baseline/_cluster/clusterrolebinding-x.yaml",
		"_flux/kustomization-computeplane-wiring-01-of-04.yaml",
		"_flux/01-of-04/tenant-acme/_baseline/kustomization.yaml",
	} {
		if !placed(p) {
			t.Errorf("%s: not a place of the layout, want one", p)
		}
	}
}
