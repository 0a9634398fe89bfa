package api_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// decodeConfigMap decodes a ConfigMap functionConfig of the given data
// (YAML) and returns the config with its problems as "field: message".
func decodeConfigMap(t *testing.T, data string) (*api.Config, []string) {
	t.Helper()
	n, err := yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\n  annotations: {config.kubernetes.io/local-config: \"true\"}\ndata: " + data + "\n")
	if err != nil {
		t.Fatal(err)
	}
	cfg, problems := api.DecodeConfig(api.NewObject(n.YNode(), api.Origin{File: "fn-config.yaml"}))
	var msgs []string
	for _, p := range problems {
		if p.Object.Kind != "ConfigMap" || p.Object.Name != "function-input" || p.File != "fn-config.yaml" {
			t.Errorf("a problem that does not name the ConfigMap and its file: %+v", p)
		}
		msgs = append(msgs, p.Field+": "+p.Message)
	}
	return cfg, msgs
}

// TestConfigMapFunctionConfig: kpt fn eval -- key=value sets the scalar
// fields of the spec by their path, typed by the schema.
func TestConfigMapFunctionConfig(t *testing.T) {
	cfg, problems := decodeConfigMap(t, `{delivery: Platform, keepInputs: "true", guard.enabled: "false", cluster.egress.allowAncestorIngress: "true", platform.kubernetesVersion: "1.36", routing.namespaces: PerApp}`)
	if len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	got := map[string]any{
		"delivery": cfg.Delivery, "keepInputs": cfg.KeepInputs, "guard.enabled": cfg.Guard.Enabled,
		"allowAncestorIngress": cfg.Cluster.Egress.AllowAncestorIngress, "kubernetesVersion": cfg.Platform.KubernetesVersion,
		"namespaces": cfg.Routing.Namespaces, "shardLabel": cfg.Releases.ShardLabel,
	}
	want := map[string]any{
		"delivery": api.Platform, "keepInputs": true, "guard.enabled": false,
		"allowAncestorIngress": true, "kubernetesVersion": "1.36",
		"namespaces": "PerApp", "shardLabel": api.ShardLabelAdmission, // defaulted as for any config
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if cfg.Ref.Kind != "ConfigMap" {
		t.Errorf("the config's ref is %+v, want the ConfigMap", cfg.Ref)
	}

	cfg, problems = decodeConfigMap(t, `{fleet.sourceRef.kind: GitRepository, fleet.sourceRef.name: fleet, fleet.path: ./fleet, fleet.shards: "3"}`)
	if len(problems) > 0 || cfg.Fleet == nil || cfg.Fleet.Shards != 3 || cfg.Fleet.Path != "fleet" {
		t.Errorf("spec.fleet from a ConfigMap: %+v, %v", cfg.Fleet, problems)
	}
	if _, problems := decodeConfigMap(t, "{}"); len(problems) > 0 {
		t.Errorf("an empty ConfigMap (all defaults): %v", problems)
	}
}

// TestConfigMapFunctionConfigRefused: every mistake names the data key.
func TestConfigMapFunctionConfigRefused(t *testing.T) {
	for _, tc := range []struct {
		data string
		want []string
	}{
		{`{delivry: Platform}`, []string{"data.delivry: unknown field spec.delivry of ComputePlaneGenerator; a ConfigMap functionConfig (kpt fn eval -- key=value) sets the scalar fields of the spec by their path, such as delivery=Platform or guard.enabled=false (apps.values, baseline.namespace, "}},
		{`{inputs: apps/}`, []string{"data.inputs: spec.inputs is a list; a ConfigMap functionConfig (kpt fn eval -- key=value) sets scalar fields only: give a fn.computeplane.dev/v1alpha1 ComputePlaneGenerator (--fn-config) for it"}},
		{`{cluster.values: x}`, []string{"data[cluster.values]: spec.cluster.values is a map; "}},
		{`{guard: x}`, []string{"data.guard: spec.guard is a map; "}},
		{`{delivery.kind: x}`, []string{"data[delivery.kind]: unknown field spec.delivery.kind of ComputePlaneGenerator"}},
		{`{guard.enabled: "yes"}`, []string{`data[guard.enabled]: must be true or false for spec.guard.enabled, not "yes"`}},
		{`{fleet.shards: "ten"}`, []string{`data[fleet.shards]: must be a whole number for spec.fleet.shards, not "ten"`}},
		{`{delivery: Elsewhere}`, []string{`data.delivery: must be Direct or Platform, not "Elsewhere"`}},
		{`{fleet.shards: "1000", fleet.path: ./f, fleet.sourceRef.kind: GitRepository, fleet.sourceRef.name: f}`, []string{"data[fleet.shards]: must be between 1 and 100, not 1000"}},
		{`[a]`, []string{"data: must be a map, not a list"}},
	} {
		_, problems := decodeConfigMap(t, tc.data)
		for _, w := range tc.want {
			found := false
			for _, p := range problems {
				found = found || strings.HasPrefix(p, w)
			}
			if !found {
				t.Errorf("%s: no problem starting %q in %q", tc.data, w, problems)
			}
		}
	}
	n, err := yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nbinaryData: {a: eA==}\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := api.DecodeConfig(api.NewObject(n.YNode(), api.Origin{})); len(problems) == 0 || !strings.Contains(problems[0].Message, "unknown field") || problems[0].Field != "binaryData" {
		t.Errorf("binaryData: %v", problems)
	}
}
