package poolmove_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/poolmove"
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
	files := []output.File{{Path: "tenant-acme/helmrelease-computeplane.yaml"}}
	err := poolmove.Check(cfg, files, func(string) ([]byte, bool, error) { return []byte("kind: ["), true, nil }, "fleet")
	if err == nil || !strings.Contains(err.Error(), "tenant-acme/helmrelease-computeplane.yaml in fleet") {
		t.Errorf("error %v, want one naming the file and the folder", err)
	}
}
