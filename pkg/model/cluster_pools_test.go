package model_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

// splitConfig is config on the SplitPools line.
func splitConfig(clusterValues map[string]any) *api.Config {
	cfg := config(api.PodSecurityRestricted, clusterValues)
	cfg.Platform.ClusterChart = api.ClusterChartSplitPools
	return cfg
}

// poolChartSchema is the values schema of apps/kubernetes-nodes at
// cozystack#3315's merge.
func poolChartSchema(t *testing.T) (*crdtest.Schema, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(crdtest.SharedDir(t), "third_party", "cozystack-pools", "packages", "apps", "kubernetes-nodes", "values.schema.json"))
	if err != nil {
		t.Skipf("the pool chart's values schema is not here (%v): ../shared/third_party is needed", err)
	}
	s, err := crdtest.CompileSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return s, doc
}

// TestPoolFieldsAreThePoolChartsOwn: every field a pool takes is a value of
// apps/kubernetes-nodes, and none of the chart's values that name the
// cluster, its version or its images is among them.
func TestPoolFieldsAreThePoolChartsOwn(t *testing.T) {
	_, doc := poolChartSchema(t)
	props, _ := doc["properties"].(map[string]any)
	for _, f := range model.PoolFields {
		if _, ok := props[f]; !ok {
			t.Errorf("pool field %q is no value of apps/kubernetes-nodes", f)
		}
	}
	for _, f := range []string{"cluster", "version", "talos", "images"} {
		if slices.Contains(model.PoolFields, f) {
			t.Errorf("%q is a pool field: it is the operator's or the platform's", f)
		}
	}
}

// TestPoolsMatchPoolChartSchema: the values of every pool release (the
// function's linkage values and the pool's fields) are valid values of
// apps/kubernetes-nodes; the cluster's values hold no node group.
func TestPoolsMatchPoolChartSchema(t *testing.T) {
	schema, _ := poolChartSchema(t)
	p := plan(t, splitConfig(api.DefaultClusterValues()))
	k := knobsOf(values(t, `
nodeGroups:
  md0: {minReplicas: 1, maxReplicas: 2, instanceType: u1.medium, diskSize: 20Gi, roles: [ingress-nginx]}
  gpu:
    minReplicas: 0
    maxReplicas: 4
    instanceType: u1.xlarge
    diskSize: 100Gi
    gpus: [{name: nvidia.com/AD102GL_L40S}]
    kubelet: {evictionHardMemory: 5%, kubeReservedCpu: 200m}
    storageClass: replicated
    maxUnhealthy: "0%"
    nodeStartupTimeout: 30m
  sized: {minReplicas: 0, maxReplicas: 3, instanceType: "", diskSize: 30Gi, resources: {cpu: 4, memory: 16Gi}}
`))
	if problems := p.Check(k); len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	if _, ok := p.Values(k)["nodeGroups"]; ok {
		t.Errorf("the cluster's values hold nodeGroups on the SplitPools line")
	}
	pools := p.Pools(k)
	var names []string
	for _, pool := range pools {
		names = append(names, pool.Name)
		if pool.Release != "kubernetes-nodes-computeplane-"+pool.Name {
			t.Errorf("pool %s is released as %q", pool.Name, pool.Release)
		}
		// Without clusterReleaseName, which the snapshot's schema does not
		// declare (checked as a structural schema, it is an unknown field;
		// Helm's JSON Schema check takes it, as the schema sets no
		// additionalProperties: false).
		values := map[string]any{"cluster": "computeplane"}
		for key, v := range pool.Values {
			values[key] = v
		}
		for _, v := range schema.Validate(map[string]any{"spec": values}) {
			t.Errorf("pool %s breaks the pool chart's schema: %s", pool.Name, v)
		}
	}
	if diff := cmp.Diff([]string{"gpu", "md0", "sized"}, names); diff != "" {
		t.Errorf("pools (-want +got):\n%s", diff)
	}
}

// TestDefaultPool: without node groups a ComputePlane still has workers on
// the SplitPools line: md0 with the ingress role, scaled from zero.
func TestDefaultPool(t *testing.T) {
	p := plan(t, splitConfig(api.DefaultClusterValues()))
	for _, k := range []*api.Knobs{nil, knobsOf(values(t, `nodeGroups: {}`))} {
		pools := p.Pools(k)
		want := []model.Pool{{Name: "md0", Release: "kubernetes-nodes-computeplane-md0", Values: map[string]any{
			"minReplicas": 0, "maxReplicas": 10, "instanceType": "u1.medium", "diskSize": "20Gi", "roles": []any{"ingress-nginx"}}}}
		if diff := cmp.Diff(want, pools); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

// TestPoolProblems: a node group that is no pool, the operator's or a
// tenant's, is refused at its field on the SplitPools line, and taken on
// the Combined line.
func TestPoolProblems(t *testing.T) {
	group := `{minReplicas: 1, maxReplicas: 2, instanceType: u1.medium, diskSize: 20Gi, roles: [ingress-nginx]`
	for _, c := range []struct {
		name, knobs, field, words string
	}{
		{"a release name over 53", `nodeGroups: {abcdefghijklmnopqrstuvwx: ` + group + `}}`, "spec.nodeGroups.abcdefghijklmnopqrstuvwx", "at most 23 characters"},
		{"the longest name", `nodeGroups: {abcdefghijklmnopqrstuvw: ` + group + `}}`, "", ""},
		{"the workers' OS", `nodeGroups: {md0: ` + group + `, talos: {version: v1.13.0}}}`, "spec.nodeGroups.md0.talos", "is not a field of a worker pool"},
		{"the cluster", `nodeGroups: {md0: ` + group + `, clusterReleaseName: other}}`, "spec.nodeGroups.md0.clusterReleaseName", "is not a field of a worker pool"},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := knobsOf(values(t, c.knobs))
			split := plan(t, withKnobs(t, splitConfig(api.DefaultClusterValues()), permissiveKnobs))
			problems := split.Check(k)
			if c.field == "" {
				if len(problems) > 0 {
					t.Fatalf("refused: %v", problems)
				}
				return
			}
			if len(problems) != 1 || problems[0].Field != c.field || !strings.Contains(problems[0].Message, c.words) {
				t.Errorf("%v, want one problem at %s saying %q", problems, c.field, c.words)
			}
			if p := plan(t, withKnobs(t, config(api.PodSecurityRestricted, api.DefaultClusterValues()), permissiveKnobs)); len(p.Check(k)) > 0 {
				t.Errorf("the Combined line refuses it: %v", p.Check(k))
			}
		})
	}
	// The operator's node groups are held to the same.
	cfg := splitConfig(values(t, `nodeGroups: {md0: `+group+`, images: {x: y}}}`))
	if _, problems := model.NewClusterPlan(cfg); len(problems) != 1 || problems[0].Field != "spec.cluster.values.nodeGroups.md0.images" {
		t.Errorf("the operator's group with images: %v", problems)
	}
}

// withKnobs sets the config's knob schema from YAML.
func withKnobs(t *testing.T, cfg *api.Config, schema string) *api.Config {
	cfg.Cluster.Knobs = values(t, schema)
	return cfg
}

// TestPoolsTakeWhatTheCombinedChartTookFromTheCluster: a pool takes from
// the cluster's values what the Combined chart gave every group (as
// Cozystack's migration 56 carries it), unless the group sets it.
func TestPoolsTakeWhatTheCombinedChartTookFromTheCluster(t *testing.T) {
	fixed := api.DefaultClusterValues()
	for k, v := range values(t, `
storageClass: fast
nodeHealthCheck: {maxUnhealthy: "0%", nodeStartupTimeout: 40m, readyUnknownTimeout: 6m, readyFalseTimeout: 12m}
maxNodeProvisionTime: 45m
version: v1.33
talos: {version: v1.13.2}
images: {kubectl: example.com/kubectl:1, talosCsrSigner: example.com/signer:1}
`) {
		fixed[k] = v
	}
	p := plan(t, splitConfig(fixed))
	k := knobsOf(values(t, `
nodeGroups:
  md0: {minReplicas: 1, maxReplicas: 2, instanceType: u1.medium, diskSize: 20Gi, roles: [ingress-nginx]}
  own: {minReplicas: 0, maxReplicas: 2, instanceType: u1.medium, diskSize: 20Gi, storageClass: mine, maxUnhealthy: "50%"}
`))
	if problems := p.Check(k); len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	got := map[string]map[string]any{}
	for _, pool := range p.Pools(k) {
		got[pool.Name] = pool.Values
	}
	carried := map[string]any{"nodeStartupTimeout": "40m", "readyUnknownTimeout": "6m", "readyFalseTimeout": "12m",
		"maxNodeProvisionTime": "45m", "version": "v1.33", "talos": map[string]any{"version": "v1.13.2"}, "images": map[string]any{"kubectl": "example.com/kubectl:1"}}
	want := map[string]map[string]any{
		"md0": {"minReplicas": 1.0, "maxReplicas": 2.0, "instanceType": "u1.medium", "diskSize": "20Gi", "roles": []any{"ingress-nginx"}, "storageClass": "fast", "maxUnhealthy": "0%"},
		"own": {"minReplicas": 0.0, "maxReplicas": 2.0, "instanceType": "u1.medium", "diskSize": "20Gi", "storageClass": "mine", "maxUnhealthy": "50%"},
	}
	for _, w := range want {
		for f, v := range carried {
			w[f] = v
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
