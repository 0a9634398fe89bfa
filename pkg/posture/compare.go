package posture

import (
	"cmp"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// ChangeKind is the kind of a posture change (docs/fleet-repo.md, "The
// posture change").
type ChangeKind string

// The kinds of change.
const (
	ChangeComputePlane ChangeKind = "computeplane"
	ChangePodSecurity  ChangeKind = "podSecurity"
	ChangeExemption    ChangeKind = "exemption"
	ChangeExposure     ChangeKind = "exposure"
	ChangePlacement    ChangeKind = "placement"
	ChangeEgress       ChangeKind = "egress"
	ChangeNodeGroups   ChangeKind = "nodeGroups"
	ChangeGuard        ChangeKind = "guard"
	ChangeTenant       ChangeKind = "tenant"
	// ChangeRights is a routed app's rights inside its ComputePlane.
	ChangeRights ChangeKind = "rights"
	// ChangeNamespaces is per-app namespaces turned on or off.
	ChangeNamespaces ChangeKind = "namespaces"
	// ChangeCredentials is the tenant's users' read of its ComputePlane's
	// credentials, through the cluster chart's dashboard Role, withheld
	// or readable.
	ChangeCredentials ChangeKind = "credentials"
	// ChangeDefinition is a definition's kind routed onto the ComputePlane
	// or no longer (the guard's G1 then stops refusing its releases on the
	// management nodes), or a routed definition's chart changed. Fleet-wide.
	ChangeDefinition ChangeKind = "definition"
	// ChangeRouting is a tenant's routed releases made editable through
	// Cozystack's API or no longer, or a ClusterRole its in-cluster
	// baseline defines for a grant allowing more or less.
	ChangeRouting ChangeKind = "routing"
)

// The words of from and to.
const (
	Enabled   = "enabled"
	Disabled  = "disabled"
	Reachable = "reachable"
	Denied    = "denied"
	Allowed   = "allowed"
	Present   = "present"
	Absent    = "absent"
)

// Change is one change of posture, a row of docs/fleet-repo.md's table. Tenant and
// Namespace are empty for the guard, which is fleet-wide.
type Change struct {
	Tenant    string     `json:"tenant"`
	Namespace string     `json:"namespace"`
	Change    ChangeKind `json:"change"`
	Subject   string     `json:"subject"`
	From      string     `json:"from"`
	To        string     `json:"to"`
	Weakens   bool       `json:"weakens"`
	// Cause names the input that made the change, where the objects tell
	// it: a definition ("ApplicationDefinition jupyterhub"), a config field
	// ("spec.routing.editableThroughAPI"), a tenant; "" where they do not.
	Cause string `json:"cause"`
	// Role of a guard identity change: wire.GuardFluxIdentitiesVariable,
	// wire.GuardHelmIdentitiesVariable or wire.GuardPlatformIdentitiesVariable. Not part of the JSON shape; the words
	// name it.
	Role string `json:"-"`
}

// The words of a definition's placement change (from and to), as the
// placement change of an app has them.
const (
	ComputePlane    = string(api.PlacementComputePlane)
	ManagementPlane = string(api.PlacementManagementPlane)
)

// Compare lists what changes from old to new, sorted as the summary shows them:
// weakening first, then by tenant namespace, change and subject.
//
// A tenant added or removed is one tenant change, and a ComputePlane
// enabled or disabled one computeplane change: what comes or goes with it
// (its Pod Security, exemptions, exposures, egress, node groups) is part of
// that change, not a change of its own. The same holds for the guard's
// identities when the guard comes or goes.
func Compare(old, new *State) []Change {
	var out []Change
	add := func(c Change) { out = append(out, c) }
	namespaces := map[string]bool{}
	for ns := range old.Tenants {
		namespaces[ns] = true
	}
	for ns := range new.Tenants {
		namespaces[ns] = true
	}
	for ns := range namespaces {
		o, n := old.Tenants[ns], new.Tenants[ns]
		base := Change{Tenant: TenantName(ns), Namespace: ns}
		with := func(kind ChangeKind, subject, from, to string, weakens bool) Change {
			c := base
			c.Change, c.Subject, c.From, c.To, c.Weakens = kind, subject, from, to, weakens
			return c
		}
		switch {
		case o == nil:
			add(with(ChangeTenant, ns, Absent, Present, false))
			continue
		case n == nil:
			add(with(ChangeTenant, ns, Present, Absent, false))
			continue
		}
		for _, app := range unionKeys(o.Apps, n.Apps) {
			from, inOld := o.Apps[app]
			to, inNew := n.Apps[app]
			if inOld && inNew && from != to {
				c := with(ChangePlacement, app, string(from), string(to), from == api.PlacementComputePlane)
				c.Cause = placementCause(old.Guard, new.Guard, app)
				add(c)
			}
		}
		if o.ComputePlane != n.ComputePlane {
			c := with(ChangeComputePlane, ns, Disabled, Enabled, false)
			if !n.ComputePlane {
				c = with(ChangeComputePlane, ns, Enabled, Disabled, true)
			}
			c.Cause = "Tenant " + c.Tenant + " (spec.computeplane)"
			add(c)
			continue
		}
		if !n.ComputePlane {
			continue
		}
		if o.PodSecurity != n.PodSecurity {
			c := with(ChangePodSecurity, ns, o.PodSecurity, n.PodSecurity, levelRank(n.PodSecurity) < levelRank(o.PodSecurity))
			c.Cause = "spec.cluster.podSecurity"
			if o.PodSecurity == PodSecurityNone || n.PodSecurity == PodSecurityNone {
				c.Cause = "spec.delivery"
			}
			add(c)
		}
		// An exemption means something only where a level is enforced:
		// from or to privileged, the level's change says it all.
		if levelRank(o.PodSecurity) > 0 && levelRank(n.PodSecurity) > 0 {
			added, removed := diffSets(o.Exempt, n.Exempt)
			for _, x := range added {
				add(because(with(ChangeExemption, x, Absent, Present, true), exemptionCause))
			}
			for _, x := range removed {
				add(because(with(ChangeExemption, x, Present, Absent, false), exemptionCause))
			}
		}
		added, removed := diffSets(o.Reachable, n.Reachable)
		for _, x := range added {
			add(because(with(ChangeExposure, x, Denied, Reachable, true), exposureCause(ns, x)))
		}
		for _, x := range removed {
			add(because(with(ChangeExposure, x, Reachable, Denied, false), exposureCause(ns, x)))
		}
		if o.AncestorIngress != "" && n.AncestorIngress != "" && o.AncestorIngress != n.AncestorIngress {
			add(because(with(ChangeEgress, ns, o.AncestorIngress, n.AncestorIngress, n.AncestorIngress == Allowed), "spec.cluster.egress.allowAncestorIngress"))
		}
		for _, app := range unionKeys(o.Rights, n.Rights) {
			from, inOld := o.Rights[app]
			to, inNew := n.Rights[app]
			if inOld && inNew && from != to {
				c := with(ChangeRights, app, from, to, rightsWeaken(from, to))
				if strings.Contains(from+to, GrantPrefix) {
					c.Cause = "spec.routing.grants"
				}
				add(c)
			}
		}
		if o.Editing != "" && n.Editing != "" && o.Editing != n.Editing {
			c := with(ChangeRouting, ns, o.Editing, n.Editing, n.Editing == EditingAPI)
			c.Cause = "spec.routing.editableThroughAPI"
			add(c)
		}
		for _, role := range unionKeys(o.Roles, n.Roles) {
			from, inOld := o.Roles[role]
			to, inNew := n.Roles[role]
			if !inOld || !inNew || slices.Equal(from, to) {
				// A role that comes or goes with its grant: the rights of
				// the apps it is bound to say it.
				continue
			}
			added, _ := diffSets(from, to)
			c := with(ChangeRouting, RolePrefix+role, strings.Join(from, " "), strings.Join(to, " "), len(added) > 0)
			c.Cause = "spec.routing.grants"
			add(c)
		}
		if o.Credentials != n.Credentials {
			add(with(ChangeCredentials, ns, o.Credentials, n.Credentials, n.Credentials == CredentialsReadable))
		}
		if o.AppNamespaces != "" && n.AppNamespaces != "" && o.AppNamespaces != n.AppNamespaces {
			add(because(with(ChangeNamespaces, ns, o.AppNamespaces, n.AppNamespaces, n.AppNamespaces == api.NamespacesShared), "spec.routing.namespaces"))
		}
		for _, g := range unionKeys(o.NodeGroups, n.NodeGroups) {
			from, to := cmp.Or(o.NodeGroups[g], Absent), cmp.Or(n.NodeGroups[g], Absent)
			if from != to {
				add(with(ChangeNodeGroups, g, from, to, false))
			}
		}
	}
	out = append(out, compareGuard(old.Guard, new.Guard)...)
	out = append(out, compareRoutes(old.Guard, new.Guard)...)
	Sort(out)
	return out
}

// exemptionCause: the cluster's level and addons decide its exemptions.
const exemptionCause = "spec.cluster.podSecurity and spec.cluster.values"

// exposureCause names the app whose annotation opens it to the VMs.
func exposureCause(ns, app string) string {
	kind, name, _ := strings.Cut(app, "/")
	return kind + " " + ns + "/" + name + " (annotation " + api.ReachableAnnotation + ")"
}

func because(c Change, cause string) Change {
	c.Cause = cause
	return c
}

// RolePrefix begins the subject of a routing change of a ClusterRole.
const RolePrefix = "ClusterRole "

// compareRoutes lists the definitions whose kinds the guard routes onto
// the ComputePlane, or no longer, and the routed definitions whose chart
// changes. Apps need not exist: the guard refuses, on the management
// nodes, the releases of every routed kind and chart that anyone makes
// there (cozystack-api for a tenant's user, say), so a kind that leaves
// weakens every tenant whether or not the inputs hold one of its apps. A
// new chart weakens too: the old one is no longer refused on the
// management nodes, and the new one runs, unreviewed, inside every
// ComputePlane.
func compareRoutes(old, new *Guard) []Change {
	if old == nil || new == nil || !old.RoutesKnown || !new.RoutesKnown {
		return nil
	}
	var out []Change
	for _, kind := range unionKeys(old.Routes, new.Routes) {
		from, inOld := old.Routes[kind]
		to, inNew := new.Routes[kind]
		switch {
		case inOld && !inNew:
			out = append(out, Change{Change: ChangeDefinition, Subject: kind, From: ComputePlane, To: ManagementPlane, Weakens: true, Cause: definitionCause(from)})
		case !inOld && inNew:
			out = append(out, Change{Change: ChangeDefinition, Subject: kind, From: ManagementPlane, To: ComputePlane, Cause: definitionCause(to)})
		case from.ChartRef.Name != "" && to.ChartRef.Name != "" && from.ChartRef != to.ChartRef:
			out = append(out, Change{Change: ChangeDefinition, Subject: kind, From: chartWords(from.ChartRef), To: chartWords(to.ChartRef), Weakens: true, Cause: definitionCause(to)})
		}
	}
	return out
}

// chartWords states a chartRef as "<kind> <namespace>/<name>".
func chartWords(c render.GuardChart) string {
	if c.Namespace == "" {
		return c.Kind + " " + c.Name
	}
	return c.Kind + " " + c.Namespace + "/" + c.Name
}

func definitionCause(r render.GuardRoute) string {
	if r.Definition == "" {
		return ""
	}
	return "ApplicationDefinition " + r.Definition
}

// placementCause names the definition whose placement moved an app: apps
// take their placement from their kind's definition alone.
func placementCause(old, new *Guard, app string) string {
	kind, _, _ := strings.Cut(app, "/")
	for _, g := range []*Guard{old, new} {
		if g == nil {
			continue
		}
		if r, ok := g.Routes[kind]; ok && r.Definition != "" {
			return definitionCause(r) + " (placement)"
		}
	}
	return ""
}

func compareGuard(old, new *Guard) []Change {
	switch {
	case old == nil && new == nil:
		return nil
	case old == nil:
		return []Change{{Change: ChangeGuard, Subject: wire.GuardName, From: Disabled, To: Enabled, Cause: "spec.guard.enabled"}}
	case new == nil:
		return []Change{{Change: ChangeGuard, Subject: wire.GuardName, From: Enabled, To: Disabled, Weakens: true, Cause: "spec.guard.enabled"}}
	}
	var out []Change
	for _, list := range []struct {
		role     string
		old, new []string
	}{{wire.GuardFluxIdentitiesVariable, old.FluxIdentities, new.FluxIdentities}, {wire.GuardHelmIdentitiesVariable, old.HelmIdentities, new.HelmIdentities}, {wire.GuardPlatformIdentitiesVariable, old.PlatformIdentities, new.PlatformIdentities}} {
		added, removed := diffSets(list.old, list.new)
		for _, id := range added {
			out = append(out, Change{Change: ChangeGuard, Subject: id, From: Absent, To: Present, Weakens: true, Role: list.role, Cause: "spec.guard." + list.role})
		}
		for _, id := range removed {
			out = append(out, Change{Change: ChangeGuard, Subject: id, From: Present, To: Absent, Role: list.role, Cause: "spec.guard." + list.role})
		}
	}
	return out
}

// Sort orders changes as the summary shows them: weakening first, then by tenant
// namespace (the fleet-wide guard first), change and subject; from, to and
// role keep the order total.
func Sort(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int {
		if a.Weakens != b.Weakens {
			if a.Weakens {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Change, b.Change), cmp.Compare(a.Subject, b.Subject),
			cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Role, b.Role))
	})
}

// rightsWeaken reports whether a routed app may do more inside its
// ComputePlane with rights to than with rights from: back to super-admin,
// or a ClusterRole granted that it did not have.
func rightsWeaken(from, to string) bool {
	switch {
	case to == RightsSuperAdmin:
		return from != RightsSuperAdmin
	case from == RightsSuperAdmin:
		return false
	}
	_, fromRole, _ := strings.Cut(from, GrantPrefix)
	_, toRole, _ := strings.Cut(to, GrantPrefix)
	return toRole != "" && toRole != fromRole
}

// levelRank orders Pod Security levels by what they enforce; none (no Pod
// Security) and privileged enforce nothing alike.
func levelRank(level string) int {
	switch level {
	case api.PodSecurityRestricted:
		return 2
	case api.PodSecurityBaseline:
		return 1
	}
	return 0
}

func diffSets(old, new []string) (added, removed []string) {
	for _, x := range new {
		if !slices.Contains(old, x) {
			added = append(added, x)
		}
	}
	for _, x := range old {
		if !slices.Contains(new, x) {
			removed = append(removed, x)
		}
	}
	return added, removed
}

func unionKeys[V any](a, b map[string]V) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
