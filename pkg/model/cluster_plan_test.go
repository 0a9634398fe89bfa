package model_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

// permissiveKnobs lets a tenant set anything, so that only the fixed paths
// stand between a tenant and the operator's posture.
const permissiveKnobs = "type: object\nx-kubernetes-preserve-unknown-fields: true\n"

func knobsOf(values map[string]any) *api.Knobs {
	return &api.Knobs{
		Ref:       api.ObjectRef{APIVersion: api.AppsAPIVersion, Kind: api.KnobsKind, Namespace: "tenant-acme", Name: api.KnobsName},
		Origin:    api.Origin{File: "knobs.yaml"},
		Namespace: "tenant-acme",
		Values:    values,
	}
}

// checked is what the check stage and then the render make of knobs: their
// problems, or else the cluster's merged values.
func checked(p *model.ClusterPlan, k *api.Knobs) (map[string]any, api.Problems) {
	if problems := p.Check(k); len(problems) > 0 {
		return nil, problems
	}
	return p.Values(k), nil
}

func plan(t *testing.T, cfg *api.Config) *model.ClusterPlan {
	t.Helper()
	p, problems := model.NewClusterPlan(cfg)
	if len(problems) > 0 {
		t.Fatalf("New() = %v", problems)
	}
	return p
}

// TestMergedValuesMatchChartSchema merges several knob sets over several
// operator postures and validates the result against the values schema of
// apps/kubernetes, the one the chart (and cozystack-api) enforces, CEL rules
// included.
func TestMergedValuesMatchChartSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(crdtest.SharedDir(t), "cozystack", "kubernetes.values.schema.json"))
	if err != nil {
		t.Fatalf("failed to read the chart's values schema: %v", err)
	}
	chart, err := crdtest.CompileSpec(raw)
	if err != nil {
		t.Fatal(err)
	}
	postures := map[string]*api.Config{
		"defaults, restricted": config(api.PodSecurityRestricted, api.DefaultClusterValues()),
		"defaults, baseline":   config(api.PodSecurityBaseline, api.DefaultClusterValues()),
		"defaults, privileged": config(api.PodSecurityPrivileged, api.DefaultClusterValues()),
		"every addon, operator flags": config(api.PodSecurityRestricted, values(t, `
addons:
  certManager: {enabled: true}
  ingressNginx: {enabled: true, exposeMethod: Proxied, hosts: [apps.acme.example.com]}
  monitoringAgents: {enabled: true}
  gpuOperator: {enabled: true}
  velero: {enabled: true}
  ouroboros: {enabled: true, valuesOverride: {ouroboros: {etcHosts: {enabled: true}}}}
controlPlane:
  replicas: 3
  apiServer:
    resourcesPreset: large
    extraArgs: [--requestheader-uid-headers=X-Remote-Uid]
    extraVolumes: [{name: oidc-ca, configMap: {name: oidc-ca}}]
    extraVolumeMounts: [{name: oidc-ca, mountPath: /etc/oidc, readOnly: true}]
`)),
	}
	knobSets := map[string]string{
		"none":      "",
		"one group": `nodeGroups: {md0: {minReplicas: 1, maxReplicas: 5, instanceType: u1.large, diskSize: 50Gi, roles: [ingress-nginx]}}`,
		"three groups, every field": `
nodeGroups:
  ingress: {minReplicas: 1, maxReplicas: 2, instanceType: u1.medium, diskSize: 20Gi, roles: [ingress-nginx]}
  gpu:
    minReplicas: 0
    maxReplicas: 4
    instanceType: u1.xlarge
    diskSize: 100Gi
    gpus: [{name: nvidia.com/AD102GL_L40S}]
    kubelet: {evictionHardMemory: 5%, kubeReservedCpu: 200m}
    storageClass: replicated
  sized:
    minReplicas: 0
    maxReplicas: 3
    instanceType: ""
    diskSize: 30Gi
    resources: {cpu: 4, memory: 16Gi}
`,
		"empty groups (the chart's default md0)": `nodeGroups: {}`,
	}
	for pname, cfg := range postures {
		p := plan(t, cfg)
		for kname, knobs := range knobSets {
			t.Run(pname+"/"+kname, func(t *testing.T) {
				merged, problems := checked(p, knobsOf(values(t, knobs)))
				if len(problems) > 0 {
					t.Fatalf("refused: %v", problems)
				}
				for _, v := range chart.Validate(map[string]any{"spec": merged}) {
					t.Errorf("merged values break the chart schema: %s", v)
				}
			})
		}
	}
}

// TestTamperRefused tries to set, through a permissive knob schema, every
// kind of path the operator fixed: each is refused with its path, and the
// values of a refused tenant are never produced.
func TestTamperRefused(t *testing.T) {
	cfg := config(api.PodSecurityRestricted, values(t, `
addons:
  certManager: {enabled: true}
  ingressNginx: {enabled: true, exposeMethod: Proxied, valuesOverride: {ingress-nginx: {controller: {replicaCount: 2}}}}
nodeGroups:
  md0: {minReplicas: 1, maxReplicas: 3, instanceType: u1.large, diskSize: 50Gi, roles: [ingress-nginx]}
`))
	cfg.Cluster.Knobs = values(t, permissiveKnobs)
	p := plan(t, cfg)

	tests := []struct{ knobs, field string }{
		{"addons: {certManager: {enabled: false}}", "spec.addons.certManager.enabled"},
		{"addons: {ingressNginx: {enabled: false}}", "spec.addons.ingressNginx.enabled"},
		{"addons: {ingressNginx: {exposeMethod: LoadBalancer}}", "spec.addons.ingressNginx.exposeMethod"},
		{"addons: {ingressNginx: {enabled: true}}", "spec.addons.ingressNginx.enabled"},
		{"addons: {ingressNginx: {}}", "spec.addons.ingressNginx"},
		{"addons: {ingressNginx: null}", "spec.addons.ingressNginx"},
		{"addons: {}", "spec.addons"},
		{"addons: null", "spec.addons"},
		{"addons: off", "spec.addons"},
		{"addons: [certManager]", "spec.addons"},
		{"addons: {ingressNginx: {valuesOverride: {ingress-nginx: {controller: {hostNetwork: true}}}}}", "spec.addons.ingressNginx.valuesOverride"},
		{"addons: {certManager: {enabled: {really: false}}}", "spec.addons.certManager.enabled"},
		{"addons: {ingressNginx: {valuesOverride: {}}}", "spec.addons.ingressNginx.valuesOverride"},
		{"controlPlane: {apiServer: {extraArgs: [--enable-admission-plugins=AlwaysAdmit]}}", "spec.controlPlane.apiServer.extraArgs"},
		{"controlPlane: {apiServer: {extraArgs: []}}", "spec.controlPlane.apiServer.extraArgs"},
		{"controlPlane: {apiServer: {extraArgs: {\"0\": --admission-control-config-file=/dev/null}}}", "spec.controlPlane.apiServer.extraArgs"},
		{"controlPlane: {apiServer: {extraArgs: null}}", "spec.controlPlane.apiServer.extraArgs"},
		{"controlPlane: {apiServer: {extraVolumes: [{name: computeplane-admission, configMap: {name: mine}}]}}", "spec.controlPlane.apiServer.extraVolumes"},
		{"controlPlane: {apiServer: {extraVolumeMounts: []}}", "spec.controlPlane.apiServer.extraVolumeMounts"},
		{"controlPlane: {apiServer: {}}", "spec.controlPlane.apiServer"},
		{"controlPlane: {apiServer: null}", "spec.controlPlane.apiServer"},
		{"controlPlane: {}", "spec.controlPlane"},
		{"controlPlane: null", "spec.controlPlane"},
		{"controlPlane: 1", "spec.controlPlane"},
		{"nodeGroups: {md0: {maxReplicas: 100}}", "spec.nodeGroups"},
		{"nodeGroups: {md1: {minReplicas: 1, maxReplicas: 3, instanceType: u1.large, diskSize: 50Gi}}", "spec.nodeGroups"},
		{"nodeGroups: {}", "spec.nodeGroups"},
		{"nodeGroups: null", "spec.nodeGroups"},
	}
	for _, tt := range tests {
		t.Run(tt.knobs, func(t *testing.T) {
			merged, problems := checked(p, knobsOf(values(t, tt.knobs)))
			if merged != nil {
				t.Errorf("a refused tenant got values: %v", merged)
			}
			if len(problems) == 0 {
				t.Fatal("not refused")
			}
			if len(problems) != 1 {
				t.Errorf("%d problems for one mistake: %v", len(problems), problems)
			}
			got := problems[0]
			if got.Field != tt.field || !strings.Contains(got.Message, "is fixed by the operator") || got.File != "knobs.yaml" || got.Object.Kind != api.KnobsKind {
				t.Errorf("problem = %+v; want one at %s", got, tt.field)
			}
		})
	}

	t.Run("the platform's own values", func(t *testing.T) {
		for knobs, field := range map[string]string{
			"_namespace: {etcd: tenant-other}":    "spec._namespace",
			"_cluster: {root-host: evil.example}": "spec._cluster",
		} {
			merged, problems := checked(p, knobsOf(values(t, knobs)))
			if merged != nil || len(problems) != 1 || problems[0].Field != field || !strings.Contains(problems[0].Message, "reserved") {
				t.Errorf("%s: problems = %v; want one at %s", knobs, problems, field)
			}
		}
	})

	t.Run("paths the operator did not fix stay open to a permissive schema", func(t *testing.T) {
		for _, knobs := range []string{
			"controlPlane: {replicas: 3}",
			"controlPlane: {apiServer: {resourcesPreset: large}}",
			"addons: {velero: {enabled: true}}",
			"version: v1.34",
			"nodeHealthCheck: {maxUnhealthy: 40%}",
		} {
			if _, problems := checked(p, knobsOf(values(t, knobs))); len(problems) > 0 {
				t.Errorf("%s: refused: %v", knobs, problems)
			}
		}
	})
}

// TestDefaultKnobSchemaRefuses checks the default schema: node groups only,
// shaped like the chart's.
func TestDefaultKnobSchemaRefuses(t *testing.T) {
	p := plan(t, config(api.PodSecurityRestricted, api.DefaultClusterValues()))
	tests := []struct{ knobs, field string }{
		{"controlPlane: {replicas: 3}", "spec.controlPlane"},
		{"addons: {velero: {enabled: true}}", "spec.addons"},
		{"nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3, instanceType: u1.large, diskSize: 50Gi, roles: [ingress-nginx], privileged: true}}", "spec.nodeGroups.md0.privileged"},
		{"nodeGroups: {md0: {minReplicas: 1, maxReplicas: 3, instanceType: u1.large, roles: [ingress-nginx]}}", "spec.nodeGroups.md0.diskSize"},
		{"nodeGroups: {md0: {minReplicas: -1, maxReplicas: 3, instanceType: u1.large, diskSize: 50Gi, roles: [ingress-nginx]}}", "spec.nodeGroups.md0.minReplicas"},
	}
	for _, tt := range tests {
		t.Run(tt.knobs, func(t *testing.T) {
			_, problems := checked(p, knobsOf(values(t, tt.knobs)))
			if len(problems) == 0 || problems[0].Field != tt.field {
				t.Errorf("problems = %v; want one at %s", problems, tt.field)
			}
		})
	}
}

// TestIngressNodeGroup: the ingress addon is pinned on, and node groups
// replace the chart's default group, so the given groups must leave the
// controller a node.
func TestIngressNodeGroup(t *testing.T) {
	group := func(roles string, maxReplicas int) string {
		return fmt.Sprintf("{minReplicas: 0, maxReplicas: %d, instanceType: u1.large, diskSize: 50Gi, roles: %s}", maxReplicas, roles)
	}
	ingressOn := config(api.PodSecurityRestricted, api.DefaultClusterValues())
	ingressOff := config(api.PodSecurityRestricted, values(t, "addons: {ingressNginx: {enabled: false}}"))
	tests := []struct {
		name   string
		cfg    *api.Config
		knobs  string
		refuse bool
	}{
		{"no ingress role", ingressOn, "nodeGroups: {md0: " + group("[worker]", 5) + "}", true},
		{"no roles at all", ingressOn, "nodeGroups: {md0: {minReplicas: 1, maxReplicas: 5, instanceType: u1.large, diskSize: 50Gi}}", true},
		{"ingress role that can never have a node", ingressOn, "nodeGroups: {md0: " + group("[ingress-nginx]", 0) + "}", true},
		{"ingress role in one of two groups", ingressOn, "nodeGroups: {md0: " + group("[worker]", 5) + ", md1: " + group("[worker, ingress-nginx]", 1) + "}", false},
		{"no groups: the chart's default md0 has the role", ingressOn, "nodeGroups: {}", false},
		{"no node group knob", ingressOn, "", false},
		{"ingress off: any groups", ingressOff, "nodeGroups: {md0: " + group("[worker]", 5) + "}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, problems := checked(plan(t, tt.cfg), knobsOf(values(t, tt.knobs)))
			if !tt.refuse {
				if len(problems) > 0 {
					t.Errorf("refused: %v", problems)
				}
				return
			}
			if len(problems) != 1 || problems[0].Field != "spec.nodeGroups" || !strings.Contains(problems[0].Message, "roles: [ingress-nginx] with maxReplicas of at least 1") {
				t.Errorf("problems = %v; want one at spec.nodeGroups", problems)
			}
		})
	}

	t.Run("operator-fixed groups without the role are a config error", func(t *testing.T) {
		cfg := config(api.PodSecurityRestricted, values(t, "addons: {ingressNginx: {enabled: true}}\nnodeGroups: {md0: "+group("[worker]", 3)+"}"))
		_, problems := model.NewClusterPlan(cfg)
		if len(problems) != 1 || problems[0].Field != "spec.cluster.values.nodeGroups" || problems[0].Object.Kind != api.ConfigKind {
			t.Errorf("problems = %v; want one at spec.cluster.values.nodeGroups of the config", problems)
		}
	})

	t.Run("a tenant switching ingress on without a node for it", func(t *testing.T) {
		cfg := config(api.PodSecurityRestricted, values(t, "nodeGroups: {md0: "+group("[worker]", 3)+"}"))
		cfg.Cluster.Knobs = values(t, permissiveKnobs)
		_, problems := checked(plan(t, cfg), knobsOf(values(t, "addons: {ingressNginx: {enabled: true}}")))
		if len(problems) != 1 || problems[0].Field != "spec.addons.ingressNginx.enabled" {
			t.Errorf("problems = %v; want one at spec.addons.ingressNginx.enabled", problems)
		}
	})
}

// TestKnobSchemaRefused: a knob schema the function cannot enforce as the
// API server would is a config error at spec.cluster.knobs.
func TestKnobSchemaRefused(t *testing.T) {
	for schema, want := range map[string]string{
		"{type: object, properties: {storageClass: {}}}":                                                                 "properties[storageClass].type: Required value",
		"{type: object, properties: {nodeGroups: {type: object, x-kubernetes-validations: [{rule: 'size(self) < 3'}]}}}": "CEL rules are not evaluated",
		"{type: object, patternProperties: {'^a': {type: string}}}":                                                      "'patternProperties' is not supported",
	} {
		cfg := config(api.PodSecurityRestricted, api.DefaultClusterValues())
		cfg.Cluster.Knobs = values(t, schema)
		_, problems := model.NewClusterPlan(cfg)
		if len(problems) != 1 || problems[0].Field != "spec.cluster.knobs" || problems[0].Object.Kind != api.ConfigKind || !strings.Contains(problems[0].Message, want) {
			t.Errorf("%s: problems = %v; want one at spec.cluster.knobs saying %q", schema, problems, want)
		}
	}
}
