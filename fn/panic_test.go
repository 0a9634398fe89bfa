package fn_test

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/fn"
)

// TestPanicIsARefusal checks the last resort around the processor: a panic
// (which no input can cause; the fuzz targets and the hostile-input catalog
// see to that) ends as a refusal that says it is a bug, with no items.
func TestPanicIsARefusal(t *testing.T) {
	defer fn.SetPanicForTest("boom")()
	rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\nfunctionConfig: {apiVersion: fn.computeplane.dev/v1alpha1, kind: ComputePlaneGenerator, metadata: {name: f}}\n"
	var out bytes.Buffer
	err := fn.Execute(fn.Processor{}, strings.NewReader(rl), &out)
	problems, ok := fn.AsProblems(err)
	if !ok || len(problems) != 1 || !strings.HasPrefix(problems[0].Message, fn.BugMessage) || !strings.HasSuffix(problems[0].Message, "boom") {
		t.Fatalf("want one problem saying it is a bug, got %v", err)
	}
	list, err := yaml.Parse(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if items := list.Field("items"); items != nil && len(items.Value.Content()) > 0 {
		t.Errorf("a panic wrote items:\n%s", out.String())
	}
}
