package api

import (
	"cmp"
	"reflect"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// strict decodes the mapping n, found at field, into the struct that v
// points to, the way the API server decodes an object under strict field
// validation: a key is a field by its json tag (compared exactly), a key
// no field has is an "unknown field" with its path, and a value of the
// wrong kind is reported at its path in YAML words ("must be true or false,
// not the string "yes"") and left out, so the field keeps what it held.
// Every mistake of n is reported in one run: the unknown fields first, then
// the values of the wrong kind, each in the order of the sorted keys.
//
// It returns the paths below field that n writes, relative to field: true
// for a value, false for null (some defaults and checks depend on them).
//
// The words come from the fields' kinds, never from Go type names, so a
// renamed type changes nothing a user reads; a type whose values want other
// words says so with a yamlWords method (see [Identities]).
func (d *decoder) strict(n *yaml.Node, field string, v any) map[string]bool {
	s := &strictDecoder{decoder: d, written: map[string]bool{}}
	s.decode(n, field, "", reflect.ValueOf(v).Elem())
	d.problems = append(d.problems, s.mistyped...)
	return s.written
}

// strictDecoder is one run of [decoder.strict].
type strictDecoder struct {
	*decoder
	written  map[string]bool
	mistyped Problems
}

// decode decodes n, found at field (rel below the decoded root), into the
// settable v and reports whether it did.
func (s *strictDecoder) decode(n *yaml.Node, field, rel string, v reflect.Value) bool {
	if yamlnode.IsNull(n) {
		// As encoding/json: null clears what can be nil and leaves the rest.
		switch v.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			v.SetZero()
		}
		return true
	}
	n = yamlnode.Resolve(n)
	switch v.Kind() {
	case reflect.Pointer:
		if !s.want(n, field, v.Type(), yaml.MappingNode) {
			return false
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return s.decode(n, field, rel, v.Elem())
	case reflect.Struct:
		if !s.want(n, field, v.Type(), yaml.MappingNode) {
			return false
		}
		s.fields(n, field, rel, v)
		return true
	case reflect.Slice:
		if !s.want(n, field, v.Type(), yaml.SequenceNode) {
			return false
		}
		out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		ok := true
		for i, item := range n.Content {
			ok = s.decode(item, field+"["+itoa(i)+"]", rel, out.Index(i)) && ok
		}
		if ok {
			v.Set(out)
		}
		return ok
	case reflect.Map, reflect.Interface:
		if v.Kind() == reflect.Map && !s.want(n, field, v.Type(), yaml.MappingNode) {
			return false
		}
		value, ok := s.value(n, field)
		if ok {
			return s.set(n, field, v, value)
		}
		return false
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if !s.want(n, field, v.Type(), yaml.ScalarNode) {
			return false
		}
		value, ok := s.value(n, field)
		if ok {
			return s.set(n, field, v, value)
		}
		return false
	}
	s.fail(field, "cannot be read: the function has no decoder for its kind")
	return false
}

// fields decodes the keys of the mapping n into the fields of the struct v
// by their json names, in the order of the sorted keys.
func (s *strictDecoder) fields(n *yaml.Node, field, rel string, v reflect.Value) {
	type entry struct {
		key, path string
		value     *yaml.Node
	}
	var entries []entry
	s.decoder.fields(n, field, func(key, path string, value *yaml.Node) {
		entries = append(entries, entry{key, path, value})
	})
	slices.SortStableFunc(entries, func(a, b entry) int { return cmp.Compare(a.key, b.key) })
	for _, e := range entries {
		r := joinField(rel, e.key)
		s.written[r] = !yamlnode.IsNull(e.value)
		i := slices.IndexFunc(jsonNames(v.Type()), func(name string) bool { return name != "" && name == e.key })
		if i < 0 {
			s.fail(e.path, "unknown field; known fields here: %s", strings.Join(knownFields(v.Type()), ", "))
			continue
		}
		s.decode(e.value, e.path, r, v.Field(i))
	}
}

// set stores value, converted from the scalar or tree n, in v when its
// kind fits; otherwise it reports what v must hold.
func (s *strictDecoder) set(n *yaml.Node, field string, v reflect.Value, value any) bool {
	switch x := value.(type) {
	case string:
		if v.Kind() == reflect.String {
			v.SetString(x)
			return true
		}
	case bool:
		if v.Kind() == reflect.Bool {
			v.SetBool(x)
			return true
		}
	case int64:
		if v.CanInt() && !v.OverflowInt(x) {
			v.SetInt(x)
			return true
		}
	}
	if value != nil && reflect.TypeOf(value).AssignableTo(v.Type()) {
		v.Set(reflect.ValueOf(value))
		return true
	}
	s.mistype(n, field, v.Type())
	return false
}

// want reports whether n is a node of kind, and otherwise what a field of
// type t must hold.
func (s *strictDecoder) want(n *yaml.Node, field string, t reflect.Type, kind yaml.Kind) bool {
	if n.Kind == kind {
		return true
	}
	s.mistype(n, field, t)
	return false
}

func (s *strictDecoder) mistype(n *yaml.Node, field string, t reflect.Type) {
	s.mistyped = append(s.mistyped, Errorf(s.ref, s.origin, field, "must be %s, not %s", yamlWords(t), yamlnode.Describe(n)))
}

// yamlWords says what a field of type t holds, in YAML words: a type of
// this package may say it better with a yamlWords method.
func yamlWords(t reflect.Type) string {
	if w, ok := reflect.Zero(t).Interface().(interface{ yamlWords() string }); ok {
		return w.yamlWords()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "a list of strings"
		}
		return "a list"
	}
	return "a map"
}

// jsonNames returns the json name of every field of the struct type t, ""
// for those that are not decoded (unexported, or tagged "-").
func jsonNames(t reflect.Type) []string {
	out := make([]string, t.NumField())
	for i := range out {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name != "-" {
			out[i] = name
		}
	}
	return out
}

// knownFields lists the json names of the fields of t, in the order they
// are declared.
func knownFields(t reflect.Type) []string {
	return slices.DeleteFunc(jsonNames(t), func(name string) bool { return name == "" })
}
