package model

import (
	"cmp"
	"slices"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// AddonNamespace is a namespace inside a ComputePlane cluster that
// apps/kubernetes installs an addon into, with the Pod Security level that
// the addon's pods need there.
type AddonNamespace struct {
	Namespace string
	// Addon names what installs the namespace, in values terms.
	Addon string
	// Needs is the strictest level the addon's pods pass: restricted,
	// baseline or privileged.
	Needs string
	// Reason says why, for the docs and for a reviewer.
	Reason string
	// on reports whether the fixed values install the addon.
	on func(values map[string]any) bool
}

// addonNamespaces is every namespace the addon set of apps/kubernetes
// (Cozystack at 3c780acd, templates/helmreleases/*.yaml, with the pods of
// packages/system/*) installs pods or CRDs into, and what its pods need.
// Routed apps land in their tenant's namespace (tenant-...), which is none
// of these, and is never exempted.
var addonNamespaces = []AddonNamespace{
	{Namespace: "kube-system", Addon: "always (Kamaji addons, coredns)", Needs: api.PodSecurityPrivileged, on: always,
		Reason: "the cluster's own system namespace: Kamaji's konnectivity-agent DaemonSet and CoreDNS run there, and they do not meet restricted"},
	{Namespace: "cozy-cilium", Addon: "cilium (always)", Needs: api.PodSecurityPrivileged, on: always,
		Reason: "the CNI: the agent and envoy DaemonSets run privileged, on the host network, with host paths"},
	{Namespace: "cozy-csi", Addon: "csi (always)", Needs: api.PodSecurityPrivileged, on: always,
		Reason: "the kubevirt-csi node plugin mounts volumes on the node: privileged, with host paths"},
	{Namespace: "cozy-monitoring", Addon: "metrics-server (always)", Needs: api.PodSecurityRestricted, on: always,
		Reason: "metrics-server runs as non-root with every capability dropped and the RuntimeDefault seccomp profile"},
	{Namespace: "cozy-monitoring", Addon: "addons.monitoringAgents", Needs: api.PodSecurityPrivileged, on: enabled("monitoringAgents"),
		Reason: "node-exporter uses the host network, PID namespace and paths; fluent-bit reads host log paths"},
	{Namespace: "cozy-victoria-metrics-operator", Addon: "prometheus-operator-crds (always), addons.monitoringAgents", Needs: api.PodSecurityRestricted, on: always,
		Reason: "CRDs only, plus the victoria-metrics operator with monitoringAgents, which meets restricted"},
	{Namespace: "cozy-vertical-pod-autoscaler", Addon: "addons.monitoringAgents", Needs: api.PodSecurityRestricted, on: enabled("monitoringAgents"),
		Reason: "the VPA components run as non-root with RuntimeDefault seccomp and no privilege escalation"},
	{Namespace: "cozy-cert-manager", Addon: "addons.certManager", Needs: api.PodSecurityRestricted, on: enabled("certManager"),
		Reason: "cert-manager's chart meets restricted by default"},
	{Namespace: "cozy-ingress-nginx", Addon: "addons.ingressNginx", Needs: api.PodSecurityBaseline, on: enabled("ingressNginx"),
		Reason: "the controller meets restricted, but Cozystack's protobuf-exporter sidecar sets no securityContext; nothing there needs host access"},
	{Namespace: "cozy-gpu-operator", Addon: "addons.gpuOperator", Needs: api.PodSecurityPrivileged, on: enabled("gpuOperator"),
		Reason: "the driver, container toolkit, device plugin and node-feature-discovery run privileged on the node"},
	{Namespace: "cozy-hami", Addon: "addons.hami", Needs: api.PodSecurityPrivileged, on: enabled("hami"),
		Reason: "the HAMi device plugin runs privileged with host paths"},
	{Namespace: "cozy-velero", Addon: "addons.velero", Needs: api.PodSecurityPrivileged, on: enabled("velero"),
		Reason: "Cozystack deploys velero's node-agent, which reads pod volumes through host paths"},
	{Namespace: "cozy-ouroboros", Addon: "addons.ouroboros", Needs: api.PodSecurityRestricted, on: enabled("ouroboros"),
		Reason: "the ouroboros controller and proxy meet restricted"},
	{Namespace: "cozy-ouroboros", Addon: "addons.ouroboros with valuesOverride ouroboros.etcHosts.enabled", Needs: api.PodSecurityPrivileged,
		on: func(v map[string]any) bool {
			return enabled("ouroboros")(v) && valueAt(v, "addons", "ouroboros", "valuesOverride", "ouroboros", "etcHosts", "enabled") == true
		},
		Reason: "the /etc/hosts DaemonSet uses the host network and writes a host path"},
}

// AddonNamespaces returns every namespace the addon set of apps/kubernetes
// installs into, with the level its pods need and why, exempt or not.
func AddonNamespaces() []AddonNamespace { return slices.Clone(addonNamespaces) }

// PodSecurityExemptions returns the addon namespaces that the fixed values
// install and whose pods need more than level allows, one entry per
// namespace (the most demanding addon), sorted by namespace.
func PodSecurityExemptions(level string, fixed map[string]any) []AddonNamespace {
	byNS := map[string]AddonNamespace{}
	for _, a := range addonNamespaces {
		if !a.on(fixed) || levelRank(a.Needs) <= levelRank(level) {
			continue
		}
		if prev, ok := byNS[a.Namespace]; !ok || levelRank(a.Needs) > levelRank(prev.Needs) {
			byNS[a.Namespace] = a
		}
	}
	out := make([]AddonNamespace, 0, len(byNS))
	for _, a := range byNS {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b AddonNamespace) int { return cmp.Compare(a.Namespace, b.Namespace) })
	return out
}

// levelRank orders the Pod Security levels from strictest (0) to most
// permissive; -1 for anything else.
func levelRank(level string) int {
	return slices.Index([]string{api.PodSecurityRestricted, api.PodSecurityBaseline, api.PodSecurityPrivileged}, level)
}

func always(map[string]any) bool { return true }

// enabled reports whether addons.<addon>.enabled is true.
func enabled(addon string) func(map[string]any) bool {
	return func(v map[string]any) bool { return valueAt(v, "addons", addon, "enabled") == true }
}
