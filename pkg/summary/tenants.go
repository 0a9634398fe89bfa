package summary

import (
	"slices"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// Tenant is one tenant of the new render in the JSON summary (docs/fleet-repo.md).
type Tenant struct {
	Name         string   `json:"name"`
	Namespace    string   `json:"namespace"`
	ComputePlane bool     `json:"computeplane"`
	PodSecurity  string   `json:"podSecurity"`
	Routed       []string `json:"routed"`
	Management   []string `json:"management"`
	Reachable    []string `json:"reachable"`
	// Credentials: whether the tenant's users may read its ComputePlane's
	// credentials through the cluster chart's dashboard Role
	// (posture.CredentialsWithheld, or posture.CredentialsReadable under
	// delivery: Platform, whose chart the function cannot patch); "" without
	// a ComputePlane.
	Credentials string `json:"credentials"`
}

// Tenants states every tenant of the render, sorted by namespace, from the
// model the render was made from: reading all of a large fleet's objects
// again would cost as much as rendering them, and the posture tests prove
// that the objects say the same (pkg/posture). podSecurity is "" for a
// tenant without a ComputePlane, posture.PodSecurityNone under delivery:
// Platform; reachable lists only what a ComputePlane's VMs may reach, so it
// is empty without one.
func Tenants(f *model.Fleet) []Tenant {
	out := make([]Tenant, 0, len(f.Tenants))
	for _, t := range f.SortedTenants() {
		row := Tenant{Name: t.Name, Namespace: t.Namespace, ComputePlane: t.ComputePlane,
			Routed: []string{}, Management: []string{}, Reachable: []string{}}
		for _, a := range t.Apps {
			id := a.Kind + "/" + a.Name
			if a.Placement == api.PlacementComputePlane {
				row.Routed = append(row.Routed, id)
			} else {
				row.Management = append(row.Management, id)
			}
		}
		if t.ComputePlane {
			row.PodSecurity, row.Credentials = f.Config.Cluster.PodSecurity, posture.CredentialsWithheld
			if f.Config.Delivery == api.Platform {
				row.PodSecurity, row.Credentials = posture.PodSecurityNone, posture.CredentialsReadable
			}
			for kind, names := range render.ExposedApps(t) {
				for _, n := range names {
					row.Reachable = append(row.Reachable, kind+"/"+n)
				}
			}
		}
		for _, l := range [][]string{row.Routed, row.Management, row.Reachable} {
			slices.Sort(l)
		}
		row.Routed, row.Management, row.Reachable = slices.Compact(row.Routed), slices.Compact(row.Management), slices.Compact(row.Reachable)
		out = append(out, row)
	}
	return out
}
