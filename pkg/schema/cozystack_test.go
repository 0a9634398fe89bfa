package schema_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/schema"
)

// TestCozystackKubernetesValues validates values of Cozystack's kubernetes
// application against the chart's real values schema, which is also the
// openAPIV3Schema its ApplicationDefinition serves.
func TestCozystackKubernetesValues(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(crdtest.SharedDir(t), "cozystack", "kubernetes.values.schema.json"))
	if err != nil {
		t.Fatalf("failed to read schema: %v", err)
	}
	s, err := schema.Compile(raw)
	if err != nil {
		t.Fatalf("Compile() error = %v", err)
	}

	tests := []struct {
		name  string
		value string
		want  []schema.Violation
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
		want: []schema.Violation{
			{Path: "addons.certManager.enabled", Message: `must be of type boolean: "string"`},
			{Path: "nodeGroups.md0.colour", Message: "unknown field"},
			{Path: "nodeGroups.md0.diskSize", Message: `should match '^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$'`},
			{Path: "nodeGroups.md0.maxReplicas", Message: `must be of type integer: "string"`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Validate(fromYAML(t, tt.value))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("CEL rules are listed, not evaluated", func(t *testing.T) {
		got := s.SkippedRules(fromYAML(t, `storageClass: replicated`))
		want := []schema.Rule{{Path: "storageClass", Rule: "self == oldSelf", Message: "storageClass is immutable"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("SkippedRules() mismatch (-want +got):\n%s", diff)
		}
	})
}
