package model

import (
	"fmt"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// Warnings returns what a person should know about a checked fleet without
// it being refused: under delivery: Platform, per tenant with a
// ComputePlane, that it runs without Pod Security, because the platform's
// computeplane module passes only addons and nodeGroups to its cluster and
// offers no way to load an admission configuration into the cluster's API
// server; that the chart's dashboard Role gives the tenant's users its
// super-admin kubeconfig (the render of the cluster release removes that rule from a
// Direct cluster's release only); and, with the guard on, that the guard admits the cluster's
// credentials from the platform's helm-controller, which installs the
// module's cluster as it installs every other chart. Each names the
// tenant's Tenant object; none changes the output or the exit status. The KRM function reports them as results of severity
// warning, the standalone CLI on stderr, and the pull-request summary in
// its text. Last come the apps whose spec breaks its definition's schema
// (spec.apps.values: Warn), each naming the app, its file and the field.
func (f *Fleet) Warnings() api.Problems {
	if f == nil {
		return nil
	}
	var out api.Problems
	for _, t := range f.SortedTenants() {
		if !t.ComputePlane {
			continue
		}
		warn := func(w api.Problem) {
			if t.Object != nil {
				w.Object, w.File = t.Object.Ref, t.Object.Origin.File
			}
			out = append(out, w)
		}
		if f.Config.Delivery == api.Platform {
			warn(api.Problem{Message: fmt.Sprintf(
				"the ComputePlane of tenant %s (%s) runs without Pod Security: under delivery: Platform the platform's computeplane module provisions the cluster %s and cannot load an admission configuration into its API server, so its pods are not held to restricted or baseline; only the egress policy %s is enforced. Use delivery: Direct for Pod Security",
				t.Name, t.Namespace, f.ClusterRelease(), wire.EgressPolicyName)})
			warn(api.Problem{Message: fmt.Sprintf(
				"the ComputePlane of tenant %s (%s) may be administered by the tenant's users: under delivery: Platform the platform renders the cluster %s, and the chart's Role %s grants get, list and watch on its super-admin kubeconfig %s to the tenant's use, admin and super-admin groups and those of its ancestors; the function cannot patch a release it does not render. Use delivery: Direct, whose cluster release removes that rule",
				t.Name, t.Namespace, f.ClusterRelease(), DashboardRole(f.ClusterRelease()), KubeconfigSecret(f.ClusterRelease()))})
			if f.Config.Guard.Enabled {
				warn(api.Problem{Message: fmt.Sprintf(
					"the ComputePlane of tenant %s (%s) is guarded less: under delivery: Platform the platform's helm-controller (guard.helmIdentities: %s) installs the module's cluster %s, and the same account installs every other chart of the platform, so the management-plane guard cannot tell the cluster's own addon releases from a release any chart renders; it admits a kubeConfig or a valuesFrom naming %s's credentials (%s) from that account. Use delivery: Direct, where the cluster installs as its own account (%s)",
					t.Name, t.Namespace, strings.Join(f.Config.Guard.HelmIdentities, ", "), f.ClusterRelease(), f.ClusterRelease(),
					strings.Join(ClusterCredentials(f.ClusterRelease()), ", "), InstallerAccount)})
			}
		}
	}
	return append(out, f.valueWarnings...)
}

// ValueWarnings are the warnings of the check of the apps' values against
// their definitions (spec.apps.values: Warn), the last of Warnings: each
// names the app, its file and the field.
func (f *Fleet) ValueWarnings() api.Problems {
	if f == nil {
		return nil
	}
	return f.valueWarnings
}
