package api

import (
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// A ConfigMap functionConfig is what kpt makes of `kpt fn eval ... --
// key=value ...`: a v1 ConfigMap whose data holds the pairs.
const (
	configMapAPIVersion = "v1"
	configMapKind       = "ConfigMap"
)

// isConfigMap reports whether o is a ConfigMap functionConfig.
func isConfigMap(o Object) bool {
	return o.APIVersion == configMapAPIVersion && o.Kind == configMapKind
}

// configMapSpec turns a ConfigMap functionConfig into the spec node of a
// ComputePlaneGenerator: each data key is the path of a scalar field below
// spec (delivery, cluster.podSecurity, guard.enabled, fleet.shards), typed
// by the config's JSON Schema, each value that field's value as text. A key
// that is no field, or names a list or a map, is refused at data[<key>]:
// those need a ComputePlaneGenerator. It returns the data keys too, so that
// the decoder's problems can name them.
func configMapSpec(o Object, d *decoder) (*yaml.Node, []string) {
	obj := readObject(o.Node, "")
	d.keys(obj, "", "apiVersion", "kind", "metadata", "data")
	d.mapping(get(obj, "metadata"), "metadata")
	root, err := ParseConfigSchema()
	if err != nil {
		d.fail("", "%v", err)
		return nil, nil
	}
	spec := &yaml.Node{Kind: yaml.MappingNode}
	data := d.mapping(get(obj, "data"), "data")
	if data == nil {
		return spec, nil
	}
	var keys []string
	for _, f := range data {
		key, path := f.key, joinField("data", f.key)
		keys = append(keys, key)
		value := d.str(f.value, path)
		field := root.Lookup("spec." + key)
		switch {
		case key == "" || field == nil:
			d.fail(path, "unknown field spec.%s of %s; a ConfigMap functionConfig (kpt fn eval -- key=value) sets the scalar fields of the spec by their path, such as delivery=Platform or guard.enabled=false (%s)",
				Printable(key), ConfigKind, strings.Join(scalarFields(root.Lookup("spec"), ""), ", "))
			continue
		case field.Type == "object" || field.Type == "array":
			d.fail(path, "spec.%s is a %s; a ConfigMap functionConfig (kpt fn eval -- key=value) sets scalar fields only: give a %s %s (--fn-config) for it",
				key, map[string]string{"object": "map", "array": "list"}[field.Type], ConfigAPIVersion, ConfigKind)
			continue
		}
		scalar, ok := typedScalar(field.Type, value)
		if !ok {
			d.fail(path, "must be %s for spec.%s, not %q", map[string]string{"boolean": "true or false", "integer": "a whole number"}[field.Type], key, Printable(value))
			continue
		}
		setNodePath(spec, strings.Split(key, "."), scalar)
	}
	return spec, keys
}

// scalarFields lists the paths of the scalar fields below s, sorted.
func scalarFields(s *SchemaNode, prefix string) []string {
	var out []string
	for name, p := range s.Properties {
		switch p.Type {
		case "object":
			out = append(out, scalarFields(p, prefix+name+".")...)
		case "array":
		default:
			out = append(out, prefix+name)
		}
	}
	slices.Sort(out)
	return out
}

// typedScalar returns the YAML scalar of text as a field of the schema
// type typ holds it, and whether text is such a value.
func typedScalar(typ, text string) (*yaml.Node, bool) {
	switch typ {
	case "boolean":
		if text != "true" && text != "false" {
			return nil, false
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: yamlnode.TagBool, Value: text}, true
	case "integer":
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			return nil, false
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: text}, true
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yamlnode.TagString, Value: text}, true
}

// setNodePath sets value at the path of keys in the mapping m, making the maps
// on the way.
func setNodePath(m *yaml.Node, keys []string, value *yaml.Node) {
	for _, key := range keys[:len(keys)-1] {
		next := yamlnode.Get(m, key)
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yamlnode.TagString, Value: key}, next)
		}
		m = next
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yamlnode.TagString, Value: keys[len(keys)-1]}, value)
}

// nameDataKeys rewrites the field of each problem at spec.<key> of a data
// key to data[<key>], where the ConfigMap wrote it.
func nameDataKeys(problems Problems, keys []string) {
	for i, p := range problems {
		if key, ok := strings.CutPrefix(p.Field, "spec."); ok && slices.Contains(keys, key) {
			problems[i].Field = joinField("data", key)
		}
	}
}
