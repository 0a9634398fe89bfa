package api

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// decoder reads typed fields from one object's YAML and collects a Problem
// for every field that is missing or of the wrong type, so that one run
// reports all mistakes of an object at once.
type decoder struct {
	ref      ObjectRef
	origin   Origin
	problems Problems
	// labels and annotations are metadata.labels and .annotations, read
	// once by commonMetadata.
	labels, annotations map[string]string
}

func (d *decoder) fail(field, format string, args ...any) {
	d.problems = append(d.problems, Errorf(d.ref, d.origin, field, format, args...))
}

// optional resolves an optional field n, which may be nil. It returns nil
// when the field is absent or null, and, after reporting that it must be
// want, when it is not a node of that kind (and, for a scalar, that tag).
func (d *decoder) optional(n *yaml.Node, field string, kind yaml.Kind, tag, want string) *yaml.Node {
	if yamlnode.IsNull(n) {
		return nil
	}
	n = yamlnode.Resolve(n)
	if n.Kind != kind || tag != "" && n.ShortTag() != tag {
		d.fail(field, "must be %s, not %s", want, yamlnode.Describe(n))
		return nil
	}
	return n
}

// str reads an optional string field.
func (d *decoder) str(n *yaml.Node, field string) string {
	if n = d.optional(n, field, yaml.ScalarNode, yamlnode.TagString, "a string"); n == nil {
		return ""
	}
	return n.Value
}

// requiredStr reads a string field that must be present and not empty.
func (d *decoder) requiredStr(n *yaml.Node, field string) string {
	if yamlnode.IsNull(n) {
		d.fail(field, "is required")
		return ""
	}
	s := d.str(n, field)
	if s == "" && yamlnode.Resolve(n).ShortTag() == yamlnode.TagString {
		d.fail(field, "must not be empty")
	}
	return s
}

// boolean reads an optional boolean field.
func (d *decoder) boolean(n *yaml.Node, field string, def bool) bool {
	if n = d.optional(n, field, yaml.ScalarNode, yamlnode.TagBool, "true or false"); n == nil {
		return def
	}
	return n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
}

// mapping reads an optional mapping field; it returns nil when absent or
// of the wrong type (after reporting it).
func (d *decoder) mapping(n *yaml.Node, field string) *yaml.Node {
	return d.optional(n, field, yaml.MappingNode, "", "a map")
}

// sequence reads an optional list field; it returns nil when absent or of
// the wrong type (after reporting it).
func (d *decoder) sequence(n *yaml.Node, field string) *yaml.Node {
	return d.optional(n, field, yaml.SequenceNode, "", "a list")
}

// stringMap reads a map of string to string, such as labels.
func (d *decoder) stringMap(n *yaml.Node, field string) map[string]string {
	m := d.mapping(n, field)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m.Content)/2)
	d.fields(m, field, func(key, path string, v *yaml.Node) {
		out[key] = d.str(v, path)
	})
	return out
}

// fields calls each for every key of mapping m with its path and value,
// after reporting a key that is no string (then skipped) or that is set
// twice.
func (d *decoder) fields(m *yaml.Node, field string, each func(key, path string, v *yaml.Node)) {
	seen := make(map[string]bool, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := yamlnode.Resolve(m.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			d.fail(field, "keys must be strings")
			continue
		}
		path := joinField(field, k.Value)
		if seen[k.Value] {
			d.fail(path, "is set twice")
		}
		seen[k.Value] = true
		each(k.Value, path, m.Content[i+1])
	}
}

// keys checks that mapping m has no keys outside allowed: the top-level
// fields of an object whose shape no schema of this project states (the
// config's root takes its names from the schema).
func (d *decoder) keys(m *yaml.Node, field string, allowed ...string) {
	if m == nil {
		return
	}
	d.fields(m, field, func(key, path string, _ *yaml.Node) {
		if !slices.Contains(allowed, key) {
			d.fail(path, "unknown field; known fields here: %s", strings.Join(allowed, ", "))
		}
	})
}

// value converts a node into JSON-like Go values, reporting where it fails.
func (d *decoder) value(n *yaml.Node, field string) (any, bool) {
	v, err := yamlnode.ToValue(n, yamlnode.DefaultBudget)
	if err != nil {
		if pe, ok := err.(*yamlnode.PathError); ok {
			d.fail(joinField(field, pe.Path), "%v", pe.Err)
		} else {
			d.fail(field, "%v", err)
		}
		return nil, false
	}
	return v, true
}

// joinField appends a map key to a field path. Keys that contain dots or
// brackets (label keys such as app.kubernetes.io/name) are written in
// brackets, as in metadata.labels[app.kubernetes.io/name].
func joinField(field, key string) string {
	if key == "" {
		return field
	}
	if strings.ContainsAny(key, ".[] ") {
		return fmt.Sprintf("%s[%s]", field, key)
	}
	if field == "" {
		return key
	}
	return field + "." + key
}

func itoa(i int) string { return fmt.Sprint(i) }
