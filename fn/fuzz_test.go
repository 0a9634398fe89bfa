package fn_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/fn"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext/readback"
)

// FuzzProcessor feeds arbitrary bytes to the KRM function as its stdin,
// seeded with the ResourceList of every fixture. Invariants:
//
//   - it never panics, and no refusal is a bug (fn.BugMessage);
//   - a refusal writes a ResourceList with no items and one error result per
//     problem, each with a message;
//   - every generated object reads back through sigs.k8s.io/yaml as
//     go-yaml v3 reads it (readback.Agree);
//   - what it renders reads back as a ResourceList, and a second run on
//     the output writes the same output again (kpt in place), or, when the
//     inputs came as items and were not kept, a third run writes the same
//     as the second.
//
// spec.inputs of a fuzzed config is read relative to a folder that holds
// one tenant file.
func FuzzProcessor(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.resourceList(f, false))
	}
	for _, s := range hostileResourceLists {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tenants.yaml"), []byte(fuzzTenants), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out1, refused := runFuzz(t, dir, data)
		if refused {
			return
		}
		out2, refused := runFuzz(t, dir, out1)
		if refused {
			t.Fatalf("the output of a run is refused as input:\n%s", out1)
		}
		if bytes.Equal(out1, out2) {
			return
		}
		out3, refused := runFuzz(t, dir, out2)
		if refused || !bytes.Equal(out2, out3) {
			t.Fatalf("running on its own output is not stable:\n%s\n---- second run ----\n%s\n---- third run ----\n%s", out1, out2, out3)
		}
	})
}

const fuzzTenants = `apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata:
  name: acme
  namespace: tenant-root
spec:
  computeplane: true
`

// hostileResourceLists seed the processor with the shapes of ResourceList
// that kyaml's own reader mishandles.
var hostileResourceLists = []string{
	"",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [5, [a], *x]\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {a: b}\nfunctionConfig: 5\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: &c {apiVersion: fn.computeplane.dev/v1alpha1, kind: ComputePlaneGenerator, metadata: {name: x}}\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, annotations: *c}\n",
	"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: {apiVersion: fn.computeplane.dev/v1alpha1, kind: ComputePlaneGenerator, metadata: {name: x}, spec: {keepInputs: true}}\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: b} # c\n  data: &d {x: &e [1, 2]}\n  more: [*e, *e]\n",
}

// runFuzz runs the function on data and checks the invariants of one run.
func runFuzz(t *testing.T, dir string, data []byte) ([]byte, bool) {
	t.Helper()
	var out bytes.Buffer
	start := time.Now()
	err := fn.Execute(fn.Processor{Dir: dir}, bytes.NewReader(data), &out)
	// Generous, so that a busy machine does not make a finding: the
	// fuzzer's inputs are small, and a hang or a superlinear path shows up
	// as seconds.
	if d := time.Since(start); d > 10*time.Second+time.Duration(len(data))*50*time.Microsecond {
		t.Fatalf("a run on %d bytes took %v", len(data), d)
	}
	if err == nil {
		items, err := (&kio.ByteReader{Reader: bytes.NewReader(out.Bytes())}).Read()
		if err != nil {
			t.Fatalf("the output does not read back: %v\n%s", err, out.Bytes())
		}
		// What is validated is what is applied: every generated object
		// reads the same to Flux's YAML 1.1 reader.
		for _, item := range items {
			if item.GetLabels()["app.kubernetes.io/managed-by"] != "computeplane-fn" {
				continue
			}
			text, err := item.String()
			if err != nil {
				t.Fatal(err)
			}
			if err := readback.Agree([]byte(text)); err != nil {
				t.Fatalf("%s %s/%s: %v", item.GetKind(), item.GetNamespace(), item.GetName(), err)
			}
		}
		return out.Bytes(), false
	}
	problems, ok := fn.AsProblems(err)
	if !ok {
		t.Fatalf("a refusal must be a *fn.Refusal, got %T: %v", err, err)
	}
	if len(problems) == 0 {
		t.Fatal("a refusal without problems")
	}
	for _, p := range problems {
		if strings.TrimSpace(p.Message) == "" {
			t.Fatalf("a problem without a message: %+v", p)
		}
		if strings.Contains(p.Message, fn.BugMessage) || strings.Contains(p.Message, "internal error") {
			t.Fatalf("a bug: %v", p)
		}
	}
	rl, err := yaml.Parse(out.String())
	if err != nil {
		t.Fatalf("a refusal's output does not read back: %v\n%s", err, out.Bytes())
	}
	if items, err := rl.Pipe(yaml.Lookup("items")); err != nil || (items != nil && len(items.Content()) > 0) {
		t.Fatalf("a refusal wrote items:\n%s", out.Bytes())
	}
	results, err := rl.Pipe(yaml.Lookup("results"))
	if err != nil || results == nil || len(results.Content()) != len(problems) {
		t.Fatalf("a refusal must write one result per problem (%d):\n%s", len(problems), out.Bytes())
	}
	return nil, true
}
