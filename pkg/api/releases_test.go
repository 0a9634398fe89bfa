package api_test

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// TestReleasesShardLabel: spec.releases.shardLabel defaults to Admission,
// takes Rendered, and names the two values when given another.
func TestReleasesShardLabel(t *testing.T) {
	for _, c := range []struct{ spec, want, problem string }{
		{"{}", api.ShardLabelAdmission, ""},
		{"{releases: {}}", api.ShardLabelAdmission, ""},
		{"{releases: {shardLabel: Rendered}}", api.ShardLabelRendered, ""},
		{"{releases: {shardLabel: rendered}}", "", `spec.releases.shardLabel: must be Admission or Rendered, not "rendered"`},
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
