package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/computeplane-dev/computeplane-fn/pkg/knobs"
)

// configSchema is the JSON Schema (draft-07) of a ComputePlaneGenerator:
// the one source of what each config field means, its type, enum, bounds
// and default. Editors read it (computeplane-fn schema, the release's
// computeplanegenerator.schema.json), docs/function.md's reference is
// generated from it (internal/testkit/configdoc), [DecodeConfig] checks every
// config against it ([specChecker]) before it decodes one into [Config],
// the ConfigMap functionConfig is typed by it (configmap.go), and
// schema_test.go proves that it and [Config] (with [Config.Default])
// agree on every field, type and default.
//
//go:embed computeplanegenerator.schema.json
var configSchema []byte

// ConfigSchema returns the JSON Schema of a ComputePlaneGenerator, as the
// release publishes it.
func ConfigSchema() []byte { return bytes.Clone(configSchema) }

// SchemaNode is one schema of [ConfigSchema], as far as this project reads
// it: the keywords the config's schema uses.
type SchemaNode struct {
	// Type is "string", "boolean", "integer", "array" or "object"; Types
	// holds it when the schema names several (["string", "integer"]).
	Type  string   `json:"-"`
	Types []string `json:"-"`
	// Description says what the field is for, in Markdown.
	Description string `json:"description"`
	// Default is the value the decoder gives a config that leaves the
	// field out (schema_test.go checks it), or nil.
	Default any `json:"default"`
	// DefaultText, the schema's x-default, says the default in words where
	// it depends on other fields or is not a plain value; the docs show it
	// in place of Default.
	DefaultText string `json:"x-default"`
	Enum        []any  `json:"enum"`
	Const       any    `json:"const"`
	Pattern     string `json:"pattern"`
	// Minimum and Maximum bound an integer; nil when unbounded.
	Minimum *int64 `json:"minimum"`
	Maximum *int64 `json:"maximum"`
	// Properties are an object's fields, Order their names as the schema
	// lists them, and Required the ones it must set.
	Properties map[string]*SchemaNode `json:"properties"`
	Order      []string               `json:"-"`
	Required   []string               `json:"required"`
	// Items is the schema of an array's items.
	Items *SchemaNode `json:"items"`
	// Values is the schema of the values of a map whose keys are free
	// (additionalProperties: {...}); nil for a free-form object and for an
	// object with properties (additionalProperties: false).
	Values *SchemaNode `json:"-"`
}

// UnmarshalJSON reads the schema keywords, type and additionalProperties
// in their two forms each.
func (n *SchemaNode) UnmarshalJSON(data []byte) error {
	type plain SchemaNode
	var raw struct {
		plain
		Type                 json.RawMessage `json:"type"`
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
		Properties           json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*n = SchemaNode(raw.plain)
	if len(raw.Properties) > 0 {
		if err := json.Unmarshal(raw.Properties, &n.Properties); err != nil {
			return err
		}
		order, err := keyOrder(raw.Properties)
		if err != nil {
			return err
		}
		n.Order = order
	}
	if len(raw.Type) > 0 {
		if err := json.Unmarshal(raw.Type, &n.Type); err != nil {
			if err := json.Unmarshal(raw.Type, &n.Types); err != nil {
				return fmt.Errorf("type must be a string or a list of strings: %w", err)
			}
		}
	}
	if len(raw.AdditionalProperties) > 0 && raw.AdditionalProperties[0] == '{' {
		n.Values = new(SchemaNode)
		if err := json.Unmarshal(raw.AdditionalProperties, n.Values); err != nil {
			return err
		}
	}
	return nil
}

// keyOrder returns the keys of the JSON object data in their order.
func keyOrder(data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		keys = append(keys, key)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// Lookup returns the schema of the field at path below n, a dotted path of
// property names ("guard.enabled"); nil when n has no such field.
func (n *SchemaNode) Lookup(path string) *SchemaNode {
	for _, key := range strings.Split(path, ".") {
		if n == nil || n.Properties == nil {
			return nil
		}
		n = n.Properties[key]
	}
	return n
}

var parsedSchema = sync.OnceValues(func() (*SchemaNode, error) {
	var root SchemaNode
	if err := json.Unmarshal(configSchema, &root); err != nil {
		return nil, fmt.Errorf("failed to read the embedded config schema: %w", err)
	}
	if root.Lookup("spec") == nil {
		return nil, fmt.Errorf("the embedded config schema has no spec")
	}
	return &root, nil
})

// ParseConfigSchema returns [ConfigSchema] parsed: the schema of the whole
// ComputePlaneGenerator. An error means the embedded schema is broken, a
// defect of the build that the tests catch.
func ParseConfigSchema() (*SchemaNode, error) { return parsedSchema() }

// specChecker is the schema of spec compiled as the structural schema of a
// custom resource's spec, checked with the API server's packages
// (package knobs): pruning refuses the fields it does not declare, and
// kube-openapi's validator checks types, enums, bounds, patterns and
// required fields.
var specChecker = sync.OnceValues(func() (*knobs.Schema, error) {
	var root map[string]any
	if err := json.Unmarshal(configSchema, &root); err != nil {
		return nil, fmt.Errorf("failed to read the embedded config schema: %w", err)
	}
	spec, _ := root["properties"].(map[string]any)["spec"].(map[string]any)
	if spec == nil {
		return nil, fmt.Errorf("the embedded config schema has no spec")
	}
	if err := structural(spec, "spec"); err != nil {
		return nil, fmt.Errorf("the embedded config schema: %w", err)
	}
	s, err := knobs.Compile(spec)
	if err != nil {
		return nil, fmt.Errorf("the embedded config schema: %w", err)
	}
	return s, nil
})

// structural rewrites, in place, the two JSON Schema constructs of the
// config's schema that a structural schema refuses, into the API server's
// words for the same thing, so that editors keep reading plain draft-07:
//
//   - type: [string, integer] (a quantity) is x-kubernetes-int-or-string:
//     a structural schema has one type per field;
//   - an object without properties or additionalProperties (a free-form
//     map such as spec.cluster.values) is
//     x-kubernetes-preserve-unknown-fields: true; otherwise pruning would
//     drop all it holds.
//
// Anything else a structural schema refuses is an error at path, which the
// tests catch before a release.
func structural(s map[string]any, path string) error {
	switch t := s["type"].(type) {
	case []any:
		if len(t) != 2 || !slices.Contains(t, any("string")) || !slices.Contains(t, any("integer")) {
			return fmt.Errorf("%s: type %v: a structural schema has one type, or integer or string", path, t)
		}
		delete(s, "type")
		s["x-kubernetes-int-or-string"] = true
	case string:
		_, props := s["properties"]
		_, values := s["additionalProperties"]
		if t == "object" && !props && !values {
			s["x-kubernetes-preserve-unknown-fields"] = true
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if p, ok := props[name].(map[string]any); ok {
				if err := structural(p, path+"."+name); err != nil {
					return err
				}
			}
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		if err := structural(items, path+"[]"); err != nil {
			return err
		}
	}
	if values, ok := s["additionalProperties"].(map[string]any); ok {
		if err := structural(values, path+".*"); err != nil {
			return err
		}
	}
	return nil
}
