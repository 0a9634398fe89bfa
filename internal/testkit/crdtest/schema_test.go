package crdtest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
)

// TestCozystackKubernetesValues validates values of Cozystack's kubernetes
// application against the chart's real values schema, which is also the
// schema of the spec its ApplicationDefinition serves.
func TestCozystackKubernetesValues(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(crdtest.SharedDir(t), "cozystack", "kubernetes.values.schema.json"))
	if err != nil {
		t.Fatalf("failed to read schema: %v", err)
	}
	s, err := crdtest.CompileSpec(raw)
	if err != nil {
		t.Fatalf("CompileSpec() error = %v", err)
	}

	tests := []struct {
		name  string
		value string
		want  []crdtest.Violation
	}{{
		name: "plausible values, defaults left out",
		value: `
version: v1.35
storageClass: replicated
host: tenant-a.example.com
addons:
  certManager:
    enabled: true
  ingressNginx:
    enabled: true
    exposeMethod: Proxied
    hosts: [app.tenant-a.example.com]
    valuesOverride:
      ingress-nginx:
        controller: {replicaCount: 2}
nodeGroups:
  md0:
    minReplicas: 1
    maxReplicas: 5
    instanceType: u1.large
    diskSize: 50Gi
    roles: [ingress-nginx]
    resources: {cpu: 2, memory: 4Gi}
controlPlane:
  replicas: 3
  apiServer:
    resourcesPreset: large
`,
	}, {
		name: "wrong types and an unknown field",
		value: `
addons:
  certManager:
    enabled: "yes"
nodeGroups:
  md0:
    minReplicas: 1
    maxReplicas: ten
    instanceType: u1.large
    diskSize: 50GB
    roles: [ingress-nginx]
    colour: blue
`,
		want: []crdtest.Violation{
			{Message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{Path: "spec.addons.certManager.enabled", Message: `Invalid value: "string": spec.addons.certManager.enabled in body must be of type boolean: "string"`},
			{Path: "spec.nodeGroups.md0.colour", Message: "unknown field"},
			{Path: "spec.nodeGroups.md0.diskSize", Message: `Invalid value: "50GB": spec.nodeGroups.md0.diskSize in body should match '^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$'`},
			{Path: "spec.nodeGroups.md0.maxReplicas", Message: `Invalid value: "string": spec.nodeGroups.md0.maxReplicas in body must be of type integer: "string"`},
		},
	}, {
		// storageClass has the transition rule self == oldSelf: on a
		// create there is no old object, so the API server does not run it.
		name:  "a transition rule is not evaluated on a create",
		value: `storageClass: anything`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Validate(map[string]any{"spec": fromYAML(t, tt.value)})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileSpecRefuses(t *testing.T) {
	for name, schema := range map[string]string{
		"not structural: a field without a type": `{type: object, properties: {a: {description: untyped}}}`,
		"not YAML":                               `{type: [`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := crdtest.CompileSpec([]byte(schema)); err == nil {
				t.Error("CompileSpec() succeeded")
			} else {
				t.Log(err)
			}
		})
	}
}

// TestCompileSpecBadRule: a rule that does not compile is reported when a
// value is validated, at the rule's path.
func TestCompileSpecBadRule(t *testing.T) {
	s, err := crdtest.CompileSpec([]byte(`{type: object, properties: {a: {type: string}}, x-kubernetes-validations: [{rule: "self.a +"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := s.Validate(map[string]any{"spec": map[string]any{"a": "x"}})
	if len(got) != 1 || got[0].Path != "spec" || !strings.Contains(got[0].Message, "compilation failed") {
		t.Errorf("Validate() = %v, want the compilation error at spec", got)
	}
}

func fromYAML(t *testing.T, text string) any {
	t.Helper()
	return object(t, text)
}
