package poolmove_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/poolmove"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

const cluster = `# computeplane.dev/fleet: ../config.yaml
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: computeplane
  namespace: tenant-acme
  labels: {internal.cozystack.io/computeplane: "true"%s}
spec:
  postRenderers:
  - kustomize:
      patches:
      - target: {kind: MachineDeployment}
        patch: |
          metadata:
            annotations:
              %s
`

// TestReadStep reads each step from a cluster release as the fleet
// folder holds it, and nothing from a file of another object.
func TestReadStep(t *testing.T) {
	for _, c := range []struct {
		name, data string
		want       poolmove.Step
		named      bool
	}{
		{"Combined", fmt.Sprintf(cluster, "", "a: b"), poolmove.Combined, true},
		{"pinned", fmt.Sprintf(cluster, "", "helm.sh/resource-policy: keep"), poolmove.Pinned, true},
		{"split", fmt.Sprintf(cluster, ", computeplane.dev/cluster-chart: SplitPools", "a: b"), poolmove.Split, true},
		{"another object", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: computeplane, namespace: tenant-acme}\n", poolmove.Split, false},
	} {
		step, name, err := poolmove.ReadStep([]byte(c.data))
		if err != nil || step != c.want || (name != "") != c.named {
			t.Errorf("%s: step %d, name %q, %v; want step %d", c.name, step, name, err, c.want)
		}
	}
	if _, _, err := poolmove.ReadStep([]byte("kind: [")); err == nil {
		t.Errorf("a broken file reads without an error")
	}
}

// TestCheckNamesTheFile: a cluster release file the folder holds broken
// is an error naming the file and the folder.
func TestCheckNamesTheFile(t *testing.T) {
	cfg := &api.Config{Delivery: api.Direct}
	cfg.Platform.ClusterChart = api.ClusterChartSplitPools
	files := []output.File{{Path: "tenant-acme/helmrelease-computeplane.yaml", Data: []byte(fmt.Sprintf(cluster, ", computeplane.dev/cluster-chart: SplitPools", "a: b"))}}
	old := units.FilesLayout([]output.File{{Path: "tenant-acme/helmrelease-computeplane.yaml", Data: []byte("kind: [")}}, "fleet")
	err := poolmove.Check(cfg, files, old)
	if err == nil || !strings.Contains(err.Error(), "tenant-acme/helmrelease-computeplane.yaml in fleet") {
		t.Errorf("error %v, want one naming the file and the folder", err)
	}
}

// TestCheckFindsTheRelease: the earlier render's cluster release is found
// wherever its layout put it (another part of the unit, the layout
// before spec.fleet), and the refusal names that file; a ComputePlane the
// render no longer has, or one already split, is not in the way.
func TestCheckFindsTheRelease(t *testing.T) {
	split := fmt.Sprintf(cluster, ", computeplane.dev/cluster-chart: SplitPools", "a: b")
	combined := fmt.Sprintf(cluster, "", "a: b")
	pinned := fmt.Sprintf(cluster, "", "helm.sh/resource-policy: keep")
	other := strings.ReplaceAll(combined, "tenant-acme", "tenant-gone")
	render := []output.File{{Path: "tenant-acme/part1/helmrelease-computeplane.yaml", Data: []byte(split)}}
	for _, c := range []struct {
		name      string
		old       []output.File
		migration api.PoolMigration
		want      string
	}{
		{"Combined in another part", []output.File{{Path: "tenant-acme/helmrelease-computeplane.yaml", Data: []byte(combined)}}, api.PoolMigrationAdopt,
			"the cluster release tenant-acme/computeplane (tenant-acme/helmrelease-computeplane.yaml) in rendered was rendered for clusterChart: Combined without poolMigration: Pin"},
		{"pinned in a part, no Adopt", []output.File{{Path: "tenant-acme/part2/helmrelease-computeplane.yaml", Data: []byte(pinned)}}, "",
			"the cluster release tenant-acme/computeplane (tenant-acme/part2/helmrelease-computeplane.yaml) in rendered pins its workers"},
		{"pinned, Adopt", []output.File{{Path: "tenant-acme/helmrelease-computeplane.yaml", Data: []byte(pinned)}}, api.PoolMigrationAdopt, ""},
		{"split", []output.File{{Path: "tenant-acme/helmrelease-computeplane.yaml", Data: []byte(split)}}, "", ""},
		{"a ComputePlane the render dropped", []output.File{{Path: "tenant-gone/helmrelease-computeplane.yaml", Data: []byte(other)}}, "", ""},
		{"in a dot folder", []output.File{{Path: ".old/tenant-acme/helmrelease-computeplane.yaml", Data: []byte(combined)}}, "", ""},
	} {
		cfg := &api.Config{Delivery: api.Direct}
		cfg.Platform.ClusterChart = api.ClusterChartSplitPools
		cfg.Platform.PoolMigration = c.migration
		err := poolmove.Check(cfg, render, units.FilesLayout(c.old, "rendered"))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	// No earlier render: nothing to follow.
	cfg := &api.Config{Delivery: api.Direct}
	cfg.Platform.ClusterChart = api.ClusterChartSplitPools
	if err := poolmove.Check(cfg, render, nil); err != nil {
		t.Errorf("no earlier render: %v", err)
	}
}
