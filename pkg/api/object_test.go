package api_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
)

// TestDecodersQuoteTheYAML: an object is checked as Go values read once
// from its YAML, and a scalar keeps its tag and its text as written, so
// that a value of the wrong type is named as the user wrote it, and an
// unquoted date or a !!binary, which a plain Go value would hold as a
// string, is still no string. Null and absent differ where the decoders
// say so.
func TestDecodersQuoteTheYAML(t *testing.T) {
	const tenant = "apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\n"
	const definition = "apiVersion: cozystack.io/v1alpha1\nkind: ApplicationDefinition\nmetadata: {name: pg}\n"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"a number as written", tenant + "metadata: {name: acme, namespace: 0x10}\n",
			[]string{"metadata.namespace: must be a string, not the number 0x10"}},
		{"an unquoted date", tenant + "metadata: {name: acme, namespace: tenant-root, labels: {since: 2001-12-14}}\n",
			[]string{`metadata.labels.since: must be a string, not !!timestamp "2001-12-14"`}},
		{"a !!binary", tenant + "metadata: {name: acme, namespace: tenant-root, annotations: {a: !!binary aGVsbG8=}}\n",
			[]string{`metadata.annotations.a: must be a string, not !!binary "aGVsbG8="`}},
		{"a boolean as YAML 1.2 spells it", tenant + "metadata: {name: acme, namespace: tenant-root}\nspec: {computeplane: True}\n", nil},
		{"a boolean as YAML 1.1 spells it", tenant + "metadata: {name: acme, namespace: tenant-root}\nspec: {computeplane: yes}\n",
			[]string{`spec.computeplane: must be true or false, not the string "yes"`}},
		{"an alias", tenant + "metadata: {name: acme, namespace: tenant-root}\nx: &t true\nspec: {computeplane: *t}\n",
			[]string{"x: unknown field; known fields here: apiVersion, kind, metadata, spec, status"}},
		{"null metadata", tenant + "metadata: null\n", []string{"metadata: is required"}},
		{"metadata a list", tenant + "metadata: []\n", []string{"metadata: must be a map, not a list"}},
		{"a null prefix is no prefix", definition + "spec: {application: {kind: Pg}, release: {prefix: null, chartRef: {kind: ExternalArtifact, name: pg}}}\n", nil},
		{"an absent prefix", definition + "spec: {application: {kind: Pg}, release: {chartRef: {kind: ExternalArtifact, name: pg}}}\n",
			[]string{`spec.release.prefix: is required (use "" for no prefix)`}},
		{"health checks", definition + "spec: {application: {kind: Pg}, release: {prefix: '', chartRef: {kind: ExternalArtifact, name: pg}, healthCheckExprs: [null, {kind: X, current: ''}, 5]}}\n",
			[]string{"spec.release.healthCheckExprs[1].apiVersion: is required", "spec.release.healthCheckExprs[1].current: must not be empty", "spec.release.healthCheckExprs[2]: must be a map, not the number 5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, problems := input.Decode([]byte(tc.doc), "x.yaml")
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			if objs[0].Kind == api.TenantKind {
				_, problems = api.DecodeTenant(objs[0])
			} else {
				_, problems = api.DecodeDefinition(objs[0])
			}
			var got []string
			for _, p := range problems.Compact() { // as model.Build reports them
				got = append(got, p.Field+": "+p.Message)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("problems (-want +got):\n%s", d)
			}
		})
	}
}

// TestNewObjectGenerated: NewObject recognises output of an earlier run by
// its managed-by label, a string, read with the identity.
func TestNewObjectGenerated(t *testing.T) {
	for doc, want := range map[string]bool{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {app.kubernetes.io/managed-by: computeplane-fn}}\n":   true,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {app.kubernetes.io/managed-by: kustomize}}\n":         false,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {app.kubernetes.io/managed-by: [computeplane-fn]}}\n": false,
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n":                                                            false,
	} {
		objs, problems := input.Decode([]byte(doc), "x.yaml")
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		if objs[0].Generated != want {
			t.Errorf("%q: Generated %v, want %v", doc, objs[0].Generated, want)
		}
	}
}
