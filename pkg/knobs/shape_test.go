package knobs_test

import (
	"testing"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/knobs"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// TestSuspect: the shape of values is suspect wherever CheckValues finds a
// field the schema does not know or a value of the wrong type (it never
// lets one pass), and only there for the shapes of Cozystack's schemas:
// declared fields, maps, opaque values, int-or-string, lists.
func TestSuspect(t *testing.T) {
	schema := fromYAML(t, `
type: object
properties:
  replicas: {type: integer}
  ratio: {type: number}
  external: {type: boolean}
  size: {x-kubernetes-int-or-string: true, anyOf: [{type: integer}, {type: string}]}
  users:
    type: object
    additionalProperties:
      type: object
      properties: {password: {type: string}}
  valuesOverride: {type: object, x-kubernetes-preserve-unknown-fields: true}
  hosts: {type: array, items: {type: string}}
  groups:
    type: array
    items: {type: object, properties: {name: {type: string}}}
`)
	s, err := knobs.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		values  string
		suspect bool
	}{
		{"{}", false},
		{"replicas: 2\nratio: 0.5\nexternal: true\nsize: 10Gi", false},
		{"ratio: 1\nsize: 10", false},
		{"users: {alice: {password: x}, bob: {}}", false},
		{"valuesOverride: {any: [thing, {at: all}]}", false},
		{"hosts: [a, b]\ngroups: [{name: md0}]", false},
		{"replcas: 2", true},
		{"replicas: two", true},
		{"replicas: 1.5", true},
		{"external: 'yes'", true},
		{"size: true", true},
		{"size: {a: 1}", true},
		{"size: [1]", true},
		{"users: {alice: {passwrd: x}}", true},
		{"users: [alice]", true},
		{"hosts: [1]", true},
		{"hosts: {a: b}", true},
		{"groups: [{name: md0, extra: 1}]", true},
		{"replicas: null", true},
		{"valuesOverride: 3", true},
	} {
		var doc kyaml.Node
		if err := kyaml.Unmarshal([]byte(tc.values), &doc); err != nil {
			t.Fatal(err)
		}
		node := yamlnode.Resolve(&doc)
		v, err := yamlnode.ToValue(node, yamlnode.DefaultBudget)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, violation := range s.CheckValues(v.(map[string]any)) {
			if violation.Keyword == "properties" || violation.Keyword == "type" {
				found++
			}
		}
		got := s.Suspect(knobs.ShapeOf(node))
		if found > 0 && !got {
			t.Errorf("%q: CheckValues finds %d, Suspect lets it pass", tc.values, found)
		}
		if got != tc.suspect {
			t.Errorf("%q: Suspect = %v, want %v (CheckValues finds %d)", tc.values, got, tc.suspect, found)
		}
	}
	if s.Suspect(nil) {
		t.Error("no values are suspect")
	}
	if !s.Suspect(knobs.Shape("{\x05repl")) {
		t.Error("a cut shape is not suspect")
	}
}
