package posture

import (
	"maps"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// PodSecurityNone is the level of a ComputePlane under delivery: Platform,
// whose cluster runs without Pod Security (docs/security.md).
const PodSecurityNone = "none"

// State is one side's posture: per tenant namespace, and the guard.
type State struct {
	// Tenants by namespace: every tenant namespace that holds an object.
	Tenants map[string]*Tenant
	// Guard is nil when the side has no guard.
	Guard *Guard
}

// Tenant is one tenant's posture as its objects show it.
type Tenant struct {
	Namespace string
	// ComputePlane is true with a Direct cluster release, or (delivery:
	// Platform, whose cluster the platform renders) with an egress policy
	// or a release routed onto a cluster.
	ComputePlane bool
	// PodSecurity is the enforced level: from the admission ConfigMap; a
	// Direct cluster without one enforces nothing (privileged); a Platform
	// ComputePlane has none (PodSecurityNone); "" without a ComputePlane.
	PodSecurity string
	Exempt      []string
	// Reachable apps ("Kind/name") and AncestorIngress, from the egress
	// policy (see Record).
	Reachable       []string
	AncestorIngress string
	// NodeGroups of a Direct cluster (see Record); nil otherwise.
	NodeGroups map[string]string
	// Apps by "Kind/name": where each runs.
	Apps map[string]api.Placement
	// Rights of each routed app inside the ComputePlane, by "Kind/name"
	// (RightsSuperAdmin, RightsNamespaceAdmin, or that with "+ ClusterRole
	// <name>" for a grant).
	Rights map[string]string
	// Credentials is CredentialsWithheld when the tenant's users cannot
	// read its ComputePlane's credentials through the cluster chart's
	// dashboard Role (a Direct cluster whose release removes that rule),
	// CredentialsReadable when they can (a Direct cluster without the
	// patch; under Platform, whose chart the function cannot patch); ""
	// without a ComputePlane.
	Credentials string
	// AppNamespaces is NamespacesPerApp or NamespacesShared as the routed
	// releases' target namespaces show it; "" without routed apps.
	AppNamespaces string
	// Listed are the apps ("Kind/name") whose releases Cozystack's API
	// and dashboard list (Record.Listed).
	Listed map[string]bool
	// Editing is how its routed releases may be changed: EditingAPI when
	// any of them is listed by Cozystack's API (spec.routing.
	// editableThroughAPI), EditingFleet when none is; "" without routed
	// apps.
	Editing string
	// Roles are the ClusterRoles its in-cluster baseline defines with
	// rules, by name: their permissions (Record.Rules).
	Roles map[string][]string
	// Cluster is true when a Direct cluster release is there: the
	// cluster Flux never prunes.
	Cluster bool
	// WorkerConsoles is WorkerConsolesOpen for a tenant with a ComputePlane,
	// "" without one: a fact of the platform, not of the render, which no
	// object the function writes can change (so no change is ever
	// reported of it).
	WorkerConsoles string

	direct, egress, withheld bool
	accounts                 map[string]string // routed app -> account
	grants                   map[string]string // account -> ClusterRole
}

// What a routed app may do inside its ComputePlane.
const (
	// RightsSuperAdmin: it installs with the cluster's super-admin
	// kubeconfig (no spec.serviceAccountName).
	RightsSuperAdmin = "super-admin"
	// RightsNamespaceAdmin: it installs as its own account, admin of its
	// namespace only.
	RightsNamespaceAdmin = "namespace-admin"
	// GrantPrefix joins a grant to RightsNamespaceAdmin.
	GrantPrefix = " + ClusterRole "
)

// Whether a tenant's users may read its ComputePlane's credentials
// (Tenant.Credentials).
const (
	CredentialsWithheld = "withheld"
	CredentialsReadable = "readable"
)

// How a tenant's routed releases may be changed (Tenant.Editing).
const (
	// EditingFleet: only through the fleet repo; Cozystack's API does not
	// list them.
	EditingFleet = "fleet"
	// EditingAPI: Cozystack's API lists them and lets the tenant's users
	// edit them.
	EditingAPI = "api"
)

// WorkerConsolesOpen is Tenant.WorkerConsoles of every tenant with a
// ComputePlane: Cozystack's tenant use role (cozy:tenant:use:base,
// aggregated into admin and super-admin) grants the serial console, VNC,
// port-forward, start, stop and restart of every VirtualMachine and
// VirtualMachineInstance of the tenant's namespace, the ComputePlane's
// workers included (cozystack#4172, #4173). virt-api serves those
// subresources, so no admission policy sees them; only the platform's
// RBAC can close them (docs/security.md).
const WorkerConsolesOpen = "open to the tenant's use role (console, VNC, port-forward, start, stop, restart; cozystack#4172, #4173)"

// Guard is the management-plane guard's identities and routes.
type Guard struct {
	FluxIdentities, HelmIdentities, PlatformIdentities []string
	// Routes by kind, and whether they are known (Record.Routes).
	Routes      map[string]render.GuardRoute
	RoutesKnown bool
}

// Assemble puts the records of one side together. Records of namespaces
// that are not tenant namespaces (cozy-system, apps outside any tenant) add
// nothing but the guard.
func Assemble(records []Record) *State {
	s := &State{Tenants: map[string]*Tenant{}}
	var flat []Record
	for _, r := range records {
		flat = append(flat, r)
		flat = append(flat, r.InCluster...)
	}
	for _, r := range flat {
		if r.Kind == KindGuard {
			s.Guard = &Guard{FluxIdentities: r.FluxIdentities, HelmIdentities: r.HelmIdentities, PlatformIdentities: r.PlatformIdentities,
				Routes: r.Routes, RoutesKnown: r.RoutesKnown}
			continue
		}
		ns := r.Key.Namespace
		if !IsTenantNamespace(ns) {
			continue
		}
		t := s.Tenants[ns]
		if t == nil {
			t = &Tenant{Namespace: ns, Apps: map[string]api.Placement{}, Rights: map[string]string{},
				Listed: map[string]bool{}, Roles: map[string][]string{},
				accounts: map[string]string{}, grants: map[string]string{}}
			s.Tenants[ns] = t
		}
		switch r.Kind {
		case KindCluster:
			// Pools read before the cluster stay (on the SplitPools line
			// its values hold no node group).
			t.direct, t.withheld = true, r.CredentialsWithheld
			t.NodeGroups = mergeGroups(t.NodeGroups, r.NodeGroups)
		case KindPool:
			t.NodeGroups = mergeGroups(t.NodeGroups, r.NodeGroups)
		case KindAdmission:
			t.PodSecurity, t.Exempt = r.Level, r.Exempt
		case KindEgress:
			t.egress, t.Reachable, t.AncestorIngress = true, r.Reachable, r.AncestorIngress
		case KindApp:
			t.Apps[r.App] = r.Placement
			if r.Listed {
				t.Listed[r.App] = true
			}
			if r.Placement == api.PlacementComputePlane {
				switch {
				case r.Listed:
					t.Editing = EditingAPI
				case t.Editing == "":
					t.Editing = EditingFleet
				}
				t.accounts[r.App] = r.Account
				if r.TargetNamespace != ns {
					t.AppNamespaces = api.NamespacesPerApp
				} else if t.AppNamespaces == "" {
					t.AppNamespaces = api.NamespacesShared
				}
			}
		case KindGrant:
			t.grants[r.Account] = r.ClusterRole
		case KindRole:
			t.Roles[strings.TrimPrefix(r.Key.Name, inClusterKeyPrefix+"/")] = r.Rules
		}
	}
	for _, t := range s.Tenants {
		for app, account := range t.accounts {
			switch role, granted := t.grants[account]; {
			case account == "":
				t.Rights[app] = RightsSuperAdmin
			case granted:
				t.Rights[app] = RightsNamespaceAdmin + GrantPrefix + role
			default:
				t.Rights[app] = RightsNamespaceAdmin
			}
		}
		routed := slices.Contains(slices.Collect(maps.Values(t.Apps)), api.PlacementComputePlane)
		t.ComputePlane = t.direct || t.egress || routed
		t.Cluster = t.direct
		switch {
		case !t.ComputePlane:
		case t.withheld:
			t.Credentials = CredentialsWithheld
		default:
			t.Credentials = CredentialsReadable
		}
		if t.ComputePlane {
			t.WorkerConsoles = WorkerConsolesOpen
		}
		switch {
		case !t.ComputePlane:
			t.PodSecurity, t.Exempt, t.Reachable, t.AncestorIngress = "", nil, nil, ""
		case t.direct && t.PodSecurity == "":
			t.PodSecurity = api.PodSecurityPrivileged
		case !t.direct:
			t.PodSecurity, t.Exempt = PodSecurityNone, nil
		}
	}
	return s
}

// mergeGroups adds the node groups of a record to a tenant's.
func mergeGroups(into, from map[string]string) map[string]string {
	if into == nil {
		into = map[string]string{}
	}
	maps.Copy(into, from)
	return into
}
