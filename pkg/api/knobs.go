package api

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

//go:embed knobs.schema.yaml
var defaultKnobSchema []byte

// DefaultKnobSchema returns the OpenAPI v3 schema of the knobs a tenant may
// set when the config names none: nodeGroups, shaped like apps/kubernetes's.
// An error means the embedded schema is broken, a defect of the build.
func DefaultKnobSchema() (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(defaultKnobSchema, &doc); err != nil {
		return nil, fmt.Errorf("failed to read the embedded knob schema: %w", err)
	}
	v, err := yamlnode.ToValue(&doc, yamlnode.DefaultBudget)
	if err != nil {
		return nil, fmt.Errorf("failed to read the embedded knob schema: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the embedded knob schema is not a map")
	}
	return m, nil
}

// Knobs is a ComputePlane object: what a tenant sets for its own cluster.
type Knobs struct {
	Ref    ObjectRef
	Origin Origin

	Namespace string
	Values    map[string]any // spec
}

// DecodeKnobs reads a ComputePlane knob object.
func DecodeKnobs(o Object) (*Knobs, Problems) {
	d := o.decoder()
	k := &Knobs{Ref: o.Ref(), Origin: o.Origin}
	obj := readObject(o.Node, "spec")
	md := d.metadata(obj, true)
	name := d.str(get(md, "name"), "metadata.name")
	k.Namespace = d.str(get(md, "namespace"), "metadata.namespace")
	if name != "" && name != KnobsName {
		d.fail("metadata.name", "a ComputePlane object must be named %q (one per tenant), not %q", KnobsName, name)
	}
	if spec := d.mappingNode(get(obj, "spec"), "spec"); spec != nil {
		if v, ok := d.value(spec, "spec"); ok {
			k.Values, _ = v.(map[string]any)
			for _, field := range nullFields(k.Values, "spec") {
				d.fail(field, "a knob must not be null: Helm reads a null as \"delete the chart's default\", so the values applied would not be the values validated; leave the key out to keep the default")
			}
		}
	}
	return k, d.problems
}

// nullFields returns the field paths of the nulls in a values tree, keys in
// sorted order.
func nullFields(v any, field string) []string {
	switch v := v.(type) {
	case nil:
		return []string{field}
	case map[string]any:
		var out []string
		for _, key := range slices.Sorted(maps.Keys(v)) {
			out = append(out, nullFields(v[key], joinField(field, key))...)
		}
		return out
	case []any:
		var out []string
		for i, item := range v {
			out = append(out, nullFields(item, fmt.Sprintf("%s[%d]", field, i))...)
		}
		return out
	}
	return nil
}
