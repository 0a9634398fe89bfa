package api

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// The tests of this file prove that the config's JSON Schema and its
// decoder agree on every field. The schema checks the config and the
// decoder decodes what it accepts into Config by the json tags, so a field
// of Config that the schema lacks (never set), or a schema property that
// no field decodes (accepted and dropped), fails the first; a type, enum,
// bound or default the decoder does not keep fails the others.

func configSpecSchema(t *testing.T) *SchemaNode {
	t.Helper()
	root, err := ParseConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	return root.Lookup("spec")
}

// TestConfigSchemaMatchesTypes walks Config and the schema's spec side by
// side: every decoded field (by its json name) is a property of the type
// its Go kind reads, and every property is a field.
func TestConfigSchemaMatchesTypes(t *testing.T) {
	var walk func(typ reflect.Type, s *SchemaNode, path string)
	walk = func(typ reflect.Type, s *SchemaNode, path string) {
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		want := map[reflect.Kind]string{
			reflect.String: "string", reflect.Bool: "boolean", reflect.Int: "integer",
			reflect.Slice: "array", reflect.Struct: "object", reflect.Map: "object",
		}[typ.Kind()]
		if want == "" {
			t.Errorf("%s: the schema test knows no JSON type for a Go %s", path, typ.Kind())
			return
		}
		if s.Type != want {
			t.Errorf("%s: the schema's type is %q, the decoder reads a %s (%s)", path, s.Type, want, typ)
			return
		}
		switch typ.Kind() {
		case reflect.Slice:
			if s.Items == nil {
				t.Errorf("%s: an array without items", path)
				return
			}
			walk(typ.Elem(), s.Items, path+"[]")
		case reflect.Map:
			if s.Properties != nil {
				t.Errorf("%s: the decoder reads any keys, the schema names properties", path)
			}
		case reflect.Struct:
			fields := map[string]reflect.Type{}
			for i, name := range jsonNames(typ) {
				if name != "" {
					fields[name] = typ.Field(i).Type
				}
			}
			for name, ft := range fields {
				ps, ok := s.Properties[name]
				if !ok {
					t.Errorf("%s.%s: a field of the config that the schema lacks", path, name)
					continue
				}
				if ps.Description == "" {
					t.Errorf("%s.%s: the schema has no description (the docs are generated from it)", path, name)
				}
				walk(ft, ps, path+"."+name)
			}
			for name := range s.Properties {
				if _, ok := fields[name]; !ok {
					t.Errorf("%s.%s: a property of the schema that no config field decodes", path, name)
				}
			}
			for _, name := range s.Required {
				if _, ok := s.Properties[name]; !ok {
					t.Errorf("%s: requires %q, which it does not declare", path, name)
				}
			}
		}
	}
	walk(reflect.TypeOf(Config{}), configSpecSchema(t), "spec")
}

// TestConfigSchemaIsStructural: the schema compiles as the structural
// schema the decoder checks the config against (after the conversions of
// structural), and the words of configWords name its fields: every key a
// field of the schema, a pattern's words only for a field with a pattern,
// and every pattern worded.
func TestConfigSchemaIsStructural(t *testing.T) {
	if _, err := specChecker(); err != nil {
		t.Fatal(err)
	}
	spec := configSpecSchema(t)
	for path, w := range configWords {
		s := schemaAt(spec, path)
		switch {
		case s == nil:
			t.Errorf("configWords[%q]: no such field in the schema", path)
		case w.pattern != nil && s.Pattern == "":
			t.Errorf("configWords[%q]: words for a pattern the field does not have", path)
		case w.why != "" && s.Minimum == nil && s.Maximum == nil && !requiredBy(spec, path):
			t.Errorf("configWords[%q]: a why for a field that is neither bounded nor required", path)
		}
	}
	var walk func(s *SchemaNode, path string)
	walk = func(s *SchemaNode, path string) {
		if s.Pattern != "" && configWords[path].pattern == nil {
			t.Errorf("spec.%s: a pattern with no words in configWords", path)
		}
		for name, p := range s.Properties {
			walk(p, strings.TrimPrefix(path+"."+name, "."))
		}
		if s.Items != nil {
			walk(s.Items, path+"[]")
		}
		if s.Values != nil {
			walk(s.Values, path+".*")
		}
	}
	walk(spec, "")
}

// schemaAt returns the schema at a path of configWords below spec.
func schemaAt(s *SchemaNode, path string) *SchemaNode {
	for _, seg := range strings.Split(strings.ReplaceAll(path, "[]", ".[]"), ".") {
		switch {
		case s == nil:
			return nil
		case seg == "[]":
			s = s.Items
		case seg == "*":
			s = s.Values
		default:
			s = s.Properties[seg]
		}
	}
	return s
}

// requiredBy reports whether the object holding the field at path
// requires it.
func requiredBy(spec *SchemaNode, path string) bool {
	i := strings.LastIndex(path, ".")
	parent := spec
	if i >= 0 {
		parent = schemaAt(spec, path[:i])
	}
	return parent != nil && slices.Contains(parent.Required, path[i+1:])
}

// TestConfigSchemaRequired: every field the schema requires is refused at
// its path when left out, in the words of configWords.
func TestConfigSchemaRequired(t *testing.T) {
	for _, c := range []struct {
		spec  string
		field string
	}{
		{`{"fleet": {"path": "f"}}`, "spec.fleet.sourceRef"},
		{`{"fleet": {"sourceRef": {"kind": "Bucket", "name": "f"}}}`, "spec.fleet.path"},
		{`{"fleet": {"sourceRef": {"name": "f"}, "path": "f"}}`, "spec.fleet.sourceRef.kind"},
		{`{"fleet": {"sourceRef": {"kind": "Bucket"}, "path": "f"}}`, "spec.fleet.sourceRef.name"},
		{`{"routing": {"resourceQuota": {}}}`, "spec.routing.resourceQuota.hard"},
		{`{"routing": {"limitRange": {}}}`, "spec.routing.limitRange.limits"},
		{`{"routing": {"limitRange": {"limits": [{"max": {"cpu": 1}}]}}}`, "spec.routing.limitRange.limits[0].type"},
		{`{"routing": {"namespaces": "PerApp", "grants": [{"clusterRole": "x"}]}}`, "spec.routing.grants[0].definition"},
		{`{"routing": {"namespaces": "PerApp", "grants": [{"definition": "x"}]}}`, "spec.routing.grants[0].clusterRole"},
	} {
		var spec map[string]any
		if err := json.Unmarshal([]byte(c.spec), &spec); err != nil {
			t.Fatal(err)
		}
		_, problems := decodeSpecMap(t, spec)
		want := requiredMessage(regexp.MustCompile(`\[\d+\]`).ReplaceAllString(strings.TrimPrefix(c.field, "spec."), "[]"))
		if !slices.Equal(problems[c.field], []string{want}) {
			t.Errorf("%s: problems %v, want %q at %s only", c.spec, problems, want, c.field)
		}
	}
}

// leaf is a field of the schema with a path below spec.
type leaf struct {
	path string
	node *SchemaNode
}

// schemaFields lists every property below spec that is not inside a list,
// sorted by path.
func schemaFields(s *SchemaNode, prefix string) []leaf {
	var out []leaf
	for name, p := range s.Properties {
		path := strings.TrimPrefix(prefix+"."+name, ".")
		out = append(out, leaf{path, p})
		if p.Type == "object" {
			out = append(out, schemaFields(p, path)...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// fleetBase is a spec.fleet with what it requires.
func fleetBase() map[string]any {
	return map[string]any{"sourceRef": map[string]any{"kind": "GitRepository", "name": "fleet"}, "path": "./fleet"}
}

// decodeSpecMap decodes a config whose spec is spec, and returns it with
// the problems by field.
func decodeSpecMap(t *testing.T, spec map[string]any) (*Config, map[string][]string) {
	t.Helper()
	data, err := json.Marshal(map[string]any{"apiVersion": ConfigAPIVersion, "kind": ConfigKind, "metadata": map[string]any{"name": "fleet"}, "spec": spec})
	if err != nil {
		t.Fatal(err)
	}
	n, err := yaml.Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	cfg, problems := DecodeConfig(NewObject(n.YNode(), Origin{File: "config.yaml"}))
	byField := map[string][]string{}
	for _, p := range problems {
		byField[p.Field] = append(byField[p.Field], p.Message)
	}
	return cfg, byField
}

// setPath returns a deep copy of spec with value at the dotted path.
func setPath(spec map[string]any, path string, value any) map[string]any {
	out := map[string]any{}
	data, _ := json.Marshal(spec)
	_ = json.Unmarshal(data, &out)
	m := out
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
	return out
}

// baseFor is the smallest spec in which the field at path is used: with
// spec.fleet for its fields, and on the newest platform, so that every
// enum value is served.
func baseFor(path string) map[string]any {
	spec := map[string]any{"platform": map[string]any{"kubernetesVersion": "1.36"}}
	if strings.HasPrefix(path, "fleet.") {
		spec["fleet"] = fleetBase()
	}
	return spec
}

// goValue returns the value of the decoded config at the dotted path, by
// json names, as JSON would hold it.
func goValue(t *testing.T, cfg *Config, path string) any {
	t.Helper()
	v := reflect.ValueOf(cfg).Elem()
	for _, key := range strings.Split(path, ".") {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				t.Fatalf("spec.%s: nil on the way", path)
			}
			v = v.Elem()
		}
		i := slices.Index(jsonNames(v.Type()), key)
		if i < 0 {
			t.Fatalf("spec.%s: no field %q", path, key)
		}
		v = v.Field(i)
	}
	return jsonValue(t, v.Interface())
}

func jsonValue(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConfigSchemaDefaults: the default the schema states for a field is
// what the decoder gives a config that leaves the field out.
func TestConfigSchemaDefaults(t *testing.T) {
	checked := 0
	for _, f := range schemaFields(configSpecSchema(t), "") {
		if f.node.Default == nil {
			continue
		}
		spec := map[string]any{}
		if strings.HasPrefix(f.path, "fleet.") {
			spec["fleet"] = fleetBase()
		}
		cfg, problems := decodeSpecMap(t, spec)
		if len(problems) > 0 {
			t.Fatalf("spec.%s: the base config is refused: %v", f.path, problems)
		}
		checked++
		if f.path == "fleet.interval" {
			// Read from the text into a duration: compare the durations.
			want, err := time.ParseDuration(f.node.Default.(string))
			if err != nil || cfg.Fleet.Interval != want {
				t.Errorf("spec.fleet.interval: the schema's default %v, the decoder's %v", f.node.Default, cfg.Fleet.Interval)
			}
			continue
		}
		if diff := cmp.Diff(jsonValue(t, f.node.Default), goValue(t, cfg, f.path)); diff != "" {
			t.Errorf("spec.%s: the schema's default and the decoder's differ (-schema +decoder):\n%s", f.path, diff)
		}
	}
	if checked < 20 {
		t.Errorf("only %d defaults checked; the schema lost its defaults", checked)
	}
}

// servedNot are the values of an enum that the schema names so that a
// config can say them, which the decoder refuses with a reason (the
// words it must say), by "<path>=<value>".
var servedNot = map[string]string{
	"platform.clusterChart=SplitPoolsByConvention": "The function cannot serve this line",
}

// needs are, for a value of an enum ("<path>=<value>"), the other fields it
// is taken with: a step of the pool migration names its line.
var needs = map[string]map[string]any{
	"platform.poolMigration=Adopt": {"platform.clusterChart": "SplitPools"},
}

// TestConfigSchemaEnumsAndBounds: every value of a field's enum, and both
// bounds of an integer, are accepted (but those of servedNot, refused with
// their reason); a value outside is refused at that field.
func TestConfigSchemaEnumsAndBounds(t *testing.T) {
	checked := 0
	for _, f := range schemaFields(configSpecSchema(t), "") {
		field := "spec." + f.path
		var good, bad []any
		good = append(good, f.node.Enum...)
		if len(f.node.Enum) > 0 {
			bad = append(bad, "NotOneOfThem")
		}
		if f.node.Minimum != nil {
			good, bad = append(good, *f.node.Minimum), append(bad, *f.node.Minimum-1)
		}
		if f.node.Maximum != nil {
			good, bad = append(good, *f.node.Maximum), append(bad, *f.node.Maximum+1)
		}
		for _, v := range good {
			checked++
			if why, refused := servedNot[f.path+"="+fmt.Sprint(v)]; refused {
				// Named so that the config can say it, and refused
				// with the reason.
				_, problems := decodeSpecMap(t, setPath(baseFor(f.path), f.path, v))
				if len(problems[field]) != 1 || !strings.Contains(problems[field][0], why) {
					t.Errorf("%s: %v names a line the function cannot serve; want one problem saying %q, got %v", field, v, why, problems[field])
				}
				continue
			}
			base := baseFor(f.path)
			for p, w := range needs[f.path+"="+fmt.Sprint(v)] {
				base = setPath(base, p, w)
			}
			if _, problems := decodeSpecMap(t, setPath(base, f.path, v)); len(problems[field]) > 0 {
				t.Errorf("%s: %v is in the schema, the decoder refuses it: %v", field, v, problems[field])
			}
		}
		for _, v := range bad {
			checked++
			if _, problems := decodeSpecMap(t, setPath(baseFor(f.path), f.path, v)); len(problems[field]) == 0 {
				t.Errorf("%s: %v is outside the schema, the decoder takes it", field, v)
			}
		}
	}
	if checked < 25 {
		t.Errorf("only %d values checked; the schema lost its enums and bounds", checked)
	}
}

// TestConfigSchemaTypesRefused: a value of another type than the schema's
// is refused at its field, for every field.
func TestConfigSchemaTypesRefused(t *testing.T) {
	wrong := map[string]any{"string": []any{"a"}, "boolean": "yes", "integer": "ten", "array": "a", "object": "a"}
	for _, f := range schemaFields(configSpecSchema(t), "") {
		field := "spec." + f.path
		v, ok := wrong[f.node.Type]
		if !ok {
			t.Errorf("%s: type %q has no wrong value to try", field, f.node.Type)
			continue
		}
		_, problems := decodeSpecMap(t, setPath(baseFor(f.path), f.path, v))
		if !slices.ContainsFunc(problems[field], func(m string) bool { return strings.HasPrefix(m, "must be") }) {
			t.Errorf("%s: %s for a %s is not refused there: %v", field, fmt.Sprint(v), f.node.Type, problems)
		}
	}
}

// TestConfigSchemaTakesTheProjectsConfigs: every function config of the
// examples and the fixtures that the decoder accepts is valid under the
// JSON Schema too (kube-openapi's validator, the API server's), so that an
// editor never marks a working config as wrong; and a config the schema
// refuses for an unknown field is refused by the decoder too.
func TestConfigSchemaTakesTheProjectsConfigs(t *testing.T) {
	var schema spec.Schema
	if err := json.Unmarshal(configSchema, &schema); err != nil {
		t.Fatal(err)
	}
	validator := validate.NewSchemaValidator(&schema, nil, "", strfmt.Default)
	var files []string
	for _, glob := range []string{"../../examples/*/*.yaml", "../../examples/*/*/*.yaml", "../../fixtures/*/config.yaml"} {
		matches, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := kio.FromBytes(data)
		if err != nil {
			continue // not every YAML file of the examples is objects
		}
		for _, n := range nodes {
			if n.GetKind() != ConfigKind {
				continue
			}
			if _, problems := DecodeConfig(NewObject(n.YNode(), Origin{File: file})); len(problems) > 0 {
				continue // an error fixture
			}
			v, err := yamlnode.ToValue(n.YNode(), yamlnode.DefaultBudget)
			if err != nil {
				t.Fatal(err)
			}
			// kio.FromBytes adds its index annotations; the schema takes
			// any annotation.
			checked++
			if res := validator.Validate(jsonValue(t, v)); !res.IsValid() {
				t.Errorf("%s: the decoder takes this config, the schema refuses it: %v", file, res.Errors)
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d configs checked", checked)
	}
	bad := map[string]any{"apiVersion": ConfigAPIVersion, "kind": ConfigKind, "spec": map[string]any{"guard": map[string]any{"enabld": true}}}
	if validator.Validate(bad).IsValid() {
		t.Error("the schema takes the unknown field spec.guard.enabld")
	}
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

// TestConfigDecodedAfterTheSchema: what the schema refuses is left out of
// the decoded config whole, keys are matched case-sensitively as the API
// server matches them, and the free-form maps keep nulls and whole numbers
// as the config writes them.
func TestConfigDecodedAfterTheSchema(t *testing.T) {
	cfg, problems := decodeSpecMap(t, map[string]any{
		"Delivery": "Platform",
		"routing":  map[string]any{"resourceQuota": map[string]any{"hard": map[string]any{"requests.cpu": []any{1}, "pods": 0.5}}},
		"cluster":  map[string]any{"values": map[string]any{"a": nil, "b": 3}},
	})
	want := map[string][]string{
		"spec.Delivery":                                 {"unknown field; known fields here: inputs, delivery, keepInputs, source, cluster, routing, apps, releases, platform, baseline, fleet, guard"},
		"spec.routing.resourceQuota.hard[pods]":         {"must be a string or a whole number, not the number 0.5"},
		"spec.routing.resourceQuota.hard[requests.cpu]": {"must be a string or a whole number, not a list"},
	}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if cfg.Delivery != Direct {
		t.Errorf("delivery %q: spec.Delivery was decoded", cfg.Delivery)
	}
	if cfg.Routing.ResourceQuota == nil || cfg.Routing.ResourceQuota.Hard != nil {
		t.Errorf("resourceQuota %+v: want hard left out", cfg.Routing.ResourceQuota)
	}
	if diff := cmp.Diff(map[string]any{"a": nil, "b": int64(3)}, cfg.Cluster.Values); diff != "" {
		t.Errorf("cluster.values (-want +got):\n%s", diff)
	}
}
