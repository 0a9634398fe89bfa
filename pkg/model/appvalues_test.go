package model_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

// postgresSchema has the shapes of Cozystack's definitions: declared
// properties, a map (additionalProperties), an opaque value
// (x-kubernetes-preserve-unknown-fields), a free-form object and a CEL rule.
const postgresSchema = `{"type":"object","properties":{` +
	`"replicas":{"type":"integer","default":2},` +
	`"size":{"type":"string"},` +
	`"users":{"type":"object","additionalProperties":{"type":"object","properties":{"password":{"type":"string"}}}},` +
	`"valuesOverride":{"type":"object","x-kubernetes-preserve-unknown-fields":true},` +
	`"labels":{"type":"object"},` +
	`"storageClass":{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"immutable"}]}}}`

func valuesFleet(t *testing.T, appFirst bool, mode, schema, spec string) (*model.Fleet, api.Problems) {
	t.Helper()
	text := `apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: postgres}
spec:
  application: {kind: Postgres, openAPISchema: '` + schema + `'}
  release: {prefix: postgres-, chartRef: {kind: ExternalArtifact, name: postgres}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: a, namespace: tenant-root}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: db, namespace: tenant-a}
` + spec
	objs, err := input.Decode([]byte(text), "apps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &api.Config{Delivery: api.Direct, Apps: api.AppsConfig{Values: mode}}
	if appFirst {
		slices.Reverse(objs)
	}
	return model.Build(cfg, model.Reader{Config: cfg, EncodeValues: yamltext.EncodeValues}.ReadAll(objs))
}

// TestAppValues: a field the definition's schema does not know and a value
// of the wrong type are named with the file, the app and the field: a
// warning under Warn (the default), an error under Refuse, nothing under
// Ignore.
func TestAppValues(t *testing.T) {
	db := api.ObjectRef{Kind: "Postgres", Namespace: "tenant-a", Name: "db"}
	unknown := func(field string) api.Problem {
		return api.Problem{Object: db, File: "apps.yaml", Field: field,
			Message: "unknown field: the openAPISchema of ApplicationDefinition postgres declares no such field, so the chart would most likely ignore it (cozystack-api and Helm pass it on as written); correct its name"}
	}
	for _, tc := range []struct {
		name, mode, schema, spec string
		warnings, problems       []api.Problem
	}{{
		name: "valid: declared fields, a map's keys, an opaque value, a free-form object, a CEL rule not evaluated",
		spec: "spec:\n  replicas: 2\n  users: {alice: {password: x}}\n  valuesOverride: {anything: {at: [all]}}\n  labels: {team: data}\n  storageClass: fast\n",
	}, {
		name:     "a misspelled field",
		spec:     "spec:\n  replcas: 2\n",
		warnings: []api.Problem{unknown("spec.replcas")},
	}, {
		name: "a value of the wrong type",
		spec: "spec:\n  replicas: two\n",
		warnings: []api.Problem{{Object: db, File: "apps.yaml", Field: "spec.replicas",
			Message: `Invalid value: "string": spec.replicas in body must be of type integer: "string" (the openAPISchema of ApplicationDefinition postgres); the chart would get it as written and may fail at install, on the cluster`}},
	}, {
		name:     "a misspelled field inside a map's entry",
		spec:     "spec:\n  users: {alice: {passwrd: x}}\n",
		warnings: []api.Problem{unknown("spec.users.alice.passwrd")},
	}, {
		name:     "Refuse: errors",
		mode:     api.AppValuesRefuse,
		spec:     "spec:\n  replcas: 2\n  size: 10\n",
		problems: []api.Problem{unknown("spec.replcas"), {Object: db, File: "apps.yaml", Field: "spec.size", Message: `Invalid value: "integer": spec.size in body must be of type string: "integer" (the openAPISchema of ApplicationDefinition postgres); the chart would get it as written and may fail at install, on the cluster`}},
	}, {
		name: "Ignore: nothing is checked",
		mode: api.AppValuesIgnore,
		spec: "spec:\n  replcas: 2\n",
	}, {
		name:   "a schema that says nothing ({}) knows every field",
		schema: "{}",
		spec:   "spec:\n  replcas: 2\n",
	}, {
		name: "an app without a spec",
	}, {
		name:   "a definition whose schema is no JSON: its apps are not checked, and it says so",
		mode:   api.AppValuesRefuse,
		schema: "{not json",
		spec:   "spec:\n  replcas: 2\n",
		warnings: []api.Problem{{Object: api.ObjectRef{Kind: "ApplicationDefinition", Name: "postgres"}, File: "apps.yaml", Field: "spec.application.openAPISchema",
			Message: "the spec of Postgres apps is not checked against it (spec.apps.values): not a JSON object: invalid character 'n' looking for beginning of object key string"}},
	}} {
		for _, appFirst := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/app read first %v", tc.name, appFirst), func(t *testing.T) {
				schema := tc.schema
				if schema == "" {
					schema = postgresSchema
				}
				f, problems := valuesFleet(t, appFirst, tc.mode, schema, tc.spec)
				if diff := cmp.Diff(api.Problems(tc.problems), problems, cmpProblems); diff != "" {
					t.Fatalf("problems (-want +got):\n%s", diff)
				}
				if f == nil {
					return
				}
				if diff := cmp.Diff(api.Problems(tc.warnings), f.Warnings(), cmpProblems); diff != "" {
					t.Errorf("warnings (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// cmpProblems compares problems by what they say, nil and empty alike.
var cmpProblems = cmp.Transformer("lines", func(ps api.Problems) string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
})
