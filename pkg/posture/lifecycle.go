package posture

import (
	"cmp"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// FactKind is the kind of a lifecycle fact.
type FactKind string

// The lifecycle facts a reviewer must see beside the posture: none of them
// loosens isolation, each of them does something to what runs.
const (
	// FactAdded: an app is added; Helm installs it.
	FactAdded FactKind = "added"
	// FactRemoved: an app is removed; Helm uninstalls it.
	FactRemoved FactKind = "removed"
	// FactMoved: an app moves between the management cluster and its
	// ComputePlane; Helm installs it afresh on the new one and uninstalls
	// it from the old, and its data does not move.
	FactMoved FactKind = "moved"
	// FactClusterKept: a tenant's ComputePlane cluster leaves the fleet
	// (its ComputePlane turned off, or the tenant removed); prune is
	// disabled on it, so it keeps running until someone deletes it.
	FactClusterKept FactKind = "clusterKept"
	// FactDashboardLost: an app's release is no longer listed by
	// Cozystack's API; the app leaves Cozystack's dashboard.
	FactDashboardLost FactKind = "dashboardLost"
)

// Fact is one lifecycle fact. Subject is the app ("Kind/name"), or the
// tenant's namespace for FactClusterKept; From and To are placements
// (ComputePlane, ManagementPlane), Absent or Present, or, for
// FactDashboardLost, Listed and Unlisted. Cause names the input that made
// it, as in Change.
type Fact struct {
	Tenant    string   `json:"tenant"`
	Namespace string   `json:"namespace"`
	Fact      FactKind `json:"fact"`
	Subject   string   `json:"subject"`
	From      string   `json:"from"`
	To        string   `json:"to"`
	Cause     string   `json:"cause"`
}

// The words of a dashboard fact's from and to.
const (
	Listed   = "listed"
	Unlisted = "unlisted"
)

// Lifecycle lists the lifecycle facts from old to new, sorted by tenant
// namespace, fact and subject. Apps are those whose releases the two
// sides read (Review reads the releases whose files change).
func Lifecycle(old, new *State) []Fact {
	var out []Fact
	for _, ns := range unionKeys(old.Tenants, new.Tenants) {
		o, n := old.Tenants[ns], new.Tenants[ns]
		fact := func(kind FactKind, subject, from, to, cause string) {
			out = append(out, Fact{Tenant: TenantName(ns), Namespace: ns, Fact: kind, Subject: subject, From: from, To: to, Cause: cause})
		}
		var oApps, nApps map[string]api.Placement
		if o != nil {
			oApps = o.Apps
		}
		if n != nil {
			nApps = n.Apps
		}
		for _, app := range unionKeys(oApps, nApps) {
			from, inOld := oApps[app]
			to, inNew := nApps[app]
			switch {
			case !inOld:
				fact(FactAdded, app, Absent, string(to), appCause(ns, app, o == nil))
			case !inNew:
				fact(FactRemoved, app, string(from), Absent, appCause(ns, app, n == nil))
			case from != to:
				fact(FactMoved, app, string(from), string(to), placementCause(old.Guard, new.Guard, app))
			}
			if inOld && inNew && o.Listed[app] && !n.Listed[app] {
				cause := placementCause(old.Guard, new.Guard, app)
				if from == to || (o.Editing == EditingAPI && n.Editing == EditingFleet) {
					cause = "spec.routing.editableThroughAPI"
				}
				fact(FactDashboardLost, app, Listed, Unlisted, cause)
			}
		}
		if o != nil && o.Cluster && (n == nil || !n.Cluster) {
			cause := "Tenant " + TenantName(ns) + " (spec.computeplane)"
			switch {
			case n == nil:
				cause = "Tenant " + TenantName(ns) + " (removed)"
			case n.ComputePlane:
				// Still a ComputePlane, now the platform's own cluster.
				cause = "spec.delivery"
			}
			fact(FactClusterKept, ns, Present, Absent, cause)
		}
	}
	slices.SortFunc(out, func(a, b Fact) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Fact, b.Fact), cmp.Compare(a.Subject, b.Subject))
	})
	return out
}

// appCause names the app's own object in the inputs, or its tenant when
// the whole tenant comes or goes.
func appCause(ns, app string, tenant bool) string {
	if tenant {
		return "Tenant " + TenantName(ns)
	}
	kind, name, _ := strings.Cut(app, "/")
	return kind + " " + ns + "/" + name
}
