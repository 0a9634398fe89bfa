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
// function: the output keeps its items, the run succeeds, and two results of
// severity warning per tenant with a ComputePlane name its Tenant object:
// one Pod Security, one the guard's weaker hold on the module's cluster. The standalone run returns the same warnings; a Direct
// fleet has none.
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
	var podSecurity, guard, dashboard int
	for _, r := range rl.Results {
		if r.Severity != framework.Warning {
			t.Errorf("result %q has severity %q, want warning", r.Message, r.Severity)
		}
		switch {
		case strings.Contains(r.Message, "runs without Pod Security"):
			podSecurity++
		case strings.Contains(r.Message, "is guarded less") && strings.Contains(r.Message, "computeplane-cluster-admin-kubeconfig"):
			guard++
		case strings.Contains(r.Message, "may be administered by the tenant's users") && strings.Contains(r.Message, "computeplane-cluster-dashboard-resources"):
			dashboard++
		default:
			t.Errorf("result %q names neither Pod Security nor the guard", r.Message)
		}
		if r.ResourceRef == nil {
			t.Errorf("result %q names no object", r.Message)
			continue
		}
		refs = append(refs, r.ResourceRef.APIVersion+" "+r.ResourceRef.Kind+" "+r.ResourceRef.Namespace+"/"+r.ResourceRef.Name)
	}
	want := "apps.cozystack.io/v1alpha1 Tenant tenant-root/acme"
	if podSecurity != 1 || guard != 1 || dashboard != 1 || len(refs) != 3 || refs[0] != want || refs[1] != want || refs[2] != want {
		t.Errorf("warnings name %v (%d of Pod Security, %d of the guard, %d of the dashboard Role), want one of each naming %s (the one tenant with a ComputePlane)", refs, podSecurity, guard, dashboard, want)
	}

	run, problems := pipeline.Run(pipeline.Options{Dir: f.dir, ConfigFile: filepath.Join(f.dir, "config.yaml"), Inputs: f.inputs})
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
		if strings.Contains(out.String(), "Pod Security") || strings.Contains(out.String(), "guarded less") || len(items) == 0 {
			t.Errorf("a Direct fleet has results of Pod Security or the guard, or no items:\n%s", out.String())
		}
	}
}
