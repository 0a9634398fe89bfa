package posture

import (
	"fmt"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// Sentence states a change in words, for a reader who does not read YAML.
func Sentence(c Change) string {
	switch c.Change {
	case ChangeComputePlane:
		if c.To == Enabled {
			return "its ComputePlane is enabled"
		}
		return "its ComputePlane is disabled"
	case ChangePodSecurity:
		return fmt.Sprintf("the Pod Security level of its ComputePlane goes from `%s` to `%s`", c.From, c.To)
	case ChangeExemption:
		if c.To == Present {
			return fmt.Sprintf("namespace `%s` of its ComputePlane becomes exempt from Pod Security", c.Subject)
		}
		return fmt.Sprintf("namespace `%s` of its ComputePlane is no longer exempt from Pod Security", c.Subject)
	case ChangeExposure:
		if c.To == Reachable {
			return fmt.Sprintf("`%s` becomes reachable from its ComputePlane's VMs", c.Subject)
		}
		return fmt.Sprintf("`%s` is no longer reachable from its ComputePlane's VMs", c.Subject)
	case ChangePlacement:
		if c.To == "ComputePlane" {
			return fmt.Sprintf("`%s` moves from the management plane onto its ComputePlane", c.Subject)
		}
		return fmt.Sprintf("`%s` moves off its ComputePlane onto the management plane", c.Subject)
	case ChangeEgress:
		return fmt.Sprintf("its ComputePlane's VMs are %s the ingress of its ancestor tenants (was %s)", map[string]string{Allowed: "allowed", Denied: "denied"}[c.To], c.From)
	case ChangeNodeGroups:
		switch {
		case c.From == Absent:
			return fmt.Sprintf("node group `%s` is added: `%s`", c.Subject, c.To)
		case c.To == Absent:
			return fmt.Sprintf("node group `%s` is removed (was `%s`)", c.Subject, c.From)
		}
		return fmt.Sprintf("node group `%s` changes from `%s` to `%s`", c.Subject, c.From, c.To)
	case ChangeGuard:
		switch {
		case c.Subject == wire.GuardName && c.To == Enabled:
			return "the management-plane guard is turned on"
		case c.Subject == wire.GuardName:
			return "the management-plane guard is turned off"
		}
		role := "fleet identity (may set spec.kubeConfig and read a ComputePlane's credentials)"
		switch c.Role {
		case wire.GuardHelmIdentitiesVariable:
			role = "helm-controller identity (may set a kubeConfig of another cluster)"
		case wire.GuardPlatformIdentitiesVariable:
			role = "platform identity (may change ComputePlane VMs and their disks)"
		}
		if c.To == Present {
			return fmt.Sprintf("`%s` is added to the guard as a %s", c.Subject, role)
		}
		return fmt.Sprintf("`%s` is removed from the guard as a %s", c.Subject, role)
	case ChangeTenant:
		if c.To == Present {
			return "the tenant is added"
		}
		return "the tenant is removed"
	case ChangeRights:
		return fmt.Sprintf("`%s` installs inside its ComputePlane as %s (was %s)", c.Subject, rightsWords(c.To), rightsWords(c.From))
	case ChangeNamespaces:
		if c.To == "PerApp" {
			return "its routed apps get a namespace each inside its ComputePlane (were sharing one)"
		}
		return "its routed apps share one namespace inside its ComputePlane (had one each)"
	case ChangeCredentials:
		if c.To == CredentialsReadable {
			return "the tenant's users can read its ComputePlane's super-admin kubeconfig (the cluster chart's dashboard Role grants it)"
		}
		return "the tenant's users can no longer read its ComputePlane's super-admin kubeconfig"
	case ChangeDefinition:
		switch {
		case c.To == ManagementPlane:
			return fmt.Sprintf("`%s` apps are no longer routed onto the ComputePlane: the guard stops refusing their releases on the management nodes", c.Subject)
		case c.To == ComputePlane:
			return fmt.Sprintf("`%s` apps are routed onto the ComputePlane: the guard refuses their releases on the management nodes", c.Subject)
		}
		return fmt.Sprintf("the chart of routed `%s` apps changes from `%s` to `%s`", c.Subject, c.From, c.To)
	case ChangeRouting:
		if role, ok := strings.CutPrefix(c.Subject, RolePrefix); ok {
			return fmt.Sprintf("ClusterRole `%s`, which its in-cluster baseline binds to routed apps, changes: %s", role, permissionWords(c.From, c.To))
		}
		if c.To == EditingAPI {
			return "its routed releases become editable through Cozystack's API"
		}
		return "its routed releases can be changed only through the fleet repo again"
	}
	return fmt.Sprintf("%s %s changes from %s to %s", c.Change, c.Subject, c.From, c.To)
}

// Why says in one line why a change matters.
func Why(c Change) string {
	switch c.Change {
	case ChangeComputePlane:
		if c.Weakens {
			return "the tenant's code-running apps lose their own cluster; nothing of theirs may run on the management nodes' shared kernel instead."
		}
		return "code-running apps of the tenant get their own hardened cluster instead of the management nodes' shared kernel."
	case ChangePodSecurity:
		if c.Weakens {
			return "pods in the ComputePlane may do more (privileged containers, host namespaces, running as root), which gives the tenant's code more reach into its VMs."
		}
		if c.To == PodSecurityNone {
			return "under delivery: Platform the ComputePlane runs without Pod Security, as privileged does."
		}
		return "pods in the ComputePlane may do less than before."
	case ChangeExemption:
		if c.Weakens {
			return "any pod created in that namespace escapes Pod Security entirely."
		}
		return "pods in that namespace are held to the cluster's level again."
	case ChangeExposure:
		if c.Weakens {
			return "the VMs run the tenant's untrusted code; they can now open connections to this app on the management cluster."
		}
		return "the VMs can no longer connect to this app."
	case ChangePlacement:
		if c.Weakens {
			return "the app runs user code, now on the management nodes' shared kernel instead of the tenant's own cluster."
		}
		return "the app's code now runs isolated on the tenant's own cluster."
	case ChangeEgress:
		if c.Weakens {
			return "the management API can be published on those ingress pods with TLS passthrough, so the VMs may now reach it."
		}
		return "the VMs can no longer reach the ancestors' ingress, where the management API may be published."
	case ChangeNodeGroups:
		return "capacity and cost of the ComputePlane change; isolation does not."
	case ChangeGuard:
		switch {
		case c.Subject == wire.GuardName && c.Weakens:
			return "nothing on the live management cluster stops an app that runs code from running outside its ComputePlane, anyone from setting spec.kubeConfig, or a tenant's VM from mounting the ComputePlane's credentials or a worker's disks."
		case c.Subject == wire.GuardName:
			return "the live management cluster refuses code-running apps outside their ComputePlane, kubeConfig from anyone but Flux, and VMs that carry the ComputePlane's credentials or a worker's disks; break-glass: cluster administrators (system:masters) may still delete a worker VM or remove its finalizers."
		case c.Weakens:
			return "whoever holds this identity passes the guard's checks: it can point Flux objects at any cluster or change ComputePlane VMs."
		}
		return "this identity no longer passes the guard's checks."
	case ChangeRights:
		switch {
		case c.Weakens && c.To == RightsSuperAdmin:
			return "its chart acts as cluster-admin of the ComputePlane: it can lift Pod Security on any namespace, bind any role and read every other app's Secrets."
		case c.Weakens:
			return "its chart may do cluster-wide what the granted ClusterRole allows, beyond its own namespace."
		}
		return "its chart may do less inside the ComputePlane than before."
	case ChangeNamespaces:
		if c.Weakens {
			return "the charts of one tenant's routed apps can read each other's Secrets and change each other's objects again."
		}
		return "one app's chart can no longer read another app's Secrets or change its objects."
	case ChangeCredentials:
		if c.Weakens {
			return "every user of the tenant administers the cluster that the design keeps from the tenant; under delivery: Platform the function cannot patch the platform's chart (docs/guard.md)."
		}
		return "the chart's dashboard Role no longer hands the tenant's users the cluster's super-admin kubeconfig."
	case ChangeDefinition:
		switch {
		case c.To == ManagementPlane:
			return "cozystack-api, for any user of any tenant, may now make releases of this kind on the management cluster, where their code shares the management nodes' kernel; this holds whether or not the inputs hold an app of this kind."
		case c.To == ComputePlane:
			return "releases of this kind run only on the tenants' own clusters; the guard refuses them anywhere else."
		}
		return "a different chart now runs inside every ComputePlane with the rights of the kind's apps there, and the guard no longer refuses releases of the old chart on the management nodes: review where the new chart comes from."
	case ChangeRouting:
		_, role := strings.CutPrefix(c.Subject, RolePrefix)
		switch {
		case role && c.Weakens:
			return "the routed apps bound to it may do more across the whole ComputePlane, beyond their own namespace."
		case role:
			return "the routed apps bound to it may do less inside the ComputePlane."
		case c.Weakens:
			return "cozystack-api lists the routed apps and lets the tenant's users edit them; an edit rebuilds the release without its kubeConfig, which would put the app's code on the management nodes: the guard refuses that edit, and without the guard nothing does."
		}
		return "no edit through Cozystack's API can rebuild a routed release without its kubeConfig; the apps leave Cozystack's dashboard."
	case ChangeTenant:
		if c.To == Present {
			return "a new tenant's own posture is in the tenants table below; adding it loosens no other tenant."
		}
		return "its generated objects are pruned from the fleet folder; Flux keeps a live ComputePlane (prune is disabled on it)."
	}
	return ""
}

// permissionWords states what a role gains (+) and loses (-), from two
// space-separated lists of permissions (Record.Rules).
func permissionWords(from, to string) string {
	added, removed := diffSets(strings.Fields(from), strings.Fields(to))
	var words []string
	for _, p := range added {
		words = append(words, "+`"+p+"`")
	}
	for _, p := range removed {
		words = append(words, "-`"+p+"`")
	}
	return strings.Join(words, ", ")
}

// FactSentence states a lifecycle fact in words.
func FactSentence(f Fact) string {
	where := func(p string) string {
		if p == ComputePlane {
			return "its ComputePlane"
		}
		return "the management cluster"
	}
	switch f.Fact {
	case FactAdded:
		return fmt.Sprintf("`%s` is added: Helm installs it on %s", f.Subject, where(f.To))
	case FactRemoved:
		return fmt.Sprintf("`%s` is removed: Helm uninstalls it from %s", f.Subject, where(f.From))
	case FactMoved:
		return fmt.Sprintf("`%s` moves from %s to %s: Helm installs it afresh on the new cluster and uninstalls it from the old one; its data (volumes, databases) does not move with it", f.Subject, where(f.From), where(f.To))
	case FactClusterKept:
		return "its ComputePlane's cluster leaves the fleet but keeps running: prune is disabled on it, so Flux never deletes it, VMs and disks included, until someone deletes its HelmRelease by hand"
	case FactDashboardLost:
		return fmt.Sprintf("`%s` leaves Cozystack's dashboard: Cozystack's API no longer lists it, and its users change it only through the fleet repo", f.Subject)
	}
	return fmt.Sprintf("%s %s: %s to %s", f.Fact, f.Subject, f.From, f.To)
}

// rightsWords states a routed app's rights inside its ComputePlane.
func rightsWords(r string) string {
	if r == RightsSuperAdmin {
		return "the cluster's super-admin"
	}
	if _, role, ok := strings.Cut(r, GrantPrefix); ok {
		return fmt.Sprintf("admin of its own namespace, with ClusterRole `%s` granted cluster-wide", role)
	}
	return "admin of its own namespace only"
}
