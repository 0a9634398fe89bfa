package fn_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/fn"
)

// functionInput is the ConfigMap kpt makes of kpt fn eval -- key=value.
func functionInput(data string) []byte {
	return []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: function-input\n  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n" + data)
}

type krmOutput struct {
	Items   []map[string]any   `json:"items"`
	Results []framework.Result `json:"results"`
}

func execute(t *testing.T, f fixture) (krmOutput, error) {
	t.Helper()
	var out bytes.Buffer
	err := fn.Execute(fn.Processor{Dir: f.dir}, bytes.NewReader(f.resourceList(t, false)), &out)
	var rl krmOutput
	if uerr := sigsyaml.Unmarshal(out.Bytes(), &rl); uerr != nil {
		t.Fatal(uerr)
	}
	return rl, err
}

// TestConfigMapFunctionConfigKRM: a ConfigMap functionConfig renders as
// the ComputePlaneGenerator of the same fields does, and a key that is no
// scalar field is a result naming the ConfigMap and data[<key>].
func TestConfigMapFunctionConfigKRM(t *testing.T) {
	var f fixture
	for _, x := range loadFixtures(t) {
		if filepath.Base(x.dir) == "direct-fleet" {
			f = x
		}
	}
	want, err := execute(t, f)
	if err != nil {
		t.Fatal(err)
	}
	f.config = functionInput("  delivery: Direct\n")
	got, err := execute(t, f)
	if err != nil {
		t.Fatalf("the ConfigMap is refused: %v", err)
	}
	if diff := cmp.Diff(want.Items, got.Items); diff != "" {
		t.Errorf("a ConfigMap of the same fields renders otherwise (-ComputePlaneGenerator +ConfigMap):\n%s", diff)
	}

	f.config = functionInput("  guard.enabled: \"false\"\n")
	got, err = execute(t, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range got.Items {
		if item["kind"] == "ValidatingAdmissionPolicy" {
			t.Error("guard.enabled=false still renders the guard")
		}
	}
	if len(got.Items) == 0 || len(got.Items) >= len(want.Items) {
		t.Errorf("guard.enabled=false: %d items, the guard on %d", len(got.Items), len(want.Items))
	}

	f.config = functionInput("  inputs: apps/\n")
	got, err = execute(t, f)
	if err == nil || len(got.Items) != 0 || len(got.Results) != 1 {
		t.Fatalf("inputs=apps/: %v, %d items, results %+v; want one refusal and no items", err, len(got.Items), got.Results)
	}
	r := got.Results[0]
	if r.Severity != framework.Error || r.ResourceRef == nil || r.ResourceRef.Kind != "ConfigMap" || r.ResourceRef.Name != "function-input" ||
		r.Field == nil || r.Field.Path != "data.inputs" || !strings.Contains(r.Message, "spec.inputs is a list") {
		t.Errorf("inputs=apps/: result %+v", r)
	}
}
