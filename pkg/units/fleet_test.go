package units_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

const quickstartFleet = `
  fleet:
    sourceRef: {kind: GitRepository, name: fleet, namespace: flux-system}
    path: ./clusters/management/fleet
    shards: 2
    wiringGroups: 2
    unitSource: FleetSource # the layout these tests read; fixtures/fleet-external-artifacts has the other
`

// TestStandaloneFleet renders the quickstart example with spec.fleet, writes
// the fleet folder to disk and builds every unit and wiring folder with
// kustomize, as the library and, when the Makefile provides it ($KUSTOMIZE),
// as the kustomize binary that users and kustomize-controller run: together
// the units hold every rendered object exactly once.
func TestStandaloneFleet(t *testing.T) {
	cfg, err := os.ReadFile("../../examples/quickstart/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	cfgPath := filepath.Join(tmp, "config.yaml")
	if err := os.WriteFile(cfgPath, append(cfg, quickstartFleet...), 0o644); err != nil {
		t.Fatal(err)
	}
	run, problems := pipeline.Run(pipeline.Options{Dir: "../../examples/quickstart", ConfigFile: cfgPath, ConfigDir: "../../examples/quickstart"})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	objs := run.Objects
	files, problems := units.Files(run.Config, run.Objects)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	out := filepath.Join(tmp, "fleet")
	var dirs []string
	for _, f := range files {
		p := filepath.Join(out, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		if filepath.Base(p) == units.KustomizationFile {
			dirs = append(dirs, filepath.Dir(p))
		}
	}

	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig = kusttypes.DisabledPluginConfig()
	seen := map[string]string{}
	kustomizations, baselines, inCluster := 0, 0, 0
	for _, dir := range dirs {
		m, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
		if err != nil {
			t.Fatalf("kustomize build %s: %v", dir, err)
		}
		rel, _ := filepath.Rel(out, dir)
		if strings.HasSuffix(rel, "/"+wire.BaselineFolder) {
			// Applied inside the ComputePlane by the baseline
			// Kustomization, never by a unit.
			baselines++
			inCluster += m.Size()
			continue
		}
		for _, r := range m.Resources() {
			if strings.HasPrefix(rel, "_flux") {
				if r.GetKind() != "Kustomization" {
					t.Errorf("the wiring in %s holds a %s", rel, r.GetKind())
				}
				kustomizations++
				continue
			}
			id := r.GetKind() + " " + r.GetNamespace() + "/" + r.GetName()
			if prev, dup := seen[id]; dup {
				t.Errorf("%s is in %s and %s", id, prev, rel)
			}
			seen[id] = rel
		}
		if bin := os.Getenv("KUSTOMIZE"); bin != "" {
			cmd := exec.Command(bin, "build", dir)
			data, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s build %s: %v", bin, rel, err)
			}
			nodes, err := kio.FromBytes(data)
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes) != m.Size() {
				t.Errorf("%s build %s: %d objects, the library builds %d", bin, rel, len(nodes), m.Size())
			}
		}
	}
	wantInCluster := 0
	for _, o := range objs {
		wantInCluster += len(o.InCluster)
	}
	if inCluster != wantInCluster {
		t.Errorf("the baseline folders hold %d objects, the baselines carry %d", inCluster, wantInCluster)
	}
	if len(seen) != len(objs) {
		t.Errorf("the units hold %d objects, the render has %d", len(seen), len(objs))
	}
	for _, o := range objs {
		if _, ok := seen[o.Kind+" "+o.Namespace+"/"+o.Name]; !ok {
			t.Errorf("%s %s/%s is in no unit", o.Kind, o.Namespace, o.Name)
		}
	}
	// units + 2 groups
	if units := len(dirs) - 1 - 2 - baselines; kustomizations != units+2 {
		t.Errorf("%d Kustomizations in the wiring, want %d", kustomizations, units+2)
	}
}
