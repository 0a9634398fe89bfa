package api

import (
	"encoding/json"
	"fmt"
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
// path, and every value of the wrong type is reported at its path and left
// out (encoding/json stops at the first one, so each is taken out and the
// decoding done again).
func (d *decoder) strict(n *yaml.Node, field string, v any) {
	value, ok := d.value(n, field)
	if !ok {
		return
	}
	wrapped := reflect.New(reflect.StructOf([]reflect.StructField{{
		Name: "Wrapped", Type: reflect.TypeOf(v), Tag: reflect.StructTag(`json:"` + field + `"`),
	}}))
	wrapped.Elem().Field(0).Set(reflect.ValueOf(v))
	var typeErrors Problems
	defer func() { d.problems = append(d.problems, typeErrors...) }()
	for {
		raw, err := json.Marshal(map[string]any{field: value})
		if err != nil {
			d.fail(field, "%v", err)
			return
		}
		unknown, err := kjson.UnmarshalStrict(raw, wrapped.Interface(), kjson.DisallowUnknownFields)
		if err != nil {
			// Reported after the unknown fields, as the checks of the
			// inputs order them.
			path, at, msg := typeError(n, field, err)
			typeErrors = append(typeErrors, Errorf(d.ref, d.origin, at, "%s", msg))
			if path == "" || !remove(value, strings.Split(path, ".")[1:]) {
				return
			}
			continue
		}
		for _, e := range unknown {
			if fe, ok := e.(kjson.FieldError); ok {
				path := fe.FieldPath()
				d.fail(path, "unknown field; known fields here: %s", strings.Join(knownFields(reflect.TypeOf(v), strings.TrimPrefix(path, field+".")), ", "))
			}
		}
		return
	}
}

// remove deletes the value at path from v, a tree of maps; it reports
// whether there was one.
func remove(v any, path []string) bool {
	m, ok := v.(map[string]any)
	if !ok || len(path) == 0 {
		return false
	}
	if len(path) == 1 {
		_, found := m[path[0]]
		delete(m, path[0])
		return found
	}
	return remove(m[path[0]], path[1:])
}

// typeMismatch matches encoding/json's error for a value of the wrong type.
var typeMismatch = regexp.MustCompile(`^json: cannot unmarshal .* into Go struct field [^ ]*?\.([^. ]+(?:\.[^ ]+)?) of type (.+)$`)

// typeError turns err, a decoding error of the mapping n found at field,
// into a message at the field it names: what the field must be and what n
// holds there. path is the field's path ("" when err names none), at where
// the message goes (an item of path when the field is a list).
func typeError(n *yaml.Node, field string, err error) (path, at, msg string) {
	m := typeMismatch.FindStringSubmatch(err.Error())
	if m == nil {
		return "", field, err.Error()
	}
	path, goType := m[1], m[2]
	node := yamlnode.Lookup(n, strings.Split(path, ".")[1:]...)
	want := expected(goType)
	if seq := yamlnode.Resolve(node); seq != nil && seq.Kind == yaml.SequenceNode && want != "a map" && !strings.HasPrefix(goType, "[]") {
		// An item of a list: report the first one of the wrong kind.
		for i, item := range seq.Content {
			if yamlnode.Describe(item) != "a list" && expected(kindOf(item)) != want {
				return path, path + "[" + itoa(i) + "]", fmt.Sprintf("must be %s, not %s", want, yamlnode.Describe(item))
			}
		}
	}
	return path, path, fmt.Sprintf("must be %s, not %s", want, yamlnode.Describe(node))
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
	case "api.Identities":
		return "a list of user names"
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
