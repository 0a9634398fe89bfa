package model

import (
	"cmp"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"

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
// spec; nil without a schema.
func compileAppSchema(def *api.Definition) appSchema {
	if def.OpenAPISchema == "" {
		return appSchema{}
	}
	var schema map[string]any
	if err := json.Unmarshal([]byte(def.OpenAPISchema), &schema); err != nil {
		return appSchema{err: fmt.Errorf("not a JSON object: %w", err)}
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

// checkAppValues checks every app's spec against its definition's schema,
// each schema compiled once, the apps on every core. Under spec.apps.values
// Warn it returns warnings (Fleet.Warnings reports them), under Refuse
// problems; a definition whose schema does not compile is a warning either
// way (it is the platform's, and cozystack-api takes it), and its apps are
// not checked.
func (f *Fleet) checkAppValues(apps []*App) (problems, warnings api.Problems) {
	if f.Config.Apps.Values == api.AppValuesIgnore || len(apps) == 0 {
		return nil, nil
	}
	schemas := map[*api.Definition]appSchema{}
	for _, a := range apps {
		if _, done := schemas[a.Definition]; done || a.Values == nil {
			continue
		}
		s := compileAppSchema(a.Definition)
		schemas[a.Definition] = s
		if s.err != nil {
			d := a.Definition
			warnings = append(warnings, api.Errorf(d.Ref, d.Origin, "spec.application.openAPISchema",
				"the spec of %s apps is not checked against it (spec.apps.values): %v", d.Kind, s.err))
		}
	}
	found := make([]api.Problems, len(apps))
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(apps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= len(apps) {
					return
				}
				if s := schemas[apps[j].Definition]; s.schema != nil {
					found[j] = checkValues(apps[j], s.schema)
				}
			}
		}()
	}
	wg.Wait()
	var out api.Problems
	for _, ps := range found {
		out = append(out, ps...)
	}
	if f.Config.Apps.Values == api.AppValuesRefuse {
		return out, warnings
	}
	return nil, append(warnings, out...)
}

// checkValues reports the fields of one app's spec that its schema does not
// know and the values of the wrong type.
func checkValues(a *App, s *knobs.Schema) api.Problems {
	node, err := yamltext.DecodeValues(a.Values)
	if err != nil {
		return api.Problems{api.Internal(fmt.Errorf("%s %s/%s: %w", a.Kind, a.Namespace, a.Name, err))}
	}
	v, err := yamlnode.ToValue(node, yamlnode.DefaultBudget)
	if err != nil {
		return api.Problems{api.Internal(fmt.Errorf("%s %s/%s: %w", a.Kind, a.Namespace, a.Name, err))}
	}
	spec, ok := v.(map[string]any)
	if !ok {
		// A spec that is not a mapping: its decoding refused it already.
		return nil
	}
	var out api.Problems
	def := a.Definition.Ref.Name
	violations := s.Check(spec)
	slices.SortFunc(violations, func(x, y knobs.Violation) int {
		return cmp.Or(cmp.Compare(x.Field, y.Field), cmp.Compare(x.Message, y.Message))
	})
	for _, violation := range violations {
		switch violation.Keyword {
		case "properties":
			out = append(out, api.Errorf(a.Ref, a.Origin, violation.Field,
				"unknown field: the openAPISchema of ApplicationDefinition %s declares no such field, so the chart would most likely ignore it (cozystack-api and Helm pass it on as written); correct its name", def))
		case "type":
			out = append(out, api.Errorf(a.Ref, a.Origin, violation.Field,
				"%s (the openAPISchema of ApplicationDefinition %s); the chart would get it as written and may fail at install, on the cluster", violation.Message, def))
		}
	}
	return out
}
