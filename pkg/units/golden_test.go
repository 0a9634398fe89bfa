package units_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

var update = flag.Bool("update", false, "rewrite the expected fleet folders of the fixtures (expected-folder.yaml)")

// TestFleetFolderGolden renders every fixture that has an
// expected-folder.yaml as the fleet-folder writer lays it out
// (computeplane-fn --output-dir), and compares the files, each a YAML
// document headed by its path, with it. A fixture whose config reads a
// source per namespace (spec.fleet.unitSource: ExternalArtifact) is also
// played through source-watcher and kustomize (cutAndBuild): every
// Kustomization and ArtifactGenerator validated against its CRD, every
// object applied by exactly one unit. -update rewrites the files.
func TestFleetFolderGolden(t *testing.T) {
	goldens, err := filepath.Glob("../../fixtures/*/expected-folder.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(goldens) == 0 {
		t.Fatal("no fixture has an expected-folder.yaml")
	}
	for _, golden := range goldens {
		dir := filepath.Dir(golden)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			inputs, _ := filepath.Glob(filepath.Join(dir, "input*.yaml"))
			run, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, "config.yaml"), Inputs: inputs})
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			files, problems := units.Files(run.Config, run.Objects)
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			var b strings.Builder
			for _, f := range files {
				b.WriteString("--- # " + f.Path + "\n")
				b.Write(f.Data)
			}
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), b.String()); diff != "" {
				t.Errorf("the fleet folder differs from %s (-want +got); run make golden and review:\n%s", golden, diff)
			}
			if run.Config.Fleet.ArtifactPerNamespace() {
				built := cutAndBuild(t, run.Config, files)
				generated := 0
				for _, o := range run.Objects {
					if !o.Generated {
						continue
					}
					generated++
					if _, ok := built.objects[idOf(o.APIVersion, o.Kind, o.Namespace, o.Name)]; !ok {
						t.Errorf("%s %s/%s is applied by no unit", o.Kind, o.Namespace, o.Name)
					}
				}
				if len(built.objects) != generated {
					t.Errorf("the units apply %d objects, the render made %d", len(built.objects), generated)
				}
			}
		})
	}
}
