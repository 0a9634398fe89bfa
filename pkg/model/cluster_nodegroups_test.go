package model_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

// TestNodeRoles: every role of a node group must make
// node-role.kubernetes.io/<role> a valid label key, in a tenant's knobs
// (under the default schema, which types roles as strings, and under a
// permissive one) and in the operator's values.
func TestNodeRoles(t *testing.T) {
	tests := []struct {
		name   string
		roles  string
		refuse []string // indexes of the roles refused
	}{
		{"the ingress role and others", `[ingress-nginx, gpu, worker_1, a.b]`, nil},
		{"63 characters", "[" + strings.Repeat("a", 63) + "]", nil},
		{"64 characters", "[" + strings.Repeat("a", 64) + "]", []string{"[0]"}},
		{"YAML that adds a label", `[ingress-nginx, "x: \"\"\n        kamaji.clastix.io/name: other"]`, []string{"[1]"}},
		{"a slash", `[a/b]`, []string{"[0]"}},
		{"a space", `["a b"]`, []string{"[0]"}},
		{"empty", `[""]`, []string{"[0]"}},
		{"a leading dash", `[-a]`, []string{"[0]"}},
		{"a template", `["{{ .Release.Name }}"]`, []string{"[0]"}},
		{"a plain =", `["="]`, []string{"[0]"}},
	}
	for _, schema := range []string{"default", "permissive"} {
		for _, tt := range tests {
			t.Run(schema+"/"+tt.name, func(t *testing.T) {
				problems := knobProblems(t, schema, "nodeGroups: {md0: {minReplicas: 1, maxReplicas: 2, instanceType: u1.large, diskSize: 20Gi, roles: "+tt.roles+"}, ingress: {minReplicas: 1, maxReplicas: 1, instanceType: u1.large, diskSize: 20Gi, roles: [ingress-nginx]}}")
				var got []string
				for _, p := range problems {
					if !strings.Contains(p.Message, "label key") && !strings.Contains(p.Message, "line break") {
						t.Errorf("problem = %+v; want one about the label key or the line break", p)
					}
					got = append(got, strings.TrimPrefix(p.Field, "spec.nodeGroups.md0.roles"))
				}
				if !slices.Equal(got, tt.refuse) {
					t.Errorf("refused %v, want %v", got, tt.refuse)
				}
			})
		}
	}
	t.Run("operator values", func(t *testing.T) {
		fixed := api.DefaultClusterValues()
		fixed["nodeGroups"] = map[string]any{"md0": map[string]any{"maxReplicas": 2, "roles": []any{"ingress-nginx", "bad role", 7}}}
		_, problems := model.NewClusterPlan(config(api.PodSecurityRestricted, fixed))
		var got []string
		for _, p := range problems {
			got = append(got, p.Field)
		}
		want := []string{"spec.cluster.values.nodeGroups.md0.roles[1]", "spec.cluster.values.nodeGroups.md0.roles[2]"}
		if !slices.Equal(got, want) {
			t.Errorf("refused %v, want %v", got, want)
		}
	})
}

// TestNodeGroupNames: a node group's name is a DNS label, and the strings
// the chart writes unquoted are names of their kinds; refused with the
// field's path, under the default schema and a permissive one, and one
// problem a field.
func TestNodeGroupNames(t *testing.T) {
	const group = "minReplicas: 1, maxReplicas: 1, diskSize: 20Gi, roles: [ingress-nginx]"
	tests := []struct {
		name   string
		groups string
		refuse []string // fields below spec.nodeGroups
		says   string
	}{
		{"valid names", "{md0: {" + group + ", instanceType: u1.large, storageClass: replicated, gpus: [{name: nvidia.com/AD102GL_L40S}, {name: GA102GL}]}}", nil, ""},
		{"a group name with upper case", "{MD0: {" + group + ", instanceType: u1.large}}", []string{"MD0"}, "DNS label"},
		{"a group name with a dot", "{md.0: {" + group + ", instanceType: u1.large}}", []string{"[md.0]"}, "DNS label"},
		{"a group name of 64 characters", "{" + strings.Repeat("a", 64) + ": {" + group + ", instanceType: u1.large}}", []string{strings.Repeat("a", 64)}, "DNS label"},
		{"a GPU name with a space", "{md0: {" + group + ", instanceType: u1.large, gpus: [{name: 'nvidia.com/a b'}]}}", []string{"md0.gpus[0].name"}, "resource name"},
		{"a GPU name that adds YAML", `{md0: {` + group + `, instanceType: u1.large, gpus: [{name: "x\n                nodeSelector: {node-role.kubernetes.io/control-plane: ''}"}]}}`, []string{"md0.gpus[0].name"}, "line break"},
		{"a GPU name of flow YAML", "{md0: {" + group + ", instanceType: u1.large, gpus: [{name: '{a: b}'}]}}", []string{"md0.gpus[0].name"}, "resource name"},
		{"an instance type with a colon", "{md0: {" + group + ", instanceType: 'u1: large'}}", []string{"md0.instanceType"}, "VirtualMachineClusterInstancetype"},
		{"an instance type in upper case", "{md0: {" + group + ", instanceType: U1.Large}}", []string{"md0.instanceType"}, "VirtualMachineClusterInstancetype"},
		{"a storage class with a comment", "{md0: {" + group + ", instanceType: u1.large, storageClass: 'a #b'}}", []string{"md0.storageClass"}, "StorageClass"},
		{"a storage class with a tab", "{md0: {" + group + ", instanceType: u1.large, storageClass: \"a\\tb\"}}", []string{"md0.storageClass"}, "line break"},
	}
	for _, schema := range []string{"default", "permissive"} {
		for _, tt := range tests {
			t.Run(schema+"/"+tt.name, func(t *testing.T) {
				problems := knobProblems(t, schema, "nodeGroups: "+tt.groups)
				var got []string
				for _, p := range problems {
					if !strings.Contains(p.Message, tt.says) {
						t.Errorf("problem = %+v; want one that says %q", p, tt.says)
					}
					got = append(got, strings.TrimPrefix(strings.TrimPrefix(p.Field, "spec.nodeGroups"), "."))
				}
				if !slices.Equal(got, tt.refuse) {
					t.Errorf("refused %v, want %v", got, tt.refuse)
				}
			})
		}
	}
}

// knobProblems are the problems of a tenant's knobs (YAML) under the
// default knob schema or a permissive one.
func knobProblems(t *testing.T, schema, knobs string) api.Problems {
	t.Helper()
	cfg := config(api.PodSecurityRestricted, api.DefaultClusterValues())
	if schema == "permissive" {
		cfg.Cluster.Knobs = values(t, permissiveKnobs)
	}
	_, problems := checked(plan(t, cfg), knobsOf(values(t, knobs)))
	return problems
}
