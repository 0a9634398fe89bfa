package api

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// How routed apps are placed in namespaces inside their ComputePlane
// (spec.routing.namespaces).
const (
	// NamespacesShared puts every routed app of a tenant into one namespace
	// of the ComputePlane, named like the tenant's namespace (the default).
	NamespacesShared = "Shared"
	// NamespacesPerApp gives every routed app a namespace of its own
	// (fleet.AppNamespace says how it is named).
	NamespacesPerApp = "PerApp"
)

// RoutingConfig tunes the HelmReleases of routed apps and the in-cluster
// baseline they install into (package render's baseline.go).
type RoutingConfig struct {
	// EditableThroughAPI keeps the apps.cozystack.io/application.* labels on
	// routed releases, so cozystack-api lists them and lets users edit them.
	// An edit through the API rebuilds the release without its kubeConfig
	// and so moves the app onto the management cluster: off by default.
	EditableThroughAPI bool `json:"editableThroughAPI"`
	// Namespaces is Shared (default) or PerApp.
	Namespaces string `json:"namespaces"`
	// ResourceQuota, when set, is the spec of a ResourceQuota the baseline
	// puts into every namespace that routed apps install into.
	ResourceQuota *corev1.ResourceQuotaSpec `json:"resourceQuota"`
	// LimitRange, when set, is the spec of a LimitRange the baseline puts
	// into every namespace that routed apps install into.
	LimitRange *corev1.LimitRangeSpec `json:"limitRange"`
	// Grants give the apps of one ApplicationDefinition more rights inside
	// their ComputePlane than the admin of their own namespace: a
	// ClusterRole bound cluster-wide to their account. Operator only: no
	// input object of a tenant can grant anything.
	Grants []Grant `json:"grants"`
}

// Grant is one entry of spec.routing.grants.
type Grant struct {
	// Definition is the metadata.name of an ApplicationDefinition placed on
	// the ComputePlane.
	Definition string `json:"definition"`
	// ClusterRole is the name of the ClusterRole bound, in every
	// ComputePlane, to the accounts of that definition's apps.
	ClusterRole string `json:"clusterRole"`
	// Rules, when given, make the baseline also create that ClusterRole in
	// every ComputePlane with exactly these rules; without them the
	// ClusterRole must exist there already (cluster-admin, say).
	Rules []rbacv1.PolicyRule `json:"rules"`
}

// GrantOf returns the grant of a definition (by its metadata.name), if any.
func (c *RoutingConfig) GrantOf(definition string) (Grant, bool) {
	for _, g := range c.Grants {
		if g.Definition == definition {
			return g, true
		}
	}
	return Grant{}, false
}

// PerApp reports whether every routed app gets a namespace of its own.
func (c *RoutingConfig) PerApp() bool { return c.Namespaces == NamespacesPerApp }

// builtinClusterRoles are the ClusterRoles every Kubernetes cluster has,
// which a grant may bind but never redefine with rules.
var builtinClusterRoles = map[string]bool{"cluster-admin": true, "admin": true, "edit": true, "view": true}

// rbacNameRE is what the API server accepts as the name of an RBAC object
// (path segment names), kept to the DNS-subdomain characters plus ':'.
var rbacNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?$`)

func (c *RoutingConfig) validate(d *decoder) {
	const f = "spec.routing"
	switch c.Namespaces {
	case NamespacesShared, NamespacesPerApp:
	default:
		d.fail(f+".namespaces", "must be %s or %s, not %q", NamespacesShared, NamespacesPerApp, c.Namespaces)
	}
	if c.ResourceQuota != nil && len(c.ResourceQuota.Hard) == 0 {
		d.fail(f+".resourceQuota.hard", "is required: the limits of each namespace routed apps install into (leave resourceQuota out for none)")
	}
	if c.LimitRange != nil && len(c.LimitRange.Limits) == 0 {
		d.fail(f+".limitRange.limits", "is required: the defaults and bounds of each container (leave limitRange out for none)")
	}
	seen := map[string]int{}
	roles := map[string]int{}
	for i, g := range c.Grants {
		at := f + ".grants[" + itoa(i) + "]"
		if g.Definition == "" {
			d.fail(at+".definition", "is required: the metadata.name of an ApplicationDefinition placed on the ComputePlane")
		} else if j, dup := seen[g.Definition]; dup {
			d.fail(at+".definition", "ApplicationDefinition %q is granted twice (also in spec.routing.grants[%d]); give each definition one ClusterRole", g.Definition, j)
		} else {
			seen[g.Definition] = i
		}
		switch {
		case g.ClusterRole == "":
			d.fail(at+".clusterRole", "is required: the ClusterRole bound to the definition's apps inside their ComputePlane")
		case len(g.ClusterRole) > 253 || !rbacNameRE.MatchString(g.ClusterRole):
			d.fail(at+".clusterRole", "%q is not a valid ClusterRole name", g.ClusterRole)
		case len(g.Rules) > 0 && (builtinClusterRoles[g.ClusterRole] || strings.HasPrefix(g.ClusterRole, "system:")):
			d.fail(at+".rules", "ClusterRole %q is one of Kubernetes' own: bind it without rules, or give the rules a ClusterRole name of your own", g.ClusterRole)
		case len(g.Rules) > 0:
			if j, dup := roles[g.ClusterRole]; dup {
				d.fail(at+".clusterRole", "ClusterRole %q is defined with rules also in spec.routing.grants[%d]; define it once and name it without rules in the other grants", g.ClusterRole, j)
			}
			roles[g.ClusterRole] = i
		}
	}
}
