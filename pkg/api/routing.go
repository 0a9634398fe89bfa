package api

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// How routed apps are placed in namespaces inside their ComputePlane
// (spec.routing.namespaces).
const (
	// NamespacesShared puts every routed app of a tenant into one namespace
	// of the ComputePlane, named like the tenant's namespace (the default).
	NamespacesShared = "Shared"
	// NamespacesPerApp gives every routed app a namespace of its own
	// (model.AppNamespace says how it is named).
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
	ResourceQuota *ResourceQuotaConfig `json:"resourceQuota"`
	// LimitRange, when set, is the spec of a LimitRange the baseline puts
	// into every namespace that routed apps install into.
	LimitRange *LimitRangeConfig `json:"limitRange"`
	// Grants give the apps of one ApplicationDefinition more rights inside
	// their ComputePlane than the admin of their own namespace: a
	// ClusterRole bound cluster-wide to their account. Operator only: no
	// input object of a tenant can grant anything.
	Grants []Grant `json:"grants"`
}

// ResourceQuotaConfig is spec.routing.resourceQuota: a ResourceQuota's
// spec (hard and scopes), read as the config's decoder reads maps and
// turned into Kubernetes' types by ResourceQuotaSpec.
type ResourceQuotaConfig struct {
	Hard   map[string]any `json:"hard"`
	Scopes []string       `json:"scopes"`

	spec corev1.ResourceQuotaSpec
}

// LimitRangeConfig is spec.routing.limitRange: a LimitRange's spec.
type LimitRangeConfig struct {
	Limits []LimitConfig `json:"limits"`

	spec corev1.LimitRangeSpec
}

// LimitConfig is one entry of a LimitRange's limits.
type LimitConfig struct {
	Type                 string         `json:"type"`
	Max                  map[string]any `json:"max"`
	Min                  map[string]any `json:"min"`
	Default              map[string]any `json:"default"`
	DefaultRequest       map[string]any `json:"defaultRequest"`
	MaxLimitRequestRatio map[string]any `json:"maxLimitRequestRatio"`
}

// Spec is the checked ResourceQuota spec (valid after Validate).
func (q *ResourceQuotaConfig) Spec() corev1.ResourceQuotaSpec { return *q.spec.DeepCopy() }

// Spec is the checked LimitRange spec (valid after Validate).
func (l *LimitRangeConfig) Spec() corev1.LimitRangeSpec { return *l.spec.DeepCopy() }

// resources reads a map of quantities (strings or integers, as Kubernetes
// writes them) at field.
func (d *decoder) resources(m map[string]any, field string) corev1.ResourceList {
	if len(m) == 0 {
		return nil
	}
	out := corev1.ResourceList{}
	for k, v := range m {
		var text string
		switch v := v.(type) {
		case string:
			text = v
		case int, int64, float64:
			text = fmt.Sprint(v)
		default:
			d.fail(field+"["+k+"]", "must be a quantity (such as 500m, 2Gi or 20), not %v", v)
			continue
		}
		q, err := resource.ParseQuantity(text)
		if err != nil {
			d.fail(field+"["+k+"]", "%q is not a quantity (such as 500m, 2Gi or 20)", text)
			continue
		}
		out[corev1.ResourceName(k)] = q
	}
	return out
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

// validate checks spec.routing and makes the specs of its quota and
// limits; written is [Config]'s.
func (c *RoutingConfig) validate(d *decoder, written map[string]bool) {
	const f = "spec.routing"
	// The schema requires resourceQuota.hard, limitRange.limits, each
	// limit's type and each grant's definition and clusterRole; an empty
	// one is as good as none.
	if q := c.ResourceQuota; q != nil {
		if q.Hard != nil && len(q.Hard) == 0 {
			d.fail(f+".resourceQuota.hard", "%s", requiredMessage("routing.resourceQuota.hard"))
		}
		q.spec = corev1.ResourceQuotaSpec{Hard: d.resources(q.Hard, f+".resourceQuota.hard")}
		for _, sc := range q.Scopes {
			q.spec.Scopes = append(q.spec.Scopes, corev1.ResourceQuotaScope(sc))
		}
	}
	if l := c.LimitRange; l != nil {
		if l.Limits != nil && len(l.Limits) == 0 {
			d.fail(f+".limitRange.limits", "%s", requiredMessage("routing.limitRange.limits"))
		}
		l.spec = corev1.LimitRangeSpec{}
		for i, it := range l.Limits {
			at := f + ".limitRange.limits[" + itoa(i) + "]"
			if it.Type == "" && written[strings.TrimPrefix(at, "spec.")+".type"] {
				d.fail(at+".type", "%s", requiredMessage("routing.limitRange.limits[].type"))
			}
			l.spec.Limits = append(l.spec.Limits, corev1.LimitRangeItem{
				Type:                 corev1.LimitType(it.Type),
				Max:                  d.resources(it.Max, at+".max"),
				Min:                  d.resources(it.Min, at+".min"),
				Default:              d.resources(it.Default, at+".default"),
				DefaultRequest:       d.resources(it.DefaultRequest, at+".defaultRequest"),
				MaxLimitRequestRatio: d.resources(it.MaxLimitRequestRatio, at+".maxLimitRequestRatio"),
			})
		}
	}
	if len(c.Grants) > 0 && c.Namespaces != NamespacesPerApp {
		// Under Shared every routed app of a tenant is admin of the one
		// namespace, and admin may run pods as, and impersonate, any
		// account of its namespace: the granted account's rights would
		// reach every app there (docs/incluster.md, "Charts that need
		// more").
		d.fail(f+".grants", "need spec.routing.namespaces: %s: under %s every routed app of a tenant administers the namespace that the granted account lives in, and so could act as it", NamespacesPerApp, c.Namespaces)
	}
	seen := map[string]int{}
	roles := map[string]int{}
	for i, g := range c.Grants {
		at := f + ".grants[" + itoa(i) + "]"
		if g.Definition == "" {
			if written[strings.TrimPrefix(at, "spec.")+".definition"] {
				d.fail(at+".definition", "%s", requiredMessage("routing.grants[].definition"))
			}
		} else if j, dup := seen[g.Definition]; dup {
			d.fail(at+".definition", "ApplicationDefinition %q is granted twice (also in spec.routing.grants[%d]); give each definition one ClusterRole", g.Definition, j)
		} else {
			seen[g.Definition] = i
		}
		switch {
		case g.ClusterRole == "":
			if written[strings.TrimPrefix(at, "spec.")+".clusterRole"] {
				d.fail(at+".clusterRole", "%s", requiredMessage("routing.grants[].clusterRole"))
			}
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
