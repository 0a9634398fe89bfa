package model

import (
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// Warnings returns what a person should know about a checked fleet without
// it being refused: under delivery: Platform, per tenant with a
// ComputePlane, that it runs without Pod Security (the platform's
// computeplane module passes only addons and nodeGroups to its cluster and
// offers no way to load an admission configuration into the cluster's API
// server); that the chart's dashboard Role gives the tenant's users its
// super-admin kubeconfig (the render of the cluster release removes that
// rule from a Direct cluster's release only); and, with the guard on, that
// the guard admits the cluster's credentials from the platform's
// helm-controller, which installs the module's cluster as it installs every
// other chart. Each is one line naming the tenant's Tenant object and the
// section of the docs that says the rest; none changes the output or the
// exit status. The KRM function reports them as results of severity
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
			// One line each; the docs they name say the rest.
			warn(api.Problem{Message: fmt.Sprintf(
				"the ComputePlane of tenant %s (%s) runs without Pod Security: the platform's module cannot configure its API server (docs/inputs-outputs.md#outputs; delivery: Direct has Pod Security)",
				t.Name, t.Namespace)})
			warn(api.Problem{Message: fmt.Sprintf(
				"the ComputePlane of tenant %s (%s) may be administered by the tenant's users: the chart's Role %s lets them read %s (docs/guard.md#a-computeplanes-credentials; delivery: Direct removes that rule)",
				t.Name, t.Namespace, DashboardRole(f.ClusterRelease()), KubeconfigSecret(f.ClusterRelease()))})
			if f.Config.Guard.Enabled {
				warn(api.Problem{Message: fmt.Sprintf(
					"the ComputePlane of tenant %s (%s) is guarded less: the guard admits %s from the platform's helm-controller, which installs every chart (docs/guard.md#under-delivery-platform-what-the-guard-can-and-cannot-promise)",
					t.Name, t.Namespace, KubeconfigSecret(f.ClusterRelease()))})
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
