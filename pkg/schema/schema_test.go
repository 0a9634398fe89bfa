package schema_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/schema"
)

// nodeGroupSchema is shaped like the nodeGroups of Cozystack's kubernetes
// application: a map of groups, each with required fields, a pattern, an
// int-or-string quantity, an enum and a free-form part.
const nodeGroupSchema = `
type: object
required: [nodeGroups]
properties:
  version:
    type: string
    enum: [v1.34, v1.35]
    default: v1.35
  nodeGroups:
    type: object
    additionalProperties:
      type: object
      required: [instanceType, minReplicas, maxReplicas]
      properties:
        instanceType:
          type: string
          pattern: '^[a-z]+[0-9]+\.[a-z]+$'
        minReplicas:
          type: integer
          minimum: 0
        maxReplicas:
          type: integer
          default: 10
        diskSize:
          x-kubernetes-int-or-string: true
          anyOf: [{type: integer}, {type: string}]
          pattern: '^[0-9]+(Mi|Gi)$'
        roles:
          type: array
          x-kubernetes-list-type: set
          items:
            type: string
            enum: [ingress-nginx, gpu]
        labels:
          type: object
          additionalProperties:
            type: string
        kubelet:
          type: object
          x-kubernetes-preserve-unknown-fields: true
          properties:
            maxPods:
              type: integer
        description:
          type: string
          nullable: true
`

func mustCompile(t *testing.T, text string) *schema.Schema {
	t.Helper()
	s, err := schema.Compile([]byte(text))
	if err != nil {
		t.Fatalf("failed to compile schema: %v", err)
	}
	return s
}

// fromYAML decodes a value the way objects reach the validator in practice.
func fromYAML(t *testing.T, text string) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("failed to decode value: %v", err)
	}
	return v
}

func TestValidateNodeGroups(t *testing.T) {
	s := mustCompile(t, nodeGroupSchema)
	tests := []struct {
		name         string
		value        string
		allowUnknown bool
		want         []schema.Violation
	}{{
		name: "valid, with the defaulted maxReplicas left out",
		value: `
nodeGroups:
  md0:
    instanceType: u1.medium
    minReplicas: 0
    diskSize: 20Gi
    roles: [ingress-nginx]
    labels: {app.kubernetes.io/role: worker}
    kubelet: {maxPods: 110, anything: {goes: here}}
    description: null
  gpu:
    instanceType: u1.xlarge
    minReplicas: 1
    maxReplicas: 3
    diskSize: 50
`,
	}, {
		name:  "missing required field",
		value: `nodeGroups: {md0: {instanceType: u1.medium}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.minReplicas", Message: "is required"},
		},
	}, {
		name:  "null counts as absent, as after the API server prunes it",
		value: `nodeGroups: {md0: {instanceType: u1.medium, minReplicas: null}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.minReplicas", Message: "is required"},
		},
	}, {
		name:  "pattern",
		value: `nodeGroups: {md0: {instanceType: medium, minReplicas: 0}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.instanceType", Message: `should match '^[a-z]+[0-9]+\.[a-z]+$'`},
		},
	}, {
		name:  "int-or-string takes a string that matches the pattern",
		value: `nodeGroups: {md0: {instanceType: u1.medium, minReplicas: 0, diskSize: 20GB}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.diskSize", Message: `should match '^[0-9]+(Mi|Gi)$'`},
		},
	}, {
		name:  "int-or-string refuses a boolean",
		value: `nodeGroups: {md0: {instanceType: u1.medium, minReplicas: 0, diskSize: true}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.diskSize", Message: `must be of type integer,string: "boolean"`},
			{Path: "nodeGroups.md0.diskSize", Message: "must validate at least one schema (anyOf)"},
		},
	}, {
		name:  "enum and duplicate in a set",
		value: `nodeGroups: {md0: {instanceType: u1.medium, minReplicas: 0, roles: [gpu, web, gpu]}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.roles[1]", Message: `unsupported value "web": supported values: "ingress-nginx", "gpu"`},
			{Path: "nodeGroups.md0.roles[2]", Message: `duplicate value "gpu"`},
		},
	}, {
		name:  "unknown field",
		value: `nodeGroups: {md0: {instanceType: u1.medium, minReplicas: 0, colour: blue}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.colour", Message: "unknown field"},
		},
	}, {
		name:         "unknown field allowed",
		value:        `nodeGroups: {md0: {instanceType: u1.medium, minReplicas: 0, colour: blue}}`,
		allowUnknown: true,
	}, {
		name:  "wrong types",
		value: `{version: 1.35, nodeGroups: {md0: {instanceType: u1.medium, minReplicas: -1, maxReplicas: ten, roles: [1]}}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.maxReplicas", Message: `must be of type integer: "string"`},
			{Path: "nodeGroups.md0.minReplicas", Message: "should be greater than or equal to 0"},
			{Path: "nodeGroups.md0.roles[0]", Message: `must be of type string: "integer"`},
			{Path: "nodeGroups.md0.roles[0]", Message: `unsupported value 1: supported values: "ingress-nginx", "gpu"`},
			{Path: "version", Message: `must be of type string: "number"`},
			{Path: "version", Message: `unsupported value 1.35: supported values: "v1.34", "v1.35"`},
		},
	}, {
		name:  "additionalProperties map of strings, with a dotted key",
		value: `nodeGroups: {md0: {instanceType: u1.medium, minReplicas: 0, labels: {tier: 1, app.kubernetes.io/role: [w]}}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.labels.tier", Message: `must be of type string: "integer"`},
			{Path: "nodeGroups.md0.labels[app.kubernetes.io/role]", Message: `must be of type string: "array"`},
		},
	}, {
		name:  "declared fields are still checked where unknown ones are preserved",
		value: `nodeGroups: {md0: {instanceType: u1.medium, minReplicas: 0, kubelet: {maxPods: many, other: 1}}}`,
		want: []schema.Violation{
			{Path: "nodeGroups.md0.kubelet.maxPods", Message: `must be of type integer: "string"`},
		},
	}, {
		name:  "required at the root",
		value: `{}`,
		want: []schema.Violation{
			{Path: "nodeGroups", Message: "is required"},
		},
	}, {
		name:  "root of the wrong type",
		value: `[]`,
		want: []schema.Violation{
			{Path: "", Message: `must be of type object: "array"`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := s
			if tt.allowUnknown {
				s = s.AllowUnknown()
			}
			got := s.Validate(fromYAML(t, tt.value))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateKeywords(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		value  string
		want   []schema.Violation
	}{{
		name:   "allOf branches declare fields together",
		schema: `{type: object, allOf: [{properties: {a: {type: string}}}, {properties: {b: {type: integer}}}]}`,
		value:  `{a: x, b: "y", c: 1}`,
		want: []schema.Violation{
			{Path: "b", Message: `must be of type integer: "string"`},
			{Path: "c", Message: "unknown field"},
		},
	}, {
		name:   "a field declared twice gets the union of both below it",
		schema: `{type: object, properties: {a: {type: object, properties: {x: {type: string}}}}, anyOf: [{properties: {a: {properties: {y: {type: string}}}}}]}`,
		value:  `{a: {x: "1", y: "2", z: "3"}}`,
		want: []schema.Violation{
			{Path: "a.z", Message: "unknown field"},
		},
	}, {
		name:   "anyOf with required, as CRDs use it",
		schema: `{type: object, properties: {a: {type: string}, b: {type: string}}, anyOf: [{required: [a]}, {required: [b]}]}`,
		value:  `{}`,
		want: []schema.Violation{
			{Path: "", Message: "must validate at least one schema (anyOf)"},
		},
	}, {
		name:   "oneOf matching twice",
		schema: `{type: object, properties: {a: {type: string}, b: {type: string}}, oneOf: [{required: [a]}, {required: [b]}]}`,
		value:  `{a: x, b: z}`,
		want: []schema.Violation{
			{Path: "", Message: "must validate one and only one schema (oneOf), but validates 2"},
		},
	}, {
		name:   "not",
		schema: `{type: string, not: {enum: [latest]}}`,
		value:  `latest`,
		want: []schema.Violation{
			{Path: "", Message: "must not validate the schema (not)"},
		},
	}, {
		name:   "additionalProperties false holds even where unknown fields are allowed",
		schema: `{type: object, x-kubernetes-preserve-unknown-fields: true, properties: {a: {type: string}}, additionalProperties: false}`,
		value:  `{a: x, b: z}`,
		want: []schema.Violation{
			{Path: "b", Message: "unknown field"},
		},
	}, {
		name:   "patternProperties",
		schema: `{type: object, patternProperties: {'^x-': {type: string}}}`,
		value:  `{x-a: 1, z: 2}`,
		want: []schema.Violation{
			{Path: "x-a", Message: `must be of type string: "integer"`},
			{Path: "z", Message: "unknown field"},
		},
	}, {
		name:   "local $ref, recursive through a property",
		schema: `{$ref: '#/definitions/tree', definitions: {tree: {type: object, properties: {name: {type: string}, children: {type: array, items: {$ref: '#/definitions/tree'}}}}}}`,
		value:  `{name: a, children: [{name: b, children: [{name: 3}]}]}`,
		want: []schema.Violation{
			{Path: "children[0].children[0].name", Message: `must be of type string: "integer"`},
		},
	}, {
		name:   "embedded resource",
		schema: `{type: object, x-kubernetes-embedded-resource: true, x-kubernetes-preserve-unknown-fields: true}`,
		value:  `{kind: ConfigMap, metadata: {name: a}}`,
		want: []schema.Violation{
			{Path: "apiVersion", Message: "must not be empty"},
		},
	}, {
		name:   "list-type map",
		schema: `{type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [name], items: {type: object, properties: {name: {type: string}, port: {type: integer}}}}`,
		value:  `[{name: http, port: 80}, {name: http, port: 8080}]`,
		want: []schema.Violation{
			{Path: "[1]", Message: `duplicate entry with keys {"name":"http"}`},
		},
	}, {
		name:   "numbers: an integral float is an integer, formats bound it",
		schema: `{type: object, properties: {a: {type: integer, format: int32}, b: {type: integer}, c: {type: number, multipleOf: 0.5}}}`,
		value:  `{a: 3000000000, b: 2.5, c: 1.25}`,
		want: []schema.Violation{
			{Path: "a", Message: "value must be of type integer with format int32"},
			{Path: "b", Message: `must be of type integer: "number"`},
			{Path: "b", Message: "value must be of type integer (default format)"},
			{Path: "c", Message: "should be a multiple of 0.5"},
		},
	}, {
		name:   "const and draft 7 exclusive bounds",
		schema: `{type: object, properties: {a: {const: 1}, b: {type: integer, exclusiveMinimum: 0}}}`,
		value:  `{a: 1.0, b: 0}`,
		want: []schema.Violation{
			{Path: "b", Message: "should be greater than 0"},
		},
	}, {
		name:   "format",
		schema: `{type: object, properties: {at: {type: string, format: date-time}, net: {type: string, format: cidr}}}`,
		value:  `{at: yesterday, net: 10.0.0.0/8}`,
		want: []schema.Violation{
			{Path: "at", Message: `must be of type date-time: "yesterday"`},
		},
	}, {
		name:   "an object without declared fields keeps none",
		schema: `{type: object, properties: {a: {type: object}}}`,
		value:  `{a: {b: 1}}`,
		want: []schema.Violation{
			{Path: "a.b", Message: "unknown field"},
		},
	}, {
		name:   "an empty schema accepts anything",
		schema: `{}`,
		value:  `{a: [1, {b: null}]}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCompile(t, tt.schema).Validate(fromYAML(t, tt.value))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   string // a part of the error
	}{
		{name: "not YAML", schema: "type: [object", want: "failed to parse schema"},
		{name: "empty", schema: "", want: "must be an object, not null"},
		{name: "not an object", schema: "[]", want: "must be an object, not array"},
		{name: "unknown type", schema: "{type: obj}", want: `#/type: unknown type "obj"`},
		{name: "bad pattern", schema: "{properties: {a: {type: string, pattern: '(?<=a)b'}}}", want: "#/properties/a/pattern: invalid pattern"},
		{name: "bad patternProperties key", schema: "{patternProperties: {'[': {}}}", want: "#/patternProperties: invalid pattern"},
		{name: "properties not an object", schema: "{properties: 5}", want: "#/properties: must be an object, not integer"},
		{name: "required not a list", schema: "{type: object, required: a}", want: "failed to compile schema: #"},
		{name: "zero multipleOf", schema: "{type: number, multipleOf: 0}", want: "#/multipleOf: must be a number greater than 0"},
		{name: "remote $ref", schema: "{$ref: 'https://example.com/s.json'}", want: "only local references"},
		{name: "dangling $ref", schema: "{$ref: '#/definitions/missing'}", want: `"#/definitions/missing" does not resolve`},
		{name: "$ref cycle on the same value", schema: "{definitions: {a: {allOf: [{$ref: '#/definitions/a'}]}}, $ref: '#/definitions/a'}", want: "refers to itself"},
		{name: "bad extension", schema: "{x-kubernetes-preserve-unknown-fields: 'yes'}", want: "must be a boolean"},
		{name: "bad CEL rule list", schema: "{x-kubernetes-validations: [{message: m}]}", want: "must be an object with a rule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schema.Compile([]byte(tt.schema))
			if err == nil {
				t.Fatalf("Compile() error = nil, want one containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compile() error = %q, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestCompileValue(t *testing.T) {
	// As a CustomResourceDefinition's openAPIV3Schema reaches a caller
	// that decoded the whole document.
	raw := map[string]any{
		"type":     "object",
		"required": []any{"name"},
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "maxLength": int64(3)},
		},
	}
	s, err := schema.CompileValue(raw)
	if err != nil {
		t.Fatalf("CompileValue() error = %v", err)
	}
	got := s.Validate(map[string]any{"name": "long"})
	want := []schema.Violation{{Path: "name", Message: "should be at most 3 chars long"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
	}
	if _, err := schema.CompileValue(func() {}); err == nil {
		t.Error("CompileValue(func) error = nil, want an error")
	}
}

func TestValidateGoValues(t *testing.T) {
	s := mustCompile(t, nodeGroupSchema)
	type group struct {
		InstanceType string            `json:"instanceType"`
		MinReplicas  uint8             `json:"minReplicas"`
		MaxReplicas  *int              `json:"maxReplicas,omitempty"`
		Labels       map[string]string `json:"labels,omitempty"`
	}
	three := 3
	tests := []struct {
		name  string
		value any
		want  []schema.Violation
	}{{
		name:  "structs convert through encoding/json",
		value: map[string]any{"nodeGroups": map[string]group{"md0": {InstanceType: "u1.medium", MaxReplicas: &three}}},
	}, {
		name:  "typed maps, slices and integers",
		value: map[string]any{"nodeGroups": map[string]map[string]any{"md0": {"instanceType": "u1.medium", "minReplicas": int32(1), "roles": []string{"gpu"}}}},
	}, {
		name:  "a function is not JSON",
		value: map[string]any{"nodeGroups": map[string]any{"md0": func() {}}},
		want:  []schema.Violation{{Path: "nodeGroups.md0", Message: "unsupported value of type func()"}},
	}, {
		name:  "NaN is not JSON",
		value: map[string]any{"nodeGroups": map[string]any{"md0": map[string]any{"minReplicas": nanValue()}}},
		want:  []schema.Violation{{Path: "nodeGroups.md0.minReplicas", Message: "NaN is not a JSON number"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, s.Validate(tt.value)); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

func TestValidateNeverPanics(t *testing.T) {
	cyclic := map[string]any{}
	cyclic["self"] = cyclic
	values := []any{
		nil, true, "s", 1, -1.5, uint64(1 << 63), []byte("x"), [2]int{1, 2},
		map[int]string{1: "a"}, map[bool]int{true: 1}, make(chan int), struct{ A func() }{},
		cyclic, []any{nil, []any{nil}}, map[string]any{"nodeGroups": nil},
		map[string]any{"nodeGroups": map[string]any{"md0": nil}},
		map[string]any{"nodeGroups": map[string]any{"md0": map[string]any{"roles": map[string]any{}}}},
		(*int)(nil), new(any),
	}
	schemas := []string{nodeGroupSchema, `{}`, `true`, `false`, `{type: [string, "null"]}`,
		`{items: [{type: string}], additionalItems: false}`, `{additionalProperties: {not: {}}}`}
	for _, text := range schemas {
		s := mustCompile(t, text)
		for _, v := range values {
			_ = s.Validate(v)
			_ = s.AllowUnknown().Validate(v)
			_ = s.SkippedRules(v)
		}
	}
	var zero *schema.Schema
	if got := zero.Validate(map[string]any{"a": 1}); got != nil {
		t.Errorf("nil Schema Validate() = %v, want nil", got)
	}
}

func TestSkippedRules(t *testing.T) {
	s := mustCompile(t, `
type: object
x-kubernetes-validations:
- rule: has(self.a) || has(self.b)
  message: a or b
properties:
  a:
    type: object
    x-kubernetes-validations: [{rule: self.x > 0, messageExpression: "'x is ' + string(self.x)"}]
    properties: {x: {type: integer}}
  b: {type: string, x-kubernetes-validations: [{rule: self != 'c'}]}
`)
	got := s.SkippedRules(map[string]any{"a": map[string]any{"x": 1}})
	want := []schema.Rule{
		{Path: "", Rule: "has(self.a) || has(self.b)", Message: "a or b"},
		{Path: "a", Rule: "self.x > 0", Message: "'x is ' + string(self.x)"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SkippedRules() mismatch (-want +got):\n%s", diff)
	}
}

func TestValidateConcurrently(t *testing.T) {
	s := mustCompile(t, nodeGroupSchema)
	value := fromYAML(t, `nodeGroups: {md0: {instanceType: u1.medium, minReplicas: x}}`)
	want := s.Validate(value)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if diff := cmp.Diff(want, s.Validate(value)); diff != "" {
					t.Errorf("concurrent Validate() mismatch (-want +got):\n%s", diff)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestChildPath(t *testing.T) {
	tests := []struct {
		parent, key, want string
	}{
		{"", "spec", "spec"},
		{"spec", "nodeGroups", "spec.nodeGroups"},
		{"metadata.labels", "app.kubernetes.io/name", "metadata.labels[app.kubernetes.io/name]"},
		{"metadata.annotations", "a/b/c", "metadata.annotations[a/b/c]"},
		{"", "a b", "[a b]"},
		{"m", "", "m[]"},
	}
	for _, tt := range tests {
		if got := schema.ChildPath(tt.parent, tt.key); got != tt.want {
			t.Errorf("ChildPath(%q, %q) = %q, want %q", tt.parent, tt.key, got, tt.want)
		}
	}
	if got, want := schema.IndexPath("roles", 2), "roles[2]"; got != want {
		t.Errorf("IndexPath() = %q, want %q", got, want)
	}
}
