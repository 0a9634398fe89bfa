package render

import (
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
)

// Warnings returns what a person should know about a checked fleet without
// it being refused: under delivery: Platform, one per tenant whose
// ComputePlane runs without Pod Security, because the platform's
// computeplane module passes only addons and nodeGroups to its cluster and
// offers no way to load an admission configuration into the cluster's API
// server. Each names the tenant's Tenant object; none changes the output or
// the exit status. The KRM function reports them as results of severity
// warning, the standalone CLI on stderr, and the pull-request summary in
// its text.
func Warnings(f *fleet.Fleet) api.Problems {
	if f == nil || f.Config.Delivery != api.Platform {
		return nil
	}
	var out api.Problems
	for _, t := range f.SortedTenants() {
		if !t.ComputePlane {
			continue
		}
		w := api.Problem{Message: fmt.Sprintf(
			"the ComputePlane of tenant %s (%s) runs without Pod Security: under delivery: Platform the platform's computeplane module provisions the cluster %s and cannot load an admission configuration into its API server, so its pods are not held to restricted or baseline; only the egress policy %s is enforced. Use delivery: Direct for Pod Security",
			t.Name, t.Namespace, f.ClusterRelease(), EgressPolicyName)}
		if t.Object != nil {
			w.Object, w.File = t.Object.Ref, t.Object.Origin.File
		}
		out = append(out, w)
	}
	return out
}
