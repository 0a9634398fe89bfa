package model_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

// TestAddonsInExemptNamespacesAreOperatorOnly: under a knob schema that
// lets a tenant set anything, the enabled and valuesOverride of every addon
// whose namespaces the rendered AdmissionConfiguration exempts are refused
// with their path and why; those of the other addons pass. Which addons
// that is follows the level and the operator's addons.
func TestAddonsInExemptNamespacesAreOperatorOnly(t *testing.T) {
	monitoring := api.DefaultClusterValues()
	monitoring["addons"].(map[string]any)["monitoringAgents"] = map[string]any{"enabled": true}
	tests := []struct {
		name   string
		level  string
		fixed  map[string]any
		knobs  string
		refuse string // the field, or "" when the knobs pass
	}{
		{"cilium host paths", api.PodSecurityRestricted, nil, "addons: {cilium: {valuesOverride: {cilium: {extraHostPathMounts: [{name: root, hostPath: /, mountPath: /host}]}}}}", "spec.addons.cilium.valuesOverride"},
		{"privileged coredns", api.PodSecurityRestricted, nil, "addons: {coredns: {valuesOverride: {coredns: {securityContext: {privileged: true}}}}}", "spec.addons.coredns.valuesOverride"},
		{"ingress-nginx on the host network", api.PodSecurityRestricted, nil, "addons: {ingressNginx: {valuesOverride: {ingress-nginx: {controller: {hostNetwork: true}}}}}", "spec.addons.ingressNginx.valuesOverride"},
		{"gateway API reaches cilium and kube-system", api.PodSecurityRestricted, nil, "addons: {gatewayAPI: {enabled: true}}", "spec.addons.gatewayAPI.enabled"},
		{"coredns switched off", api.PodSecurityRestricted, nil, "addons: {coredns: {enabled: false}}", "spec.addons.coredns.enabled"},
		{"an addon set whole to a scalar", api.PodSecurityRestricted, nil, "addons: {cilium: on}", "spec.addons.cilium"},
		{"cilium under baseline: still exempt", api.PodSecurityBaseline, nil, "addons: {cilium: {valuesOverride: {cilium: {hostNetwork: true}}}}", "spec.addons.cilium.valuesOverride"},
		{"ingress-nginx under baseline: not exempt", api.PodSecurityBaseline, nil, "addons: {ingressNginx: {valuesOverride: {ingress-nginx: {controller: {replicaCount: 3}}}}}", ""},
		{"velero, off in the operator's values: no exemption", api.PodSecurityRestricted, nil, "addons: {velero: {enabled: true, valuesOverride: {velero: {deployNodeAgent: true}}}}", ""},
		{"gpu operator, off in the operator's values: no exemption", api.PodSecurityRestricted, nil, "addons: {gpuOperator: {enabled: true}}", ""},
		{"monitoring agents the operator turned on", api.PodSecurityRestricted, monitoring, "addons: {monitoringAgents: {valuesOverride: {fluent-bit: {hostNetwork: true}}}}", "spec.addons.monitoringAgents.valuesOverride"},
		{"privileged: nothing to bypass", api.PodSecurityPrivileged, nil, "addons: {cilium: {valuesOverride: {cilium: {hostNetwork: true}}}}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fixed := tt.fixed
			if fixed == nil {
				fixed = api.DefaultClusterValues()
			}
			cfg := config(tt.level, fixed)
			cfg.Cluster.Knobs = values(t, permissiveKnobs)
			merged, problems := checked(plan(t, cfg), knobsOf(values(t, tt.knobs)))
			if tt.refuse == "" {
				if len(problems) > 0 {
					t.Fatalf("refused: %v", problems)
				}
				if merged == nil {
					t.Fatal("no values")
				}
				return
			}
			if len(problems) != 1 {
				t.Fatalf("problems = %v; want one at %s", problems, tt.refuse)
			}
			p := problems[0]
			if p.Field != tt.refuse || p.File != "knobs.yaml" || p.Object.Kind != api.KnobsKind ||
				!strings.Contains(p.Message, "operator-only") || !strings.Contains(p.Message, "exempt from this cluster") {
				t.Errorf("problem = %+v; want one at %s saying it is operator-only because the namespace is exempt", p, tt.refuse)
			}
		})
	}
}

// TestOperatorOnlyPaths: under a knob schema that lets a tenant set
// anything, every path that runs code or claims a name outside the
// ComputePlane is refused at the operator-only path, at every Pod Security
// level; the settings beside them pass.
func TestOperatorOnlyPaths(t *testing.T) {
	tests := []struct {
		name   string
		knobs  string
		refuse []string
	}{
		{"an image of the bootstrap Job", "images: {kubectl: evil.example/kubectl:1}", []string{"spec.images"}},
		{"images whole", "images: {}", []string{"spec.images"}},
		{"the Talos image factory", "talos: {imageFactoryURL: http://10.0.0.1}", []string{"spec.talos"}},
		{"Talos registry mirrors", "talos: {registryMirrors: {ghcr.io: {endpoints: [http://evil]}}}", []string{"spec.talos"}},
		{"the Talos version and schematic", "talos: {version: v1.10.0, schematicID: abc}", []string{"spec.talos"}},
		{"another tenant's host on the shared ingress", "addons: {ingressNginx: {hosts: [shop.other-tenant.example]}}", []string{"spec.addons.ingressNginx.hosts"}},
		{"hosts of any addon", "addons: {gatewayAPI: {hosts: [a.example]}, velero: {hosts: []}}", []string{"spec.addons.gatewayAPI.hosts", "spec.addons.velero.hosts"}},
		{"the control plane's host name", "host: api.platform.example", []string{"spec.host"}},
		{"OIDC users made admin", "oidc: {mode: System, users: [{email: me@example.com, role: admin}]}", []string{"spec.oidc"}},
		{"an OIDC Secret mounted into the control plane", "oidc: {customConfig: {secretRef: {name: computeplane-admin-kubeconfig}}}", []string{"spec.oidc"}},
		{"an API server flag, with podSecurity privileged", "controlPlane: {apiServer: {extraArgs: [--authorization-mode=AlwaysAllow]}}", []string{"spec.controlPlane.apiServer.extraArgs"}},
		{"a host path in the control-plane pod", "controlPlane: {apiServer: {extraVolumes: [{name: root, hostPath: {path: /}}], extraVolumeMounts: [{name: root, mountPath: /host}]}}",
			[]string{"spec.controlPlane.apiServer.extraVolumeMounts", "spec.controlPlane.apiServer.extraVolumes"}},
		{"an addon set to a scalar sets no hosts", "addons: {velero: on}", nil},
		{"what stays the schema's", "version: v1.34\nstorageClass: replicated\ncontrolPlane: {replicas: 3, apiServer: {resourcesPreset: large}}\nnodeHealthCheck: {maxUnhealthy: 40%}\naddons: {velero: {enabled: true}}", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// privileged: no Pod Security wiring fixes controlPlane.apiServer,
			// and no addon is operator-only for its exemptions.
			cfg := config(api.PodSecurityPrivileged, api.DefaultClusterValues())
			cfg.Cluster.Knobs = values(t, permissiveKnobs)
			_, problems := checked(plan(t, cfg), knobsOf(values(t, strings.ReplaceAll(tt.knobs, "\\n", "\n"))))
			var got []string
			for _, p := range problems {
				if !strings.Contains(p.Message, "operator-only whatever the knob schema") || p.File != "knobs.yaml" {
					t.Errorf("problem = %+v; want one saying it is operator-only", p)
				}
				got = append(got, p.Field)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.refuse) {
				t.Errorf("refused %v, want %v", got, tt.refuse)
			}
		})
	}
}

// TestOperatorOnlyAddonsFollowTheExemptions: every addon reaching an exempt
// namespace is operator-only, and no other, for every level and with every
// addon the operator can turn on.
func TestOperatorOnlyAddonsFollowTheExemptions(t *testing.T) {
	all := values(t, `
addons:
  certManager: {enabled: true}
  ingressNginx: {enabled: true, exposeMethod: Proxied}
  monitoringAgents: {enabled: true}
  gpuOperator: {enabled: true}
  hami: {enabled: true}
  velero: {enabled: true}
  ouroboros: {enabled: true, valuesOverride: {ouroboros: {etcHosts: {enabled: true}}}}
`)
	for _, level := range []string{api.PodSecurityRestricted, api.PodSecurityBaseline} {
		for _, fixed := range []map[string]any{api.DefaultClusterValues(), all} {
			a, err := model.NewAdmission(level, fixed)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, o := range model.OperatorOnlyAddons(a) {
				got[o.Addon] = true
			}
			for addon, reach := range model.AddonReach() {
				want := slices.ContainsFunc(reach, func(ns string) bool { return slices.Contains(a.Namespaces(), ns) })
				if got[addon] != want {
					t.Errorf("%s, exempt %v: %s operator-only = %t, want %t (it reaches %v)", level, a.Namespaces(), addon, got[addon], want, reach)
				}
			}
		}
	}
}

// TestSecurityDocsListTheAddonsReach keeps docs/security.md's table of what each
// addon's settings reach in step with the code.
func TestSecurityDocsListTheAddonsReach(t *testing.T) {
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	reach := model.AddonReach()
	for _, addon := range slices.Sorted(maps.Keys(reach)) {
		row := regexp.MustCompile("(?m)^\\| `addons\\." + addon + "` \\| ([^|]*) \\|").FindSubmatch(doc)
		if row == nil {
			t.Errorf("docs/security.md has no row for addons.%s", addon)
			continue
		}
		var got []string
		for _, m := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllSubmatch(row[1], -1) {
			got = append(got, string(m[1]))
		}
		if !slices.Equal(got, reach[addon]) {
			t.Errorf("docs/security.md says addons.%s reaches %v; the code says %v", addon, got, reach[addon])
		}
	}
}

// TestDocsListTheOperatorOnlyPaths keeps docs/security.md's table of
// operator-only knob paths in step with the code: one row per path, and no
// other.
func TestDocsListTheOperatorOnlyPaths(t *testing.T) {
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Operator-only knob paths\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var got []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(section, -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, p := range model.OperatorOnlyPaths() {
		want = append(want, strings.Join(p.Path, "."))
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/security.md's operator-only paths are %v; the code's %v", got, want)
	}
}
