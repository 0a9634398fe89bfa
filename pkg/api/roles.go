package api

import (
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// validateRoles refuses a config that gives one identity or namespace two
// roles the guard tells apart (docs/guard.md, "Who is who"): the fleet's
// account, its wiring and its sources in a tenant's namespace, where the
// tenant's administrators write; the fleet's account named like a cluster
// installer or an app's account, whose names the guard's rules match in
// every namespace; the fleet among the platform's helm-controller, which
// installs every tenant's chart, or that helm-controller among the
// platform's VM controllers.
func (c *Config) validateRoles(d *decoder) {
	tenantNS := func(ns string) bool { return strings.HasPrefix(ns, wire.TenantNamespacePrefix) }
	if f := c.Fleet; f != nil {
		if tenantNS(f.WiringNamespace) {
			d.fail("spec.fleet.wiringNamespace", "%q is a tenant's namespace: the fleet's account, its Kustomizations and (with unitSource: ExternalArtifact) the artifacts its units read would live where the tenant's administrators write, and could run as the fleet; use a namespace of the platform's, such as %s or cozy-fluxcd",
				f.WiringNamespace, DefaultWiringNamespace)
		}
		if tenantNS(f.SourceRef.Namespace) && f.SourceRef.Namespace != f.WiringNamespace {
			d.fail("spec.fleet.sourceRef.namespace", "%q is a tenant's namespace: whoever writes the fleet's source there chooses what the fleet's account applies; keep the source in a namespace of the platform's, such as the wiring namespace", f.SourceRef.Namespace)
		}
		switch a := f.ServiceAccountName; {
		case a == wire.InstallerAccount:
			d.fail("spec.fleet.serviceAccountName", "%q is the account of every tenant's cluster installer: the guard tells the fleet from an installer by this name (an installer may only reach its own cluster), so the two cannot share it; use another name, such as %s", a, DefaultFleetServiceAccount)
		case a == wire.SharedAppsAccount || strings.HasPrefix(a, wire.PerAppAccountPrefix):
			d.fail("spec.fleet.serviceAccountName", "%q is named like the account routed apps install as inside their ComputePlane (%s, %s<release>); use another name, such as %s", a, wire.SharedAppsAccount, wire.PerAppAccountPrefix, DefaultFleetServiceAccount)
		}
	}
	if tenantNS(c.Baseline.Namespace) && (c.Fleet == nil || c.Baseline.Namespace != c.Fleet.WiringNamespace) {
		d.fail("spec.baseline.namespace", "%q is a tenant's namespace: whoever writes the baseline chart's source there chooses what every ComputePlane's baseline installs; use a namespace of the platform's", c.Baseline.Namespace)
	}
	g := c.Guard
	for i, id := range g.FluxIdentities {
		if _, set := c.written["guard.fluxIdentities"]; !set {
			break // the fleet's account, checked above
		}
		field := "spec.guard.fluxIdentities[" + itoa(i) + "]"
		ns, name, isAccount := serviceAccountOf(id)
		switch {
		case slices.Contains(g.HelmIdentities, id):
			d.fail(field, "%q is also in spec.guard.helmIdentities: the platform's helm-controller installs every tenant's chart, so as the fleet it would let any chart reach a ComputePlane; give the fleet an account of its own (the default, spec.fleet.serviceAccountName)", id)
		case isAccount && name == wire.InstallerAccount:
			d.fail(field, "%q is a cluster installer, which may reach only its own cluster; the fleet reaches every one", id)
		case isAccount && tenantNS(ns):
			d.fail(field, "%q is an account in a tenant's namespace, where the tenant's administrators can use it; the fleet's account lives in a namespace of the platform's", id)
		}
	}
	for i, id := range g.PlatformIdentities {
		if slices.Contains(g.HelmIdentities, id) {
			d.fail("spec.guard.platformIdentities["+itoa(i)+"]", "%q is also in spec.guard.helmIdentities: the platform's helm-controller installs every tenant's chart, so as a VM controller it would let any chart forge a ComputePlane's worker or mount its credentials", id)
		}
	}
}

// serviceAccountOf splits a service account's user name.
func serviceAccountOf(user string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, serviceAccountPrefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, ":")
}
