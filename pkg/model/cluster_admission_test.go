package model_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

func values(t *testing.T, doc string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		v = map[string]any{}
	}
	return v
}

func config(level string, clusterValues map[string]any) *api.Config {
	return &api.Config{
		Ref:      api.ObjectRef{APIVersion: api.ConfigAPIVersion, Kind: api.ConfigKind, Name: "fleet"},
		Origin:   api.Origin{File: "config.yaml"},
		Delivery: api.Direct,
		Cluster:  api.ClusterConfig{Values: clusterValues, PodSecurity: level},
	}
}

// TestPodSecurityExemptions derives the exempted namespaces from the addons
// the fixed values turn on, per level.
func TestPodSecurityExemptions(t *testing.T) {
	always := []string{"cozy-cilium", "cozy-csi", "kube-system"}
	tests := []struct {
		name   string
		level  string
		values string
		want   []string
	}{
		{"defaults, restricted", api.PodSecurityRestricted, "addons: {certManager: {enabled: true}, ingressNginx: {enabled: true}}", []string{"cozy-cilium", "cozy-csi", "cozy-ingress-nginx", "kube-system"}},
		{"defaults, baseline: ingress-nginx passes baseline", api.PodSecurityBaseline, "addons: {certManager: {enabled: true}, ingressNginx: {enabled: true}}", always},
		{"no addons at all", api.PodSecurityRestricted, "", always},
		{"ingress switched off", api.PodSecurityRestricted, "addons: {ingressNginx: {enabled: false}}", always},
		{"enabled: \"true\" as a string is not on (the chart schema refuses it)", api.PodSecurityRestricted, "addons: {velero: {enabled: \"true\"}}", always},
		{"monitoring agents", api.PodSecurityRestricted, "addons: {monitoringAgents: {enabled: true}}", []string{"cozy-cilium", "cozy-csi", "cozy-monitoring", "kube-system"}},
		{"GPU operator with HAMi", api.PodSecurityBaseline, "addons: {gpuOperator: {enabled: true}, hami: {enabled: true}}", []string{"cozy-cilium", "cozy-csi", "cozy-gpu-operator", "cozy-hami", "kube-system"}},
		{"velero", api.PodSecurityBaseline, "addons: {velero: {enabled: true}}", []string{"cozy-cilium", "cozy-csi", "cozy-velero", "kube-system"}},
		{"cert-manager and VPA pass restricted", api.PodSecurityRestricted, "addons: {certManager: {enabled: true}}", always},
		{"ouroboros alone passes restricted", api.PodSecurityRestricted, "addons: {ouroboros: {enabled: true}}", always},
		{"ouroboros with its /etc/hosts DaemonSet", api.PodSecurityRestricted, "addons: {ouroboros: {enabled: true, valuesOverride: {ouroboros: {etcHosts: {enabled: true}}}}}", []string{"cozy-cilium", "cozy-csi", "cozy-ouroboros", "kube-system"}},
		{"privileged exempts nothing", api.PodSecurityPrivileged, "addons: {velero: {enabled: true}}", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, e := range model.PodSecurityExemptions(tt.level, values(t, tt.values)) {
				got = append(got, e.Namespace)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("exempted namespaces (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNeverExemptsTenantNamespaces turns every addon on: no exempted
// namespace is one where routed apps land, and each exemption has a reason.
func TestNeverExemptsTenantNamespaces(t *testing.T) {
	all := values(t, `addons:
  certManager: {enabled: true}
  ingressNginx: {enabled: true}
  monitoringAgents: {enabled: true}
  gpuOperator: {enabled: true}
  hami: {enabled: true}
  velero: {enabled: true}
  ouroboros: {enabled: true, valuesOverride: {ouroboros: {etcHosts: {enabled: true}}}}
  gatewayAPI: {enabled: true}
`)
	exempt := model.PodSecurityExemptions(api.PodSecurityRestricted, all)
	if len(exempt) != 9 {
		t.Errorf("got %d exemptions with every addon on, want 9: %v", len(exempt), exempt)
	}
	for _, e := range exempt {
		if strings.HasPrefix(e.Namespace, "tenant-") || e.Namespace == "default" {
			t.Errorf("exempts %s, where apps land", e.Namespace)
		}
		if e.Reason == "" || e.Addon == "" || e.Needs == api.PodSecurityRestricted {
			t.Errorf("exemption %+v does not say why", e)
		}
	}
	for _, a := range model.AddonNamespaces() {
		if !strings.HasPrefix(a.Namespace, "cozy-") && a.Namespace != "kube-system" {
			t.Errorf("addon namespace %s is not a platform namespace", a.Namespace)
		}
	}
}

// TestAdmissionConfiguration checks the document the API server reads.
func TestAdmissionConfiguration(t *testing.T) {
	a, err := model.NewAdmission(api.PodSecurityBaseline, api.DefaultClusterValues())
	if err != nil {
		t.Fatal(err)
	}
	got := values(t, a.Config)
	want := values(t, `
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
      enforce-version: latest
      audit: baseline
      audit-version: latest
      warn: baseline
      warn-version: latest
    exemptions:
      usernames: []
      runtimeClasses: []
      namespaces: [cozy-cilium, cozy-csi, kube-system]
`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AdmissionConfiguration (-want +got):\n%s", diff)
	}
	if !regexp.MustCompile(`^admission-[0-9a-f]{10}\.yaml$`).MatchString(a.FileName) {
		t.Errorf("file name %q is not a ConfigMap key of the expected form", a.FileName)
	}

	t.Run("a change of level or exemptions changes the file, and with it the flag", func(t *testing.T) {
		r, _ := model.NewAdmission(api.PodSecurityRestricted, api.DefaultClusterValues())
		v, _ := model.NewAdmission(api.PodSecurityBaseline, values(t, "addons: {velero: {enabled: true}}"))
		again, _ := model.NewAdmission(api.PodSecurityBaseline, api.DefaultClusterValues())
		if r.FileName == a.FileName || v.FileName == a.FileName || r.Flag() == a.Flag() {
			t.Errorf("different configurations share a file name: %s %s %s", r.FileName, v.FileName, a.FileName)
		}
		if again.FileName != a.FileName {
			t.Errorf("the same configuration got two file names: %s %s", again.FileName, a.FileName)
		}
	})

	t.Run("privileged needs nothing; the empty level is restricted", func(t *testing.T) {
		if p, err := model.NewAdmission(api.PodSecurityPrivileged, nil); p != nil || err != nil {
			t.Errorf("NewAdmission(privileged) = %v, %v; want nil, nil", p, err)
		}
		if d, _ := model.NewAdmission("", nil); d == nil || d.Level != api.PodSecurityRestricted {
			t.Errorf("NewAdmission(\"\") = %+v; want restricted", d)
		}
		if _, err := model.NewAdmission("strict", nil); err == nil {
			t.Error("NewAdmission(strict) accepted an unknown level")
		}
	})
}

// TestAdmissionWiring checks that the fixed values load the ConfigMap: the
// flag names the ConfigMap's key under the mount, the mount names the
// volume, the volume names the ConfigMap; the operator's own settings stay
// first.
func TestAdmissionWiring(t *testing.T) {
	cfg := config(api.PodSecurityRestricted, values(t, `
addons: {ingressNginx: {enabled: true}}
controlPlane:
  apiServer:
    extraArgs: [--requestheader-uid-headers=X-Remote-Uid]
    extraVolumes: [{name: oidc-ca, configMap: {name: oidc-ca}}]
    extraVolumeMounts: [{name: oidc-ca, mountPath: /etc/oidc}]
`))
	fixed, problems := model.FixedValues(cfg)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	a, _ := model.NewAdmission(api.PodSecurityRestricted, cfg.Cluster.Values)
	want := values(t, `
extraArgs:
- --requestheader-uid-headers=X-Remote-Uid
- --admission-control-config-file=/etc/kubernetes/admission/`+a.FileName+`
extraVolumes:
- {name: oidc-ca, configMap: {name: oidc-ca}}
- {name: computeplane-admission, configMap: {name: computeplane-admission}}
extraVolumeMounts:
- {name: oidc-ca, mountPath: /etc/oidc}
- {name: computeplane-admission, mountPath: /etc/kubernetes/admission, readOnly: true}
`)
	got := fixed["controlPlane"].(map[string]any)["apiServer"]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("controlPlane.apiServer (-want +got):\n%s", diff)
	}
	if args, _ := cfg.Cluster.Values["controlPlane"].(map[string]any)["apiServer"].(map[string]any)["extraArgs"].([]any); len(args) != 1 {
		t.Errorf("FixedValues changed the config's own values: extraArgs = %v", args)
	}

	t.Run("privileged: no wiring", func(t *testing.T) {
		fixed, problems := model.FixedValues(config(api.PodSecurityPrivileged, api.DefaultClusterValues()))
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		if diff := cmp.Diff(api.DefaultClusterValues(), fixed); diff != "" {
			t.Errorf("privileged changed the values (-want +got):\n%s", diff)
		}
	})
}

// TestAdmissionWiringConflicts refuses operator values that would replace or
// switch off the configuration, or that the wiring cannot extend.
func TestAdmissionWiringConflicts(t *testing.T) {
	tests := []struct {
		values string
		field  string
		msg    string
	}{
		{"controlPlane: {apiServer: {extraArgs: [--admission-control-config-file=/etc/mine.yaml]}}", "spec.cluster.values.controlPlane.apiServer.extraArgs[0]", "would replace the Pod Security configuration"},
		{"controlPlane: {apiServer: {extraArgs: [--v=2, -admission-control-config-file, /etc/mine.yaml]}}", "spec.cluster.values.controlPlane.apiServer.extraArgs[1]", "would replace"},
		{"controlPlane: {apiServer: {extraArgs: [\"--disable-admission-plugins=DefaultStorageClass, PodSecurity\"]}}", "spec.cluster.values.controlPlane.apiServer.extraArgs[0]", "switches off the PodSecurity admission plugin"},
		{"controlPlane: {apiServer: {extraVolumes: [{name: computeplane-admission, secret: {secretName: x}}]}}", "spec.cluster.values.controlPlane.apiServer.extraVolumes[0].name", "reserved"},
		{"controlPlane: {apiServer: {extraVolumeMounts: [{name: mine, mountPath: /etc/kubernetes/admission}]}}", "spec.cluster.values.controlPlane.apiServer.extraVolumeMounts[0]", "reserved"},
		{"controlPlane: {apiServer: {extraArgs: --v=2}}", "spec.cluster.values.controlPlane.apiServer.extraArgs", "must be a list of strings"},
		{"controlPlane: {apiServer: [x]}", "spec.cluster.values.controlPlane.apiServer", "must be a mapping"},
		{"controlPlane: 3", "spec.cluster.values.controlPlane", "must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.values, func(t *testing.T) {
			_, problems := model.FixedValues(config(api.PodSecurityRestricted, values(t, tt.values)))
			if len(problems) != 1 || problems[0].Field != tt.field || !strings.Contains(problems[0].Message, tt.msg) || problems[0].File != "config.yaml" || problems[0].Object.Kind != api.ConfigKind {
				t.Errorf("problems = %v; want one at %s saying %q", problems, tt.field, tt.msg)
			}
		})
	}
	t.Run("privileged leaves the operator's admission flags alone", func(t *testing.T) {
		_, problems := model.FixedValues(config(api.PodSecurityPrivileged, values(t, tests[0].values)))
		if len(problems) > 0 {
			t.Errorf("problems = %v", problems)
		}
	})
}

// TestSecurityDocsListEveryAddonNamespace keeps docs/security.md honest: every
// addon namespace is named there, as exempt or as never exempt.
func TestSecurityDocsListEveryAddonNamespace(t *testing.T) {
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range model.AddonNamespaces() {
		row := "| `" + a.Namespace + "` |"
		if a.Needs == api.PodSecurityRestricted {
			if a.Namespace != "cozy-monitoring" && a.Namespace != "cozy-ouroboros" && !strings.Contains(string(doc), "`"+a.Namespace+"`") {
				t.Errorf("docs/security.md does not name %s among the namespaces never exempt", a.Namespace)
			}
			continue
		}
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/security.md has no row for %s (%s)", a.Namespace, a.Addon)
		}
	}
}
