package model

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

// OperatorOnlyPath is a path of apps/kubernetes's values that only the
// operator may set, whatever the knob schema allows: what it sets runs code,
// or claims a name, outside the ComputePlane (on the management cluster, on
// its shared ingress, or as the node OS under every Pod Security check).
type OperatorOnlyPath struct {
	// Path is the values path; "*" stands for any one key.
	Path []string
	// Reason says what a tenant's setting there would do.
	Reason string
}

// operatorOnlyPaths are those paths, read from the chart's values schema and
// templates (Cozystack at 3c780acd, packages/apps/kubernetes): every value
// that names an image, a registry, a mirror, a URL fetched, a host name, an
// identity provider or a file of a pod that runs on the management cluster.
// What a tenant may set elsewhere (node groups, resources, versions from the
// chart's enum, addons' settings inside the ComputePlane) stays the knob
// schema's.
var operatorOnlyPaths = []OperatorOnlyPath{
	{[]string{"images"}, "names the images of pods that run on the management cluster with the cluster's credentials: the bootstrap-token Job (kubectl, with the admin kubeconfig), the talos-csr-signer sidecar of the Kamaji control plane (with the Talos CA and tokens) and the wait-for-kubeconfig init containers"},
	{[]string{"talos"}, "sets the workers' operating system: the URL the management cluster's CDI importer fetches the disk image from (talos.imageFactoryURL), the schematic (system extensions), version and installer image of the node OS, and the registry mirrors every image of the nodes is pulled through; the node OS runs beneath every Pod Security check and holds the kubelet's credentials"},
	{[]string{"host"}, "claims a host name on the management cluster's shared ingress (the control plane's ingress, with TLS passthrough): another tenant's or the platform's name would be routed to this cluster"},
	{[]string{"addons", "*", "hosts"}, "claims host names on the management cluster's shared ingress (addons.ingressNginx.hosts with exposeMethod Proxied): another tenant's or the platform's names would be routed into this cluster"},
	{[]string{"oidc"}, "decides who authenticates to the cluster and as what (the API server's AuthenticationConfiguration, its issuers and claim mappings, users bound to cluster-admin, a Secret of the tenant namespace mounted into the control plane), and runs the OIDC Jobs on the management cluster: a tenant's setting could make its users cluster-admin, which the withheld kubeconfig exists to prevent"},
	{[]string{"controlPlane", "apiServer", "extraArgs"}, "sets flags of the cluster's API server, which runs on the management cluster (authorization, admission, authentication)"},
	{[]string{"controlPlane", "apiServer", "extraVolumes"}, "adds volumes (host paths, Secrets of the tenant namespace) to the control-plane pod on the management cluster"},
	{[]string{"controlPlane", "apiServer", "extraVolumeMounts"}, "mounts volumes into the API server, which runs on the management cluster"},
}

// OperatorOnlyPaths returns the values paths only the operator may set,
// whatever the knob schema (see operatorOnlyPaths), with why.
func OperatorOnlyPaths() []OperatorOnlyPath {
	out := make([]OperatorOnlyPath, len(operatorOnlyPaths))
	for i, p := range operatorOnlyPaths {
		out[i] = OperatorOnlyPath{Path: slices.Clone(p.Path), Reason: p.Reason}
	}
	return out
}

// setPaths returns the paths of values that match pattern ("*" any one
// key), sorted; a step through something that is not a mapping matches
// nothing, since it sets nothing below it.
func setPaths(v map[string]any, pattern []string) [][]string {
	if len(pattern) == 0 {
		return nil
	}
	keys := []string{pattern[0]}
	if pattern[0] == "*" {
		keys = slices.Sorted(maps.Keys(v))
	}
	var out [][]string
	for _, k := range keys {
		c, set := v[k]
		switch {
		case !set:
		case len(pattern) == 1:
			out = append(out, []string{k})
		default:
			if m, ok := c.(map[string]any); ok {
				for _, rest := range setPaths(m, pattern[1:]) {
					out = append(out, append([]string{k}, rest...))
				}
			}
		}
	}
	return out
}

// operatorOnlyProblems refuses the knobs a tenant sets at an operator-only
// path (OperatorOnlyPaths), and on an operator-only addon:
// addons.<addon>.enabled, addons.<addon>.valuesOverride, or addons.<addon>
// itself when it is not a mapping (which would set both).
func operatorOnlyProblems(a *Admission, knobs *api.Knobs) api.Problems {
	var problems api.Problems
	for _, op := range operatorOnlyPaths {
		for _, path := range setPaths(knobs.Values, op.Path) {
			problems = append(problems, api.Errorf(knobs.Ref, knobs.Origin, valuesPath("spec", joinPath(path)),
				"is operator-only whatever the knob schema: it %s; remove it from this ComputePlane object (the operator sets it in spec.cluster.values)", op.Reason))
		}
	}
	addons, _ := knobs.Values["addons"].(map[string]any)
	for _, o := range OperatorOnlyAddons(a) {
		v, set := addons[o.Addon]
		if !set {
			continue
		}
		why := fmt.Sprintf("is operator-only: the %s addon reaches %s, exempt from this cluster's Pod Security (podSecurity: %s), so a tenant's setting there could run pods that Pod Security refuses everywhere else in the cluster; remove it from this ComputePlane object (the operator sets it in spec.cluster.values)",
			o.Addon, "namespace "+strings.Join(o.Exempt, " and namespace "), a.Level)
		m, ok := v.(map[string]any)
		if !ok {
			problems = append(problems, api.Errorf(knobs.Ref, knobs.Origin, valuesPath("spec", joinPath([]string{"addons", o.Addon})), "%s", why))
			continue
		}
		for _, key := range addonSettings {
			if _, set := m[key]; set {
				problems = append(problems, api.Errorf(knobs.Ref, knobs.Origin, valuesPath("spec", joinPath([]string{"addons", o.Addon, key})), "%s", why))
			}
		}
	}
	return problems
}
