package fn_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/fn"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
)

// TestPlatformWarnsOfPodSecurity runs the platform-delivery fixture as a KRM
// function: the output keeps its items, the run succeeds, and one result of
// severity warning per tenant with a ComputePlane names its Tenant object
// and Pod Security. The standalone run returns the same warnings; a Direct
// fleet has none about Pod Security.
func TestPlatformWarnsOfPodSecurity(t *testing.T) {
	var f fixture
	for _, x := range loadFixtures(t) {
		if filepath.Base(x.dir) == "platform-delivery" {
			f = x
		}
	}
	var out bytes.Buffer
	if err := fn.Execute(fn.Processor{Dir: f.dir}, bytes.NewReader(f.resourceList(t, false)), &out); err != nil {
		t.Fatalf("a warning failed the run: %v", err)
	}
	var rl struct {
		Items   []map[string]any   `json:"items"`
		Results []framework.Result `json:"results"`
	}
	if err := sigsyaml.Unmarshal(out.Bytes(), &rl); err != nil {
		t.Fatal(err)
	}
	if len(rl.Items) == 0 {
		t.Fatal("a run with warnings emitted no items")
	}
	var refs []string
	for _, r := range rl.Results {
		if r.Severity != framework.Warning {
			t.Errorf("result %q has severity %q, want warning", r.Message, r.Severity)
		}
		if !strings.Contains(r.Message, "Pod Security") {
			// The fixture has no spec.fleet: its routed apps' baseline is
			// not rendered, which is warned about per tenant too.
			if !strings.Contains(r.Message, "computeplane-baseline") {
				t.Errorf("result %q names neither Pod Security nor the baseline", r.Message)
			}
			continue
		}
		if r.ResourceRef == nil {
			t.Errorf("result %q names no object", r.Message)
			continue
		}
		refs = append(refs, r.ResourceRef.APIVersion+" "+r.ResourceRef.Kind+" "+r.ResourceRef.Namespace+"/"+r.ResourceRef.Name)
	}
	want := "apps.cozystack.io/v1alpha1 Tenant tenant-root/acme"
	if len(refs) != 1 || refs[0] != want {
		t.Errorf("warnings name %v, want exactly [%s] (the one tenant with a ComputePlane)", refs, want)
	}

	run, problems := pipeline.Run(pipeline.Options{Dir: f.dir, ConfigFile: filepath.Join(f.dir, "config.yaml"), Inputs: f.inputs, Lazy: true})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(run.Warnings) != len(rl.Results) || len(run.Warnings) > 0 && run.Warnings[0].Message != rl.Results[0].Message {
		t.Errorf("standalone warnings %v differ from the KRM results %v", run.Warnings, rl.Results)
	}

	for _, x := range loadFixtures(t) {
		if filepath.Base(x.dir) != "direct-fleet" {
			continue
		}
		out.Reset()
		if err := fn.Execute(fn.Processor{Dir: x.dir}, bytes.NewReader(x.resourceList(t, false)), &out); err != nil {
			t.Fatal(err)
		}
		items, err := (&kio.ByteReader{Reader: &out}).Read()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "Pod Security") && strings.Contains(out.String(), "results:") || len(items) == 0 {
			t.Errorf("a Direct fleet has Pod Security results or no items:\n%s", out.String())
		}
	}
}
