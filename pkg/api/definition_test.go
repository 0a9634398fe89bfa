package api_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
)

// TestDefinitionFieldsAreTheCRDs: the fields DecodeDefinition accepts are
// the CRD's, at every level it checks, plus spec.placement.
func TestDefinitionFieldsAreTheCRDs(t *testing.T) {
	// The CRD of ApplicationDefinition that Cozystack installs.
	definitionCRD := filepath.Join(crdtest.SharedDir(t), "crds", "applicationdefinitions.cozystack.io.yaml")
	data, err := os.ReadFile(definitionCRD)
	if err != nil {
		t.Fatal(err)
	}
	type schema struct {
		Properties map[string]schema `json:"properties"`
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema schema `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != "v1alpha1" {
			continue
		}
		for path, got := range api.DefinitionFields {
			s := v.Schema.OpenAPIV3Schema
			for _, key := range strings.Split(path, ".") {
				s = s.Properties[key]
			}
			var want []string
			for k := range s.Properties {
				want = append(want, k)
			}
			if path == "spec" {
				want = append(want, "placement")
			}
			slices.Sort(want)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: the CRD's fields (-) against DefinitionFields (+):\n%s", path, d)
			}
		}
		return
	}
	t.Fatalf("%s has no version v1alpha1", definitionCRD)
}

// TestDefinitionUnknownFields: a key the CRD does not have is refused with
// its path, first among the definition's problems.
func TestDefinitionUnknownFields(t *testing.T) {
	const base = "apiVersion: cozystack.io/v1alpha1\nkind: ApplicationDefinition\nmetadata: {name: jupyterhub}\n"
	for _, tc := range []struct{ spec, field string }{
		{"{placment: ComputePlane, application: {kind: JupyterHub}, release: {prefix: j-, chartRef: {kind: ExternalArtifact, name: j}}}", "spec.placment"},
		{"{application: {kind: JupyterHub, plurall: x}, release: {prefix: j-, chartRef: {kind: ExternalArtifact, name: j}}}", "spec.application.plurall"},
		{"{application: {kind: JupyterHub}, release: {prefix: j-, chart: x, chartRef: {kind: ExternalArtifact, name: j}}}", "spec.release.chart"},
		{"{application: {kind: JupyterHub}, release: {prefix: j-, chartRef: {kind: ExternalArtifact, name: j, namepsace: x}}}", "spec.release.chartRef.namepsace"},
	} {
		objs, err := input.Decode([]byte(base+"spec: "+tc.spec+"\n"), "defs.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, problems := api.DecodeDefinition(objs[0])
		if len(problems) == 0 || problems[0].Field != tc.field || !strings.Contains(problems[0].Message, "unknown field") {
			t.Errorf("%s: %v, want first an unknown field at %s", tc.spec, problems, tc.field)
		}
	}
	objs, err := input.Decode([]byte(base+"spec: {placement: ComputePlane, application: {kind: JupyterHub, plural: jupyterhubs, singular: jupyterhub, openAPISchema: '{}'}, dashboard: {category: x}, secrets: {include: []}, services: {exclude: []}, ingresses: {include: []}, release: {prefix: j-, labels: {a: b}, waitStrategy: poller, healthCheckExprs: [], chartRef: {apiVersion: v1, kind: ExternalArtifact, name: j, namespace: cozy-system}}}\n"), "defs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, problems := api.DecodeDefinition(objs[0]); len(problems) > 0 {
		t.Errorf("every field of the CRD: %v", problems)
	}
}

// TestTenantFieldsAreCozystacks: the fields of a Tenant's spec are those of
// Cozystack's tenant definition's schema, and a typo among them, or at the
// top level, is refused first.
func TestTenantFieldsAreCozystacks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(crdtest.SharedDir(t), "cozystack", "applicationdefinitions", "tenant.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Spec struct {
			Application struct {
				OpenAPISchema string `json:"openAPISchema"`
			} `json:"application"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(data, &def); err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]any `json:"properties"`
	}
	if err := yaml.Unmarshal([]byte(def.Spec.Application.OpenAPISchema), &schema); err != nil {
		t.Fatal(err)
	}
	var want []string
	for k := range schema.Properties {
		want = append(want, k)
	}
	slices.Sort(want)
	if d := cmp.Diff(want, api.TenantSpecFields); d != "" {
		t.Errorf("the tenant definition's fields (-) against TenantSpecFields (+):\n%s", d)
	}
	for _, tc := range []struct{ doc, field string }{
		{"metadata: {name: acme, namespace: tenant-root}\nspec: {computeplan: true}\n", "spec.computeplan"},
		{"metadata: {name: acme, namespace: tenant-root}\nspecs: {computeplane: true}\n", "specs"},
		{"metadata: {name: acme, namespace: tenant-root}\nspec: {computeplan: true, computeplane: \"yes\"}\n", "spec.computeplan"},
	} {
		objs, err := input.Decode([]byte("apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\n"+tc.doc), "tenants.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, problems := api.DecodeTenant(objs[0])
		if len(problems) == 0 || problems[0].Field != tc.field || !strings.Contains(problems[0].Message, "unknown field") {
			t.Errorf("%s: %v, want first an unknown field at %s", tc.doc, problems, tc.field)
		}
	}
}
