package model

import (
	"cmp"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/knobs"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

// An app's spec is checked against its definition's openAPISchema
// (spec.apps.values): the fields the schema does not know, and the values
// of the wrong type, each with the app, its file and the field's path.
// cozystack-api accepts both (it checks no app spec against the schema), and
// Helm passes them to the chart, which ignores the first and fails on the
// second at install, on the cluster, long after review; the function says
// so at review time.
//
// What the schema knows is what the API server would keep of a custom
// resource with that schema (package knobs, the API server's own pruning
// and kube-openapi's validator), with one difference that follows
// Cozystack's schemas: an object schema without properties (and without
// additionalProperties) is a free-form object, as JSON Schema reads it,
// not one whose every field is pruned. Cozystack's definitions declare
// every value of their chart under properties, maps with
// additionalProperties and opaque values with
// x-kubernetes-preserve-unknown-fields (valuesOverride), so a key outside
// them is a typo. x-kubernetes-validations rules are dropped: they are
// CEL, which the function does not evaluate, and they hold between an
// object and its previous version (self == oldSelf) more often than not.
// Only unknown fields and wrong types are reported: a required field may
// be left to the defaults cozystack-api fills in, and the function does not
// second-guess enums and patterns of a schema that Cozystack itself does
// not enforce.

// appSchema is one definition's compiled schema, or why it has none.
type appSchema struct {
	schema *knobs.Schema
	err    error
}

// compileAppSchema compiles a definition's openAPISchema for its apps'
// spec; a nil schema without one.
func compileAppSchema(openAPISchema string) appSchema {
	if openAPISchema == "" {
		return appSchema{}
	}
	var schema map[string]any
	if err := json.Unmarshal([]byte(openAPISchema), &schema); err != nil {
		return appSchema{err: fmt.Errorf("not a JSON object: %w", err)}
	}
	// An app's spec is an object: a schema that says nothing ({}) is a
	// free-form object, not one the API server would refuse as untyped.
	if _, typed := schema["type"]; !typed {
		schema["type"] = "object"
	}
	openFreeForm(schema)
	s, err := knobs.Compile(schema)
	return appSchema{schema: s, err: err}
}

// openFreeForm drops, in place, every x-kubernetes-validations of a
// schema, and marks every object schema that declares neither properties
// nor additionalProperties as preserving unknown fields: a free-form
// object, whose keys the schema does not describe and so cannot know.
func openFreeForm(schema any) {
	switch s := schema.(type) {
	case map[string]any:
		delete(s, "x-kubernetes-validations")
		_, props := s["properties"]
		_, additional := s["additionalProperties"]
		if t, _ := s["type"].(string); t == "object" && !props && !additional {
			s["x-kubernetes-preserve-unknown-fields"] = true
		}
		for k, v := range s {
			// The values of properties are schemas, not keywords: a
			// property named type or x-kubernetes-validations stays.
			if k == "properties" {
				if m, ok := v.(map[string]any); ok {
					for _, p := range m {
						openFreeForm(p)
					}
				}
				continue
			}
			openFreeForm(v)
		}
	case []any:
		for _, v := range s {
			openFreeForm(v)
		}
	}
}

// readApp is an app with the shape of its values, taken when it was read
// (Reader.Read): apps are usually read before their definitions (the
// input files are read in the order of their names, apps/ before
// definitions/), so the shape is what is left to check without decoding
// the values again.
type readApp struct {
	app   *App
	shape knobs.Shape
}

// checkAppValues checks every app's values against its definition's
// schema, each schema compiled once: the shape of each app's values first
// (knobs.Schema.Suspect, on every core), and only where it may break the
// schema the values themselves, decoded again, with the API server's own
// packages, which decide what is reported. Under spec.apps.values Warn it
// returns warnings (Fleet.Warnings reports them), under Refuse problems; a
// definition whose schema does not compile is a warning either way (it is
// the platform's, and cozystack-api takes it), and its apps are not
// checked.
func (f *Fleet) checkAppValues(apps []readApp) (problems, warnings api.Problems) {
	if f.Config.Apps.Values == api.AppValuesIgnore || len(apps) == 0 {
		return nil, nil
	}
	schemas := map[*api.Definition]appSchema{}
	for _, a := range apps {
		d := a.app.Definition
		if _, done := schemas[d]; done || a.shape == nil {
			continue
		}
		s := compileAppSchema(d.OpenAPISchema)
		schemas[d] = s
		if s.err != nil {
			warnings = append(warnings, api.Errorf(d.Ref, d.Origin, "spec.application.openAPISchema",
				"the spec of %s apps is not checked against it (spec.apps.values): %v", d.Kind, s.err))
		}
	}
	found := make([][]knobs.Violation, len(apps))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(apps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(apps) {
					return
				}
				a := apps[i]
				if s := schemas[a.app.Definition].schema; s != nil && s.Suspect(a.shape) {
					found[i] = findings(s, a.app.Values)
				}
			}
		}()
	}
	wg.Wait()
	var out api.Problems
	for i, a := range apps {
		def := a.app.Definition.Ref.Name
		for _, v := range found[i] {
			if v.Keyword == "properties" {
				out = append(out, api.Errorf(a.app.Ref, a.app.Origin, v.Field,
					"unknown field: the openAPISchema of ApplicationDefinition %s declares no such field, so the chart would most likely ignore it (cozystack-api and Helm pass it on as written); correct its name", def))
			} else {
				out = append(out, api.Errorf(a.app.Ref, a.app.Origin, v.Field,
					"%s (the openAPISchema of ApplicationDefinition %s); the chart would get it as written and may fail at install, on the cluster", v.Message, def))
			}
		}
	}
	if f.Config.Apps.Values == api.AppValuesRefuse {
		return out, warnings
	}
	return nil, append(warnings, out...)
}

// findings returns what the schema finds in an app's encoded values that
// is reported: fields it does not know, and values of the wrong type,
// sorted by field.
func findings(s *knobs.Schema, values []byte) []knobs.Violation {
	node, err := yamltext.ReadValues(values)
	if err != nil {
		// Text EncodeValues wrote: not reached.
		return []knobs.Violation{{Field: "spec", Message: err.Error(), Keyword: "type"}}
	}
	v, err := yamlnode.ToValue(node, yamlnode.DefaultBudget)
	if err != nil {
		return []knobs.Violation{{Field: "spec", Message: err.Error(), Keyword: "type"}}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil // DecodeApp refuses a spec that is not a mapping
	}
	var out []knobs.Violation
	for _, violation := range s.CheckValues(m) {
		if violation.Keyword == "properties" || violation.Keyword == "type" {
			out = append(out, violation)
		}
	}
	slices.SortFunc(out, func(x, y knobs.Violation) int {
		return cmp.Or(cmp.Compare(x.Field, y.Field), cmp.Compare(x.Message, y.Message))
	})
	return out
}
