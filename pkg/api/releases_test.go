package api_test

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// TestReleasesShardLabel: spec.releases.shardLabel defaults to Webhook on
// the default platform (Kubernetes 1.33, flux-shard-operator present), to
// Admission where the platform serves MutatingAdmissionPolicy (1.36), and
// to Rendered without the operator; Admission is refused below 1.36 and
// Webhook without the operator; it takes Rendered and Omitted anywhere,
// and names the four values when given another.
func TestReleasesShardLabel(t *testing.T) {
	for _, c := range []struct{ spec, want, problem string }{
		{"{}", api.ShardLabelWebhook, ""},
		{"{releases: {}}", api.ShardLabelWebhook, ""},
		{`{platform: {kubernetesVersion: "1.35"}}`, api.ShardLabelWebhook, ""},
		{`{platform: {kubernetesVersion: "1.36"}}`, api.ShardLabelAdmission, ""},
		{`{platform: {kubernetesVersion: "1.36", shardOperator: Absent}}`, api.ShardLabelRendered, ""},
		{"{platform: {shardOperator: Absent}}", api.ShardLabelRendered, ""},
		{"{platform: {shardOperator: Absent}, releases: {shardLabel: Omitted}}", api.ShardLabelOmitted, ""},
		{"{platform: {shardOperator: Absent}, releases: {shardLabel: Webhook}}", "", "spec.releases.shardLabel: Webhook sends each release's create to flux-shard-operator's webhook, and spec.platform.shardOperator says the operator is Absent: nothing would stamp a shard. Use Rendered (the default without the operator) or Omitted"},
		{"{platform: {shardOperator: absent}}", "", `spec.platform.shardOperator: must be Present or Absent, not "absent"`},
		{`{platform: {kubernetesVersion: v1.36.3}, releases: {shardLabel: Omitted}}`, api.ShardLabelOmitted, ""},
		{"{releases: {shardLabel: Rendered}}", api.ShardLabelRendered, ""},
		{"{releases: {shardLabel: Admission}}", "", `spec.releases.shardLabel: Admission needs admissionregistration.k8s.io/v1 MutatingAdmissionPolicy, which Kubernetes serves from 1.36 on; spec.platform.kubernetesVersion says the management cluster runs 1.33. Use Webhook (the default there), or name the cluster's version`},
		{"{releases: {shardLabel: rendered}}", "", `spec.releases.shardLabel: must be Admission, Webhook, Omitted or Rendered, not "rendered"`},
		{"{releases: {shardLabel: 1}}", "", "spec.releases.shardLabel: must be a string, not the number 1"},
	} {
		n, err := yaml.Parse("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata: {name: fleet}\nspec: " + c.spec + "\n")
		if err != nil {
			t.Fatal(err)
		}
		cfg, problems := api.DecodeConfig(api.NewObject(n.YNode(), api.Origin{File: "config.yaml"}))
		switch {
		case c.problem != "":
			if len(problems) == 0 || problems[0].Field+": "+problems[0].Message != c.problem {
				t.Errorf("%s: problems %v, want %q", c.spec, problems, c.problem)
			}
		case len(problems) > 0:
			t.Errorf("%s: refused: %v", c.spec, problems)
		case cfg.Releases.ShardLabel != c.want:
			t.Errorf("%s: shardLabel %q, want %q", c.spec, cfg.Releases.ShardLabel, c.want)
		}
	}
}

// TestPlatformKubernetesVersion: the supported minors, with or without a
// "v" and a patch, and a clear refusal of anything else.
func TestPlatformKubernetesVersion(t *testing.T) {
	for _, c := range []struct {
		version string
		ok      bool
	}{
		{`"1.33"`, true}, {`"1.34"`, true}, {`"1.36"`, true}, {"v1.33.5", true}, {"1.33.12", true},
		{`"1.32"`, false}, {`"1.37"`, false}, {"1.3", false}, {`"1.033"`, false}, {"2.33", false},
		{"1.33.x", false}, {`""`, true}, // empty: the default
	} {
		n, err := yaml.Parse("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata: {name: fleet}\nspec: {platform: {kubernetesVersion: " + c.version + "}}\n")
		if err != nil {
			t.Fatal(err)
		}
		cfg, problems := api.DecodeConfig(api.NewObject(n.YNode(), api.Origin{File: "config.yaml"}))
		if c.ok != (len(problems) == 0) {
			t.Errorf("%s: problems %v, want ok %v", c.version, problems, c.ok)
			continue
		}
		if !c.ok && problems[0].Field != "spec.platform.kubernetesVersion" {
			t.Errorf("%s: problem at %s, want spec.platform.kubernetesVersion", c.version, problems[0].Field)
		}
		if c.ok && c.version == `""` && cfg.Platform.KubernetesVersion != api.DefaultKubernetesVersion {
			t.Errorf("default version %q, want %q", cfg.Platform.KubernetesVersion, api.DefaultKubernetesVersion)
		}
	}
}

// TestBaselineConfig: spec.baseline's defaults, its checks, and its
// refusal next to spec.fleet, which carries the baseline as files.
func TestBaselineConfig(t *testing.T) {
	for _, c := range []struct{ spec, field string }{
		{"{}", ""},
		{"{baseline: {url: oci://registry.example/charts/computeplane-baseline, tag: 0.1.0, namespace: cozy-system}}", ""},
		{"{baseline: {url: https://example.com/chart}}", "spec.baseline.url"},
		{"{baseline: {tag: -x}}", "spec.baseline.tag"},
		{"{baseline: {namespace: Flux}}", "spec.baseline.namespace"},
		{"{fleet: {sourceRef: {kind: GitRepository, name: fleet}, path: ./fleet}, baseline: {tag: 0.1.0}}", "spec.baseline"},
	} {
		n, err := yaml.Parse("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata: {name: fleet}\nspec: " + c.spec + "\n")
		if err != nil {
			t.Fatal(err)
		}
		cfg, problems := api.DecodeConfig(api.NewObject(n.YNode(), api.Origin{File: "config.yaml"}))
		switch {
		case c.field == "" && len(problems) > 0:
			t.Errorf("%s: refused: %v", c.spec, problems)
		case c.field != "" && (len(problems) != 1 || problems[0].Field != c.field):
			t.Errorf("%s: problems %v, want one at %s", c.spec, problems, c.field)
		case c.spec == "{}" && (cfg.Baseline.URL != api.DefaultBaselineChartURL || cfg.Baseline.Tag != api.BaselineChartVersion || cfg.Baseline.Namespace != api.DefaultWiringNamespace):
			t.Errorf("defaults %+v", cfg.Baseline)
		}
	}
}
