package knobs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/knobs"
)

func fromYAML(t *testing.T, doc string) map[string]any {
	t.Helper()
	// As the function reads knobs: integers as int64.
	j, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := utiljson.Unmarshal(j, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func compile(t *testing.T, doc string) *knobs.Schema {
	t.Helper()
	s, err := knobs.Compile(fromYAML(t, doc))
	if err != nil {
		t.Fatalf("Compile() error = %v", err)
	}
	return s
}

// TestDefaultSchema validates knobs against the embedded default schema:
// node groups only, shaped like the chart's.
func TestDefaultSchema(t *testing.T) {
	def, err := api.DefaultKnobSchema()
	if err != nil {
		t.Fatal(err)
	}
	s, err := knobs.Compile(def)
	if err != nil {
		t.Fatalf("Compile() error = %v", err)
	}
	const group = "minReplicas: 1, maxReplicas: 3, instanceType: u1.large, diskSize: 50Gi"
	tests := []struct {
		name  string
		knobs string
		want  []knobs.Violation
	}{{
		name:  "every field of a group",
		knobs: "nodeGroups: {md0: {" + group + ", roles: [ingress-nginx], gpus: [{name: nvidia.com/L40S}], resources: {cpu: 4, memory: 16Gi}, kubelet: {kubeReservedCpu: 200m}, logSerialConsole: true, podCpuLimit: 2, storageClass: replicated}}",
	}, {
		name:  "a knob the schema does not declare",
		knobs: "storageClass: replicated\ncontrolPlane: {replicas: 3}",
		want: []knobs.Violation{
			{Field: "spec.controlPlane", Message: "unknown field"},
			{Field: "spec.storageClass", Message: "unknown field"},
		},
	}, {
		name:  "unknown fields deep down, with their paths",
		knobs: "nodeGroups: {md0: {" + group + ", privileged: true, gpus: [{name: a, count: 2}], kubelet: {maxPods: 300}}}",
		want: []knobs.Violation{
			{Field: "spec.nodeGroups.md0.gpus[0].count", Message: "unknown field"},
			{Field: "spec.nodeGroups.md0.kubelet.maxPods", Message: "unknown field"},
			{Field: "spec.nodeGroups.md0.privileged", Message: "unknown field"},
		},
	}, {
		name:  "missing, mistyped and out of bounds",
		knobs: "nodeGroups: {md0: {minReplicas: -1, maxReplicas: ten, instanceType: 3, roles: ingress-nginx}}",
		want: []knobs.Violation{
			{Field: "spec.nodeGroups.md0.diskSize", Message: "Required value"},
			{Field: "spec.nodeGroups.md0.instanceType", Message: `Invalid value: "integer": spec.nodeGroups.md0.instanceType in body must be of type string: "integer"`},
			{Field: "spec.nodeGroups.md0.maxReplicas", Message: `Invalid value: "string": spec.nodeGroups.md0.maxReplicas in body must be of type integer: "string"`},
			{Field: "spec.nodeGroups.md0.minReplicas", Message: "Invalid value: -1: spec.nodeGroups.md0.minReplicas in body should be greater than or equal to 0"},
			{Field: "spec.nodeGroups.md0.roles", Message: `Invalid value: "string": spec.nodeGroups.md0.roles in body must be of type array: "string"`},
		},
	}, {
		name:  "a quantity that is no quantity, and one of the wrong type",
		knobs: "nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3, instanceType: u1.large, diskSize: 50GB, resources: {cpu: [4]}}}",
		want: []knobs.Violation{
			// anyOf names no field: the API server puts it nowhere (here
			// at the root) and names the field in the message.
			{Field: "spec", Message: `Invalid value: "": "spec.nodeGroups.md0.resources.cpu" must validate at least one schema (anyOf)`},
			{Field: "spec.nodeGroups.md0.diskSize", Message: `Invalid value: "50GB": spec.nodeGroups.md0.diskSize in body should match '^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$'`},
			// x-kubernetes-int-or-string: integer or string, as the API
			// server has it, then the anyOf branch that came closest.
			{Field: "spec.nodeGroups.md0.resources.cpu", Message: `Invalid value: "array": spec.nodeGroups.md0.resources.cpu in body must be of type integer,string: "array"`},
			{Field: "spec.nodeGroups.md0.resources.cpu", Message: `Invalid value: "array": spec.nodeGroups.md0.resources.cpu in body must be of type integer: "array"`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, s.Validate(fromYAML(t, tt.knobs)), wordsOnly); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSchemaKeywords: what a knob schema of the operator's may say, and
// how the API server's rules apply to it.
func TestSchemaKeywords(t *testing.T) {
	tests := []struct {
		name, schema, knobs string
		want                []knobs.Violation
	}{{
		name:   "additionalProperties: false is what a structural schema does anyway",
		schema: "{type: object, additionalProperties: false, properties: {a: {type: object, additionalProperties: false, properties: {b: {type: string}}}}}",
		knobs:  "{a: {b: x, c: y}, d: 1}",
		want: []knobs.Violation{
			{Field: "spec.a.c", Message: "unknown field"},
			{Field: "spec.d", Message: "unknown field"},
		},
	}, {
		name:   "a map at the root",
		schema: "{type: object, additionalProperties: {type: integer}}",
		knobs:  "{a: 1, b: x}",
		want:   []knobs.Violation{{Field: "spec.b", Message: `Invalid value: "string": spec.b in body must be of type integer: "string"`}},
	}, {
		name:   "x-kubernetes-preserve-unknown-fields lets anything through",
		schema: "{type: object, x-kubernetes-preserve-unknown-fields: true}",
		knobs:  "{a: {b: [1, {c: d}]}}",
	}, {
		name:   "x-kubernetes-int-or-string without anyOf",
		schema: "{type: object, properties: {q: {x-kubernetes-int-or-string: true}}}",
		knobs:  "{q: [1]}",
		want:   []knobs.Violation{{Field: "spec.q", Message: `Invalid value: "array": spec.q in body must be of type integer,string: "array"`}},
	}, {
		name:   "enum",
		schema: "{type: object, properties: {m: {type: string, enum: [Proxied, LoadBalancer]}}}",
		knobs:  "{m: NodePort}",
		want:   []knobs.Violation{{Field: "spec.m", Message: `Unsupported value: "NodePort": supported values: "Proxied", "LoadBalancer"`}},
	}, {
		name:   "list-type set and map",
		schema: "{type: object, properties: {s: {type: array, x-kubernetes-list-type: set, items: {type: string}}, m: {type: array, x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [name], items: {type: object, required: [name], properties: {name: {type: string}, v: {type: integer}}}}}}",
		knobs:  "{s: [a, b, a], m: [{name: x, v: 1}, {name: x, v: 2}]}",
		want: []knobs.Violation{
			{Field: "spec.m[1]", Message: `Duplicate value: {"name":"x"}`},
			{Field: "spec.s[2]", Message: `Duplicate value: "a"`},
		},
	}, {
		name:   "formats",
		schema: "{type: object, properties: {h: {type: string, format: hostname}}}",
		knobs:  "{h: not_a_host!}",
		want:   []knobs.Violation{{Field: "spec.h", Message: `Invalid value: "not_a_host!": spec.h in body must be of type hostname: "not_a_host!"`}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := compile(t, tt.schema)
			if diff := cmp.Diff(tt.want, s.Validate(fromYAML(t, tt.knobs)), wordsOnly); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompileRefuses: a knob schema the API server would not take as a
// structural schema, or one with CEL rules, is refused with the reason.
func TestCompileRefuses(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"a field without a type", "{type: object, properties: {a: {description: x}}}", "properties[a].type: Required value: must not be empty for specified object fields"},
		{"a $ref", "{type: object, properties: {a: {$ref: '#/definitions/x'}}}", "'$ref' is not supported"},
		{"patternProperties", "{type: object, patternProperties: {'^a': {type: string}}}", "'patternProperties' is not supported"},
		{"a list without items", "{type: object, properties: {a: {type: array}}}", "properties[a].items: Required value"},
		{"a root that is not an object", "{type: string}", "type: must be object"},
		{"a type inside anyOf", "{type: object, properties: {a: {type: string, anyOf: [{type: integer}]}}}", "properties[a].anyOf[0].type: Forbidden"},
		{"a CEL rule", "{type: object, properties: {nodeGroups: {type: object, x-kubernetes-validations: [{rule: 'size(self) < 3'}]}}}", "properties[nodeGroups].x-kubernetes-validations: CEL rules are not evaluated"},
		{"a keyword of the wrong shape", "{type: object, required: yes}", "failed to read the schema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := knobs.Compile(fromYAML(t, tt.schema))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compile() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestValidateLeavesKnobsAlone: pruning works on a copy.
func TestValidateLeavesKnobsAlone(t *testing.T) {
	s := compile(t, "{type: object, properties: {a: {type: string}}}")
	k := fromYAML(t, "{a: x, b: {c: d}}")
	s.Validate(k)
	if diff := cmp.Diff(fromYAML(t, "{a: x, b: {c: d}}"), k); diff != "" {
		t.Errorf("Validate() changed the knobs (-want +got):\n%s", diff)
	}
}

// TestValidateNeverPanics gives values no YAML decoder produces.
func TestValidateNeverPanics(t *testing.T) {
	s := compile(t, "{type: object, x-kubernetes-preserve-unknown-fields: true, properties: {a: {type: integer}}}")
	for _, v := range []map[string]any{
		{"a": int(3)}, {"a": uint8(3)}, {"a": []string{"x"}}, {"a": struct{}{}}, {"a": map[int]int{1: 2}}, {"b": make(chan int)},
	} {
		s.Validate(v)
	}
}

func ExampleSchema_Validate() {
	s, err := knobs.Compile(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"replicas": map[string]any{"type": "integer", "minimum": 1},
		},
	})
	if err != nil {
		panic(err)
	}
	for _, v := range s.Validate(map[string]any{"replicas": int64(0), "colour": "blue"}) {
		fmt.Println(v)
	}
	// Output:
	// spec.colour: unknown field
	// spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1
}

// TestControlCharacters: a line break or other control character in any
// knob string or key is refused at its path, whatever the schema allows
// (here: anything).
func TestControlCharacters(t *testing.T) {
	s := compile(t, "type: object\nx-kubernetes-preserve-unknown-fields: true\n")
	tests := []struct {
		name, knobs string
		want        []string // fields
	}{
		{"plain strings", `{a: "b c", d: [e, "f.g/h"], i: {j: 1}}`, nil},
		{"a line feed", `{a: {b: "x\ny: z"}}`, []string{"spec.a.b"}},
		{"a carriage return in a list", `{a: [ok, "x\r"]}`, []string{"spec.a[1]"}},
		{"a tab", `{a: "x\ty"}`, []string{"spec.a"}},
		{"NEL", `{a: "x\u0085y"}`, []string{"spec.a"}},
		{"a line separator", `{a: "x\u2028y"}`, []string{"spec.a"}},
		{"a key with a line break", `{a: {"b\nc": d}}`, []string{"spec.a"}},
		{"two", `{a: "\u0000", b: ["\u001b[31m"]}`, []string{"spec.a", "spec.b[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, v := range s.Validate(fromYAML(t, tt.knobs)) {
				if !strings.Contains(v.Message, "control character") {
					t.Errorf("%s: %s; want a message about the control character", v.Field, v.Message)
				}
				got = append(got, v.Field)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("refused fields (-want +got):\n%s", d)
			}
		})
	}
}

// wordsOnly compares violations by field and message: TestCheckKeywords
// covers their keywords.
var wordsOnly = cmpopts.IgnoreFields(knobs.Violation{}, "Keyword")

// TestCheckKeywords: Check names the schema keyword each value breaks, for
// a caller that words its own messages (the function config's decoder),
// and adds none of the knob-only checks.
func TestCheckKeywords(t *testing.T) {
	s := compile(t, `{type: object, required: [r], properties: {r: {type: string}, i: {type: integer, minimum: 1, maximum: 3}, e: {type: string, enum: [a, b]}, p: {type: string, pattern: "^x"}, t: {type: boolean}}}`)
	got := map[string]string{}
	for _, v := range s.Check(fromYAML(t, "{i: 5, e: c, p: zz, t: \"no\", u: 1, line: \"a\\nb\"}")) {
		got[v.Field] = v.Keyword
	}
	want := map[string]string{
		"spec.r": "required", "spec.i": "maximum", "spec.e": "enum", "spec.p": "pattern", "spec.t": "type",
		"spec.u": "properties", "spec.line": "properties", // no control-character check
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
