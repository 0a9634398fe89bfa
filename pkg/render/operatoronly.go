package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// addonSettings are the settings of an addon of apps/kubernetes that a
// ComputePlane's Pod Security exemptions make operator-only.
var addonSettings = []string{"enabled", "valuesOverride"}

// addonReach maps every addon of apps/kubernetes's values (addons.<name>)
// to the namespaces of the addon releases whose presence or values its
// settings change: from Cozystack at 3c780acd,
// packages/apps/kubernetes/templates/helmreleases/*.yaml, each release's
// targetNamespace and the .Values.addons.<name> it reads. gatewayAPI, for
// one, installs its CRDs in kube-system and switches features of cilium,
// cert-manager and ouroboros on; certManager.enabled changes ingress-nginx's
// webhooks and the victoria-metrics operator.
var addonReach = map[string][]string{
	"certManager":           {"cozy-cert-manager", "cozy-cert-manager-crds", "cozy-ingress-nginx", "cozy-victoria-metrics-operator"},
	"cilium":                {"cozy-cilium"},
	"coredns":               {"kube-system"},
	"gatewayAPI":            {"cozy-cert-manager", "cozy-cilium", "cozy-ouroboros", "kube-system"},
	"gpuOperator":           {"cozy-gpu-operator", "cozy-hami"},
	"hami":                  {"cozy-gpu-operator", "cozy-hami"},
	"ingressNginx":          {"cozy-ingress-nginx", "cozy-ouroboros"},
	"monitoringAgents":      {"cozy-monitoring", "cozy-vertical-pod-autoscaler", "cozy-vertical-pod-autoscaler-crds", "cozy-victoria-metrics-operator"},
	"ouroboros":             {"cozy-ouroboros"},
	"velero":                {"cozy-velero"},
	"verticalPodAutoscaler": {"cozy-vertical-pod-autoscaler"},
}

// AddonReach returns the addons of apps/kubernetes, sorted, each with the
// namespaces its settings reach, sorted.
func AddonReach() map[string][]string {
	out := make(map[string][]string, len(addonReach))
	for k, v := range addonReach {
		out[k] = slices.Clone(v)
	}
	return out
}

// OperatorOnlyAddon is an addon whose enabled and valuesOverride only the
// operator may set, because its settings reach a namespace that the
// cluster's Pod Security configuration exempts.
type OperatorOnlyAddon struct {
	Addon string
	// Exempt are the exempt namespaces it reaches, sorted.
	Exempt []string
}

// OperatorOnlyAddons returns the addons whose settings reach a namespace
// that a exempts, sorted by addon; none when a is nil (podSecurity:
// privileged, where nothing is enforced to bypass). Whatever the knob
// schema, a tenant's knob at addons.<addon>.enabled or
// addons.<addon>.valuesOverride of these is refused: in an exempt namespace
// such a setting could run privileged, host-network or host-path pods that
// Pod Security refuses everywhere else in the cluster.
func OperatorOnlyAddons(a *Admission) []OperatorOnlyAddon {
	if a == nil {
		return nil
	}
	exempt := a.Namespaces()
	var out []OperatorOnlyAddon
	for _, addon := range slices.Sorted(maps.Keys(addonReach)) {
		var hit []string
		for _, ns := range addonReach[addon] {
			if slices.Contains(exempt, ns) {
				hit = append(hit, ns)
			}
		}
		if len(hit) > 0 {
			out = append(out, OperatorOnlyAddon{Addon: addon, Exempt: hit})
		}
	}
	return out
}

// operatorOnlyProblems refuses the knobs a tenant sets on an operator-only
// addon: addons.<addon>.enabled, addons.<addon>.valuesOverride, or
// addons.<addon> itself when it is not a mapping (which would set both).
func operatorOnlyProblems(a *Admission, knobs *api.Knobs) api.Problems {
	addons, _ := knobs.Values["addons"].(map[string]any)
	var problems api.Problems
	for _, o := range OperatorOnlyAddons(a) {
		v, set := addons[o.Addon]
		if !set {
			continue
		}
		why := fmt.Sprintf("is operator-only: the %s addon reaches %s, exempt from this cluster's Pod Security (podSecurity: %s), so a tenant's setting there could run pods that Pod Security refuses everywhere else in the cluster; remove it from this ComputePlane object (the operator sets it in spec.cluster.values)",
			o.Addon, "namespace "+strings.Join(o.Exempt, " and namespace "), a.Level)
		m, ok := v.(map[string]any)
		if !ok {
			problems = append(problems, api.Errorf(knobs.Ref, knobs.Origin, fieldPath("spec", joinPath([]string{"addons", o.Addon})), "%s", why))
			continue
		}
		for _, key := range addonSettings {
			if _, set := m[key]; set {
				problems = append(problems, api.Errorf(knobs.Ref, knobs.Origin, fieldPath("spec", joinPath([]string{"addons", o.Addon, key})), "%s", why))
			}
		}
	}
	return problems
}
