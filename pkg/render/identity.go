package render

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// The accounts the function renders (docs/guard.md, "Identities"). Each
// actor that the guard tells apart is an account of its own, because on
// Cozystack every Flux controller runs as one (cozy-fluxcd:flux): Flux then
// impersonates the account a Kustomization or HelmRelease names.
const (
	// FleetAccountRole names the ClusterRole and ClusterRoleBinding of the
	// fleet's account (the account is spec.fleet.serviceAccountName).
	FleetAccountRole = "computeplane-fleet"
	// InstallerRole is the ClusterRole of what apps/kubernetes creates in
	// its own namespace, bound there to the namespace's installer.
	InstallerRole = "computeplane-installer"
	// kubeSystem is where the chart binds its cloud controller manager to
	// the API server's authentication reader.
	kubeSystem = "kube-system"
)

// InstallerScopedName names the objects that give one tenant's installer
// its rights outside its namespace: the ClusterRole and ClusterRoleBinding
// of the chart's cluster-scoped objects and the Role and RoleBinding in
// kube-system.
func InstallerScopedName(namespace string) string { return InstallerRole + "-" + namespace }

var allVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// fleetRules are what the fleet applies, everywhere (tenant namespaces come
// and go): the kinds the function renders. Kustomize-controller reads,
// applies (server-side: patch, and create for a new object) and prunes
// (delete) them, and lists them for its health checks. escalate lets it
// write rules it does not hold itself (the installers', and its own role's
// next version); the API server asks for it by the role's name, and
// kustomize-controller applies by name (a server-side apply is a PATCH of
// the named object, a create too), so it is limited to the roles the
// fleet writes: its own and the installers' cluster roles
// (escalateClusterRoles) and the installers' roles (bindRoles). bind is
// limited to the installers' roles, and without an installer there is no
// bind at all and escalate only on its own role (a rule without
// resourceNames would be every role). The admission kinds are those the
// function renders where the platform serves them: MutatingAdmissionPolicy
// from 1.36 on, and MutatingWebhookConfiguration wherever
// flux-shard-operator runs, under every value of spec.releases.shardLabel,
// since a switch away from Admission or Webhook prunes the policy or the
// webhook configuration in the reconcile that changes this role.
func fleetRules(c *api.Config, bindClusterRoles, bindRoles []string) []rbacv1.PolicyRule {
	escalateClusterRoles := append([]string{FleetAccountRole}, bindClusterRoles...)
	admission := []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings"}
	if c.Platform.Serves(api.FeatureMutatingAdmissionPolicy) {
		admission = append(admission, "mutatingadmissionpolicies", "mutatingadmissionpolicybindings")
	}
	if c.Platform.ShardOperator == api.ShardOperatorPresent {
		admission = append(admission, "mutatingwebhookconfigurations")
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "serviceaccounts"}, Verbs: allVerbs},
		{APIGroups: []string{"helm.toolkit.fluxcd.io"}, Resources: []string{"helmreleases"}, Verbs: allVerbs},
		{APIGroups: []string{"kustomize.toolkit.fluxcd.io"}, Resources: []string{"kustomizations"}, Verbs: allVerbs},
		{APIGroups: []string{"source.extensions.fluxcd.io"}, Resources: []string{"artifactgenerators"}, Verbs: allVerbs},
		{APIGroups: []string{"cilium.io"}, Resources: []string{"ciliumnetworkpolicies"}, Verbs: allVerbs},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: admission, Verbs: allVerbs},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "roles"}, Verbs: allVerbs},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"escalate"}, ResourceNames: escalateClusterRoles},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterrolebindings", "rolebindings"}, Verbs: allVerbs},
	}
	if len(bindClusterRoles) > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: bindClusterRoles})
	}
	if c.Platform.PoolMigration == api.PoolMigrationAdopt {
		// The pools' MachineDeployments it hands to their releases
		// (RenderPoolAdoptions), only while the move renders them.
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"cluster.x-k8s.io"}, Resources: []string{"machinedeployments"}, Verbs: []string{"get", "list", "watch", "patch"}})
	}
	if c.Fleet == nil {
		// The stream's baseline chart source (RenderBaselineSource).
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"source.toolkit.fluxcd.io"}, Resources: []string{"ocirepositories"}, Verbs: allVerbs})
	}
	if len(bindRoles) > 0 {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles"}, Verbs: []string{"bind", "escalate"}, ResourceNames: bindRoles})
	}
	return rules
}

// RenderFleetAccount builds the fleet's own account: the ServiceAccount
// that every Kustomization the function renders names in
// spec.serviceAccountName (in the wiring namespace), its ClusterRole
// (fleetRules) and the ClusterRoleBinding of the two. Platform objects,
// rendered in every mode: the bootstrap applies them before the root
// Kustomization (docs/flux-wiring.md).
func RenderFleetAccount(f *model.Fleet, installerNamespaces []string) ([]Object, error) {
	ns, name := f.Config.FleetAccount()
	var bindClusterRoles, bindRoles []string
	if len(installerNamespaces) > 0 {
		bindClusterRoles = []string{InstallerRole}
	}
	for _, tns := range installerNamespaces {
		bindClusterRoles = append(bindClusterRoles, InstallerScopedName(tns))
		bindRoles = append(bindRoles, InstallerScopedName(tns))
	}
	sa := corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: managedLabels(nil)},
	}
	role := rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: FleetAccountRole, Labels: managedLabels(nil)},
		Rules:      fleetRules(f.Config, bindClusterRoles, bindRoles),
	}
	binding := rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: FleetAccountRole, Labels: managedLabels(nil)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: FleetAccountRole},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
	}
	objs, err := platformObjects(f, &sa, &role, &binding)
	for i := range objs {
		objs[i].Account = true
	}
	return objs, err
}

// platformObjects wraps typed objects as platform objects of the fleet.
func platformObjects(f *model.Fleet, objs ...any) ([]Object, error) {
	out := make([]Object, 0, len(objs))
	for _, obj := range objs {
		n, err := TypedNode(obj)
		if err != nil {
			return nil, err
		}
		m := obj.(interface {
			GetNamespace() string
			GetName() string
		})
		apiVersion, kind := typeOf(obj)
		out = append(out, Object{
			Body: NodeBody(n), APIVersion: apiVersion, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName(),
			Platform: true, Generated: true, From: f.Config.Ref, Origin: f.Config.Origin,
		})
	}
	return out, nil
}

// typeOf is the apiVersion and kind a typed object carries in its TypeMeta.
func typeOf(obj any) (string, string) {
	gvk := obj.(runtime.Object).GetObjectKind().GroupVersionKind()
	return gvk.GroupVersion().String(), gvk.Kind
}

// installerRules are what apps/kubernetes (Cozystack 3c780acd) creates in
// its release's namespace, and what the Roles it creates there grant (RBAC
// lets an account write a Role only with rules it holds itself). The chart's
// templates are the source: installer_test.go reads them from ../shared and
// checks that every kind they create and every rule their Roles grant is
// here, and nothing else.
func installerRules() []rbacv1.PolicyRule {
	rw := allVerbs
	return []rbacv1.PolicyRule{
		// Objects the chart creates (helm's release storage is Secrets).
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "serviceaccounts"}, Verbs: rw},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: rw},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: rw},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings"}, Verbs: rw},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: rw},
		{APIGroups: []string{"cilium.io"}, Resources: []string{"ciliumnetworkpolicies"}, Verbs: rw},
		{APIGroups: []string{"helm.toolkit.fluxcd.io"}, Resources: []string{"helmreleases"}, Verbs: rw},
		{APIGroups: []string{"cert-manager.io"}, Resources: []string{"certificates", "issuers"}, Verbs: rw},
		{APIGroups: []string{"cluster.x-k8s.io"}, Resources: []string{"clusters", "machinedeployments", "machinehealthchecks"}, Verbs: rw},
		{APIGroups: []string{"controlplane.cluster.x-k8s.io"}, Resources: []string{"kamajicontrolplanes"}, Verbs: rw},
		{APIGroups: []string{"infrastructure.cluster.x-k8s.io"}, Resources: []string{"kubevirtclusters", "kubevirtmachinetemplates"}, Verbs: rw},
		{APIGroups: []string{"cozystack.io"}, Resources: []string{"workloadmonitors"}, Verbs: rw},
		{APIGroups: []string{"v1.edp.epam.com"}, Resources: []string{"keycloakclients", "keycloakclientscopes"}, Verbs: rw},
		// What its Roles grant beyond that (kccm, kcsi, cluster-autoscaler,
		// talos-reconcile, cleanup); services and endpointslices with "*",
		// since only "*" covers a rule of "*".
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"*"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"*"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get"}},
		{APIGroups: []string{"cluster.x-k8s.io"}, Resources: []string{"machinedeployments/scale", "machines", "machinesets", "machinepools"}, Verbs: []string{"get", "list", "update", "watch"}},
		{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachines"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"kubevirt.io"}, Resources: []string{"virtualmachineinstances"}, Verbs: []string{"get", "list", "watch", "update"}},
		{APIGroups: []string{"subresources.kubevirt.io"}, Resources: []string{"virtualmachines/addvolume", "virtualmachines/removevolume"}, Verbs: []string{"update"}},
		{APIGroups: []string{"cdi.kubevirt.io"}, Resources: []string{"datavolumes"}, Verbs: []string{"get", "list", "create", "delete"}},
		{APIGroups: []string{"snapshot.storage.k8s.io"}, Resources: []string{"volumesnapshots"}, Verbs: []string{"get", "create", "delete"}},
		{APIGroups: []string{"kamaji.clastix.io"}, Resources: []string{"tenantcontrolplanes"}, Verbs: []string{"get", "list", "watch", "delete"}},
		{APIGroups: []string{"bootstrap.cluster.x-k8s.io"}, Resources: []string{"talosconfigtemplates"}, Verbs: []string{"get", "create", "patch", "update"}},
	}
}

// Names the chart gives its objects outside its namespace, for a release
// in a namespace. The kcsi ClusterRole and ClusterRoleBinding are named by
// the release alone in the chart, so two tenants' clusters (both released
// as computeplane) would collide; the cluster HelmRelease renames them with
// a post-renderer (clusterPostRenderers) to carry the namespace.
func installerClusterNames(release, namespace string) (clusterRoles, clusterRoleBindings []string) {
	kccm := namespace + "-" + release + "-kccm"
	coredns := namespace + "-" + release + "-talos-reconcile-coredns"
	kcsi := namespace + "-" + release + "-kcsi"
	return []string{kccm, kcsi, coredns}, []string{kccm, kcsi + "-binding", coredns}
}

// kccmKubeSystemBinding is the RoleBinding the chart writes in kube-system,
// and authReader the Role it binds (the API server's own).
func kccmKubeSystemBinding(release, namespace string) string {
	return namespace + "-" + release + "-kccm"
}

const authReader = "extension-apiserver-authentication-reader"

// installerClusterRules are the rights one tenant's installer needs beyond
// its namespace: its cluster-scoped objects by name (create cannot be
// limited by name in RBAC, and bind limits what it can bind to those
// names), the rules those ClusterRoles grant, and what the chart's lookups
// read (instance types, storage classes).
//
// On the SplitPools line each pool release writes its own talos-reconcile
// ClusterRole and ClusterRoleBinding, named after its namespace and release
// (apps/kubernetes-nodes templates/talos-reconcile-job.yaml at
// cozystack#3315): pools are the releases of the tenant's pools.
//
// splitChart: the installer upgrades the split apps/kubernetes (the
// SplitPools line, or poolMigration: Pin, under which the platform's
// upgrade to the split chart comes before the fleet's SplitPools render).
// On every upgrade that chart looks up its release's Namespace
// (templates/cluster.yaml at cozystack#3315, the guard against unadopted
// MachineDeployments), a cluster-scoped get: without it the upgrade fails
// ("cannot get resource namespaces"). It reads that one namespace only.
func installerClusterRules(release, namespace string, pools []string, splitChart bool) []rbacv1.PolicyRule {
	roles, bindings := installerClusterNames(release, namespace)
	for _, pool := range pools {
		coredns := namespace + "-" + pool + "-talos-reconcile-coredns"
		roles, bindings = append(roles, coredns), append(bindings, coredns)
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles", "clusterrolebindings"}, Verbs: []string{"create"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterroles"}, Verbs: []string{"get", "update", "patch", "delete", "bind"}, ResourceNames: roles},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"clusterrolebindings"}, Verbs: []string{"get", "update", "patch", "delete"}, ResourceNames: bindings},
		{APIGroups: []string{""}, Resources: []string{"nodes", "persistentvolumes"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get"}, ResourceNames: []string{"kube-dns"}},
		{APIGroups: []string{"instancetype.kubevirt.io"}, Resources: []string{"virtualmachineclusterinstancetypes"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses"}, Verbs: []string{"get", "list"}},
	}
	if splitChart {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}, ResourceNames: []string{namespace}})
	}
	return rules
}

// installerKubeSystemRules are its rights in kube-system: the one
// RoleBinding the chart writes there, and binding the Role it names.
func installerKubeSystemRules(release, namespace string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings"}, Verbs: []string{"create"}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings"}, Verbs: []string{"get", "update", "patch", "delete"}, ResourceNames: []string{kccmKubeSystemBinding(release, namespace)}},
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles"}, Verbs: []string{"bind"}, ResourceNames: []string{authReader}},
	}
}

// RenderInstallerRole builds the ClusterRole computeplane-installer
// (installerRules), a platform object rendered once under delivery: Direct
// and bound in each tenant namespace with a cluster.
func RenderInstallerRole(f *model.Fleet) ([]Object, error) {
	role := rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: InstallerRole, Labels: managedLabels(nil)},
		Rules:      installerRules(),
	}
	return platformObjects(f, &role)
}

// keptAnnotations keep an installer's objects when its tenant leaves the
// fleet, as its cluster HelmRelease is kept (wire.PruneAnnotation): the
// kept cluster is still upgraded, and uninstalled, as its installer, and
// helm-controller can do neither for an account without its rights.
func keptAnnotations() map[string]string {
	return map[string]string{wire.PruneAnnotation: wire.PruneDisabled}
}

// RenderInstaller builds one tenant's cluster installer (delivery: Direct):
// the ServiceAccount computeplane-installer that the cluster HelmRelease
// names in spec.serviceAccountName, so that helm-controller installs the
// chart, hooks included, as that account and nothing else, and its
// RoleBinding to computeplane-installer in the tenant namespace (both with
// the cluster, in the namespace's base unit); and, as platform objects, the
// ClusterRole, ClusterRoleBinding, Role and RoleBinding (in kube-system)
// computeplane-installer-<namespace> of its rights outside the namespace.
func RenderInstaller(f *model.Fleet, t *model.Tenant) ([]Object, error) {
	release, ns, scoped := wire.DirectClusterRelease, t.Namespace, InstallerScopedName(t.Namespace)
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: model.InstallerAccount, Namespace: ns}}
	sa := corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: metav1.ObjectMeta{Name: model.InstallerAccount, Namespace: ns, Labels: managedLabels(nil), Annotations: keptAnnotations()},
	}
	binding := rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: model.InstallerAccount, Namespace: ns, Labels: managedLabels(nil), Annotations: keptAnnotations()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: InstallerRole},
		Subjects:   subject,
	}
	var out []Object
	for _, obj := range []any{&sa, &binding} {
		n, err := TypedNode(obj)
		if err != nil {
			return nil, err
		}
		apiVersion, kind := typeOf(obj)
		out = append(out, tenantObject(t, n, apiVersion, kind, model.InstallerAccount))
	}
	clusterRole := rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: scoped, Labels: managedLabels(nil), Annotations: keptAnnotations()},
		Rules:      installerClusterRules(release, ns, poolReleases(f, t), upgradesSplitChart(f)),
	}
	clusterBinding := rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: scoped, Labels: managedLabels(nil), Annotations: keptAnnotations()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: scoped},
		Subjects:   subject,
	}
	ksRole := rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: scoped, Namespace: kubeSystem, Labels: managedLabels(nil), Annotations: keptAnnotations()},
		Rules:      installerKubeSystemRules(release, ns),
	}
	ksBinding := rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: scoped, Namespace: kubeSystem, Labels: managedLabels(nil), Annotations: keptAnnotations()},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: scoped},
		Subjects:   subject,
	}
	platform, err := platformObjects(f, &clusterRole, &clusterBinding, &ksRole, &ksBinding)
	if err != nil {
		return nil, fmt.Errorf("failed to render the installer of %s: %w", ns, err)
	}
	for i := range platform {
		platform[i].Tenant = ns
		platform[i].From, platform[i].Origin = out[0].From, out[0].Origin
	}
	out = append(out, platform...)
	for i := range out {
		out[i].Kept = true
	}
	return out, nil
}

// poolReleases are the release names of a tenant's worker pools on the
// SplitPools line, none on the Combined one.
// upgradesSplitChart: the fleet's cluster releases are, or are about to
// be, upgraded with the split apps/kubernetes (installerClusterRules).
func upgradesSplitChart(f *model.Fleet) bool {
	return f.Cluster != nil && (f.Cluster.Split() || f.Cluster.PinsWorkers())
}

func poolReleases(f *model.Fleet, t *model.Tenant) []string {
	if f.Cluster == nil || !f.Cluster.Split() {
		return nil
	}
	var out []string
	for _, p := range f.Cluster.Pools(t.Knobs) {
		out = append(out, p.Release)
	}
	return out
}
