package cluster

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// renderCase is one render the API server must accept.
type renderCase struct {
	name string
	objs func(t *testing.T) []*unstructured.Unstructured
}

// renderCases are every render the project has: each golden fixture that
// renders (through the KRM function, as its golden test runs it), each
// example, and the suite's own fleets, standalone and as a fleet folder.
func (e *env) renderCases(t *testing.T) []renderCase {
	var cases []renderCase
	fixtures, err := filepath.Glob("../../fixtures/*/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range fixtures {
		dir := filepath.Dir(cfg)
		if _, err := os.Stat(filepath.Join(dir, "errors.txt")); err == nil {
			continue // a refusal: nothing is rendered
		}
		inputs, _ := filepath.Glob(filepath.Join(dir, "input*.yaml"))
		var rel []string
		for _, in := range inputs {
			rel = append(rel, filepath.Base(in))
		}
		cases = append(cases, renderCase{name: "fixtures/" + filepath.Base(dir), objs: func(t *testing.T) []*unstructured.Unstructured {
			return harness.RenderKRM(t, e.bins.fn, dir, "config.yaml", rel...)
		}})
	}
	examples, err := filepath.Glob("../../examples/*/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../../examples/*/*/config.yaml")
	for _, cfg := range append(examples, more...) {
		dir, name := filepath.Dir(cfg), "config.yaml"
		if filepath.Base(filepath.Dir(dir)) != "examples" {
			// examples/ci keeps its config in fleet/, its inputs relative
			// to examples/ci.
			dir, name = filepath.Dir(dir), filepath.Join(filepath.Base(dir), "config.yaml")
		}
		rel, _ := filepath.Rel("../..", cfg)
		cases = append(cases, renderCase{name: rel, objs: func(t *testing.T) []*unstructured.Unstructured {
			return harness.Render(t, e.bins.fn, dir, name)
		}})
	}
	for _, f := range []string{"direct", "platform", "fleet"} {
		cases = append(cases, renderCase{name: "testdata/" + f, objs: func(t *testing.T) []*unstructured.Unstructured {
			return harness.Render(t, e.bins.fn, fleetDir(t, f), "config.yaml")
		}})
	}
	cases = append(cases, renderCase{name: "testdata/fleet as a fleet folder", objs: func(t *testing.T) []*unstructured.Unstructured {
		dir := fleetDir(t, "fleet")
		out := filepath.Join(t.TempDir(), "fleet")
		harness.RenderFolder(t, e.bins.fn, dir, out, "config.yaml")
		return folderObjects(t, out)
	}})
	return cases
}

// folderObjects reads the objects of a fleet folder: every YAML file but
// the kustomization.yaml files, which kustomize reads and no server sees.
func folderObjects(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	files, err := harness.YAMLFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			keep = append(keep, f)
		}
	}
	objs, err := harness.DecodeFiles(keep...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// testServerSideApply: every render is accepted by server-side apply with
// fieldValidation=Strict, without a warning, and every field reads back as
// sent. Dry-run, so that renders sharing names do not meet; the CRDs'
// schemas and CEL rules are the server's to judge.
//
// A render for poolMigration: Adopt holds MachineDeployments that carry only
// the annotations handing them to their pool releases: it is applied over
// the MachineDeployments the Combined chart made and Pin kept, which the API
// server requires (a MachineDeployment without spec is refused). So the
// stage serves Cluster API's own CRDs (Cozystack's tree) and creates each
// such MachineDeployment first, as the chart left it, before the dry run.
func (e *env) testServerSideApply(t *testing.T) {
	capi := false
	for _, rc := range e.renderCases(t) {
		t.Run(strings.ReplaceAll(rc.name, "/", "_"), func(t *testing.T) {
			objs := harness.Generated(rc.objs(t))
			if len(objs) == 0 {
				t.Fatalf("%s renders nothing", rc.name)
			}
			e.namespaces(tenantNamespaces(objs)...)
			if mds := ofKind(objs, "MachineDeployment"); len(mds) > 0 {
				if !capi {
					if e.bins.thirdParty == "" {
						t.Skip("E2E_THIRD_PARTY is not set (Cluster API's CRDs are in Cozystack's tree): run the suite with `make e2e`")
					}
					e.applyRealChartCRDs(t, filepath.Join(e.bins.thirdParty, "cozystack"))
					capi = true
				}
				for _, md := range mds {
					e.applyAll(t, e.admin, []*unstructured.Unstructured{keptMachineDeployment(md.GetNamespace(), md.GetName())}, false)
				}
			}
			e.applyAll(t, e.kc, objs, true)
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
			}
			var summary []string
			for k, n := range kinds {
				summary = append(summary, k+"="+strconv.Itoa(n))
			}
			sort.Strings(summary)
			t.Logf("%s: %d objects accepted (%s)", rc.name, len(objs), strings.Join(summary, " "))
		})
	}
}

// keptMachineDeployment is the MachineDeployment name of namespace's cluster
// as the Combined chart (its node group's pool) made it and Pin kept it,
// with what Cluster API's CRD requires: the cluster, a selector, and a
// template naming a bootstrap config and a KubevirtMachineTemplate.
func keptMachineDeployment(namespace, name string) *unstructured.Unstructured {
	cluster := strings.SplitN(name, "-", 2)[0]
	labels := map[string]any{"cluster.x-k8s.io/cluster-name": cluster, "cluster.x-k8s.io/deployment-name": name}
	return obj("cluster.x-k8s.io/v1beta1", "MachineDeployment", namespace, name, map[string]any{
		"metadata": map[string]any{"name": name, "namespace": namespace,
			"annotations": map[string]any{"helm.sh/resource-policy": "keep", "meta.helm.sh/release-name": cluster, "meta.helm.sh/release-namespace": namespace}},
		"spec": map[string]any{
			"clusterName": cluster,
			"replicas":    int64(1),
			"selector":    map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"clusterName": cluster,
					"bootstrap": map[string]any{"configRef": map[string]any{
						"apiVersion": "bootstrap.cluster.x-k8s.io/v1alpha3", "kind": "TalosConfigTemplate", "name": name}},
					"infrastructureRef": map[string]any{
						"apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1", "kind": "KubevirtMachineTemplate", "name": name + "-x7k2p"},
				},
			},
		},
	})
}
