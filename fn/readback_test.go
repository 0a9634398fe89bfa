package fn_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext/readback"
)

// passesThrough reports whether an output object is no input of the
// function: it is written as the user wrote it (a plain yes stays plain),
// so it is read back as its own file is, and no meaning of ours is at stake.
func passesThrough(o render.Object) bool {
	if o.Generated {
		return false
	}
	switch o.APIVersion {
	case api.AppsAPIVersion, api.DefinitionAPIVersion, api.ConfigAPIVersion:
		return false
	}
	return true
}

// meantNodes returns the node the function means to write for each object,
// nil for objects that pass through.
func meantNodes(t testing.TB, objs []render.Object) []*yaml.Node {
	t.Helper()
	out := make([]*yaml.Node, len(objs))
	for i, o := range objs {
		if !passesThrough(o) {
			n, err := o.Node()
			if err != nil {
				t.Fatal(err)
			}
			out[i] = n
		}
	}
	return out
}

// TestFixturesReadBackAsMeant is the property "what is validated is what is
// applied" (docs/limits.md), over every fixture that renders: each output object,
// read as Flux and kubectl read it (sigs.k8s.io/yaml, YAML 1.1), is the JSON
// of the object the function meant to write (its node, YAML 1.2 with its
// tags), in the KRM, standalone and fleet-folder modes.
func TestFixturesReadBackAsMeant(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(filepath.Base(f.dir), func(t *testing.T) {
			config := filepath.Join(f.dir, "config.yaml")
			whole, problems := pipeline.Run(pipeline.Options{Dir: f.dir, ConfigFile: config, Inputs: f.inputs})
			if len(problems) > 0 {
				return // a refusal writes nothing
			}
			meant := meantNodes(t, whole.Objects)
			krm, _ := runKRM(t, f.dir, f.resourceList(t, false))
			if err := readback.Matches([]byte(krm), meant); err != nil {
				t.Errorf("KRM: %v", err)
			}
			run, problems := pipeline.Run(pipeline.Options{Dir: f.dir, ConfigFile: config, Inputs: f.inputs})
			if len(problems) > 0 {
				t.Fatalf("standalone run refused: %v", problems)
			}
			var buf bytes.Buffer
			if err := output.Encode(&buf, run.Objects); err != nil {
				t.Fatal(err)
			}
			if err := readback.Matches(buf.Bytes(), meant); err != nil {
				t.Errorf("standalone: %v", err)
			}
			files, problems := units.Files(run.Config, run.Objects)
			if len(problems) > 0 {
				t.Fatalf("folder layout refused: %v", problems)
			}
			for _, file := range files {
				if err := readback.Agree(file.Data); err != nil {
					t.Errorf("folder file %s: %v", file.Path, err)
				}
			}
		})
	}
}

// readBackConfig lets a tenant set any knob, so that fuzzed knobs reach the
// cluster's release.
const readBackConfig = `apiVersion: fn.computeplane.dev/v1alpha1
kind: ComputePlaneGenerator
metadata:
  name: fleet
spec:
  keepInputs: true
  cluster:
    knobs:
      type: object
      x-kubernetes-preserve-unknown-fields: true
`

const readBackInputs = `apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: postgres
spec:
  application: {kind: Postgres, singular: postgres, plural: postgreses, openAPISchema: '{"type":"object"}'}
  release:
    prefix: postgres-
    chartRef: {kind: ExternalArtifact, name: postgres, namespace: cozy-system}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata:
  name: acme
  namespace: tenant-root
spec:
  computeplane: true
`

// FuzzReadBack renders an app whose values, and a ComputePlane whose knobs,
// are fuzzed YAML, as ResourceList items (KRM) and as files (the standalone
// CLI's run), and checks that property (docs/limits.md) on both outputs:
// every generated or kept object reads back through sigs.k8s.io/yaml as the
// JSON go-yaml v3 reads, the app's release applies exactly the values that
// were validated (the app's spec as the function read it), and both modes
// write the same bytes.
func FuzzReadBack(f *testing.F) {
	for _, seed := range []string{
		"region: \"NO\"\nflag: \"on\"\nanswer: \"yes\"\n\"N\": \"Y\"\n",
		"a: yes\nb: [y, n, \"off\", On]\nc: {Yes: NO}\n",
		"t: 1:20\nu: \"190:20:30.15\"\nv: -1:30\nw: 1:60\n",
		"k: {\"<<x\": 1, \"x<<\": \"<<\"}\n",
		"\"<<\": {_namespace: {etcd: tenant-beta}}\n",
		"? !!str <<\n: {a: 1}\n",
		"1.0: a\n0x10: b\ntrue: c\n~: d\n2001-12-14: e\n",
		"b: !!binary PDw=\nc: !!str 5\nd: !!float 1\ne: 18446744073709551615\n",
		"s: |\n  yes\nf: >\n  no\n",
		"a: &a {y: n}\nb: *a\n",
		"nodeGroups: {md0: {gpus: null}}\n",
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, values string) {
		if len(values) > 4096 {
			return
		}
		var doc yaml.Node
		if yaml.Unmarshal([]byte(values), &doc) != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
			return
		}
		app := "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: db\n  namespace: tenant-acme\nspec:\n" + indent(values)
		knobs := "apiVersion: apps.cozystack.io/v1alpha1\nkind: ComputePlane\nmetadata:\n  name: computeplane\n  namespace: tenant-acme\nspec:\n" + indent(values)
		var appNode yaml.Node
		if yaml.Unmarshal([]byte(app), &appNode) != nil {
			return
		}
		// As the function reads it: Check spells an empty null key null.
		if _, err := yamlnode.Check(&appNode, 1_000_000); err != nil {
			return // refused as input; FuzzProcessor covers refusals
		}
		validated, err := yamlnode.ToValue(yamlnode.Lookup(&appNode, "spec"), yamlnode.DefaultBudget)
		if err != nil {
			return // refused as input; FuzzProcessor covers refusals
		}
		inputs := readBackInputs + "---\n" + app + "---\n" + knobs
		writeFile(t, filepath.Join(dir, "config.yaml"), readBackConfig)
		writeFile(t, filepath.Join(dir, "inputs.yaml"), inputs)

		// KRM: the inputs as items, their text as it is (kyaml's writer
		// would respell some of it, such as an empty null in a flow map).
		rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" + indent(readBackConfig) + "items:\n"
		for _, doc := range append(strings.Split(readBackInputs, "---\n"), app, knobs) {
			rl += "-" + indent(doc)[1:]
		}
		krm, refusal := runKRM(t, dir, []byte(rl))
		run, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, "config.yaml"), Inputs: []string{"inputs.yaml"}})
		if refusal != "" || len(problems) > 0 {
			if refusal == "" || len(problems) == 0 {
				t.Fatalf("KRM and standalone disagree on refusing:\nKRM: %s\nstandalone: %v", refusal, problems)
			}
			return
		}
		var standalone bytes.Buffer
		if err := output.Encode(&standalone, run.Objects); err != nil {
			t.Fatal(err)
		}
		if krm != standalone.String() {
			t.Fatalf("KRM and standalone outputs differ:\n%s\n---- standalone ----\n%s", krm, standalone.String())
		}
		if err := readback.Agree([]byte(krm)); err != nil {
			t.Fatal(err)
		}
		// The release applies the values validated.
		for _, doc := range readback.Documents([]byte(krm)) {
			if !bytes.Contains(doc, []byte("name: postgres-db\n")) {
				continue
			}
			applied, err := readback.Applied(doc)
			if err != nil {
				t.Fatal(err)
			}
			var release struct {
				Spec struct {
					Values json.RawMessage `json:"values"`
				} `json:"spec"`
			}
			if err := json.Unmarshal(applied, &release); err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(validated)
			if err != nil {
				t.Fatal(err)
			}
			if len(release.Spec.Values) == 0 && string(want) == "{}" {
				return
			}
			if !bytes.Equal(release.Spec.Values, want) {
				t.Fatalf("the release applies other values than the validated ones\nvalidated: %s\napplied:   %s\n%s", want, release.Spec.Values, doc)
			}
			return
		}
		t.Fatalf("no release for the app in:\n%s", krm)
	})
}

func indent(s string) string {
	// A lone carriage return breaks a YAML line as a line feed does (and
	// YAML reads every line break as a line feed): each line is indented,
	// or the text after it would land outside the nested document.
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
