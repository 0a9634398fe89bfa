package api

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// strict decodes the mapping n, found at field, into the struct v the way
// the API server decodes an object under strict field validation (with
// sigs.k8s.io/json): every field v lacks is an "unknown field" with its
// path; a value of the wrong type is reported at its path, the first one
// only (as encoding/json does), and then strict returns false.
func (d *decoder) strict(n *yaml.Node, field string, v any) bool {
	value, ok := d.value(n, field)
	if !ok {
		return false
	}
	raw, err := json.Marshal(map[string]any{field: value})
	if err != nil {
		d.fail(field, "%v", err)
		return false
	}
	wrapped := reflect.New(reflect.StructOf([]reflect.StructField{{
		Name: "Wrapped", Type: reflect.TypeOf(v), Tag: reflect.StructTag(`json:"` + field + `"`),
	}}))
	wrapped.Elem().Field(0).Set(reflect.ValueOf(v))
	unknown, err := kjson.UnmarshalStrict(raw, wrapped.Interface(), kjson.DisallowUnknownFields)
	if err != nil {
		d.typeError(n, field, err)
		return false
	}
	for _, e := range unknown {
		if fe, ok := e.(kjson.FieldError); ok {
			path := fe.FieldPath()
			d.fail(path, "unknown field; known fields here: %s", strings.Join(knownFields(reflect.TypeOf(v), strings.TrimPrefix(path, field+".")), ", "))
		}
	}
	return true
}

// typeMismatch matches encoding/json's error for a value of the wrong type.
var typeMismatch = regexp.MustCompile(`^json: cannot unmarshal .* into Go struct field [^ ]*?\.([^. ]+(?:\.[^ ]+)?) of type (.+)$`)

// typeError reports err, a decoding error, at the path it names, with what
// the field must be and what n holds there.
func (d *decoder) typeError(n *yaml.Node, field string, err error) {
	m := typeMismatch.FindStringSubmatch(err.Error())
	if m == nil {
		d.fail(field, "%v", err)
		return
	}
	path, goType := m[1], m[2]
	at := yamlnode.Lookup(n, strings.Split(strings.TrimPrefix(path, field), ".")[1:]...)
	want := expected(goType)
	if seq := yamlnode.Resolve(at); seq != nil && seq.Kind == yaml.SequenceNode && want != "a map" && !strings.HasPrefix(goType, "[]") {
		// An item of a list: report the first one of the wrong kind.
		for i, item := range seq.Content {
			if yamlnode.Describe(item) != "a list" && expected(kindOf(item)) != want {
				d.fail(path+"["+itoa(i)+"]", "must be %s, not %s", want, yamlnode.Describe(item))
				return
			}
		}
	}
	d.fail(path, "must be %s, not %s", want, yamlnode.Describe(at))
}

// expected names what a field of a Go type must hold, in YAML words.
func expected(goType string) string {
	switch goType {
	case "bool":
		return "true or false"
	case "string", "api.Delivery":
		return "a string"
	case "int", "int64":
		return "a whole number"
	case "[]string":
		return "a list of strings"
	}
	return "a map"
}

// kindOf is the Go type a scalar node would decode into.
func kindOf(n *yaml.Node) string {
	n = yamlnode.Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "map"
	}
	switch n.ShortTag() {
	case yamlnode.TagBool:
		return "bool"
	case yamlnode.TagInt:
		return "int"
	case yamlnode.TagString:
		return "string"
	}
	return n.ShortTag()
}

// knownFields lists the json names of the fields of the struct found at the
// dotted path's parent inside type t, in the order they are declared.
func knownFields(t reflect.Type, path string) []string {
	parts := strings.Split(path, ".")
	for _, p := range parts[:len(parts)-1] {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := fieldByJSONName(t, p)
		if !ok {
			return nil
		}
		t = f.Type
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	if t.Kind() != reflect.Struct {
		return out
	}
	for i := range t.NumField() {
		if name := jsonName(t.Field(i)); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return slices.Clip(out)
}

func fieldByJSONName(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if jsonName(t.Field(i)) == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// writtenPaths returns the dotted paths of the keys of the mapping n and of
// the mappings below it: true for a value, false for null.
func writtenPaths(n *yaml.Node, prefix string) map[string]bool {
	out := map[string]bool{}
	var walk func(n *yaml.Node, prefix string)
	walk = func(n *yaml.Node, prefix string) {
		n = yamlnode.Resolve(n)
		if n == nil || n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := joinField(prefix, n.Content[i].Value)
			out[p] = !yamlnode.IsNull(n.Content[i+1])
			walk(n.Content[i+1], p)
		}
	}
	walk(n, prefix)
	return out
}
