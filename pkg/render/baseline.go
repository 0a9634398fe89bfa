package render

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Names of the in-cluster baseline's objects, inside a ComputePlane.
const (
	// IsolationPolicyName is the NetworkPolicy of every namespace the
	// baseline creates: ingress only from the same namespace and from the
	// cluster's own ingress controller.
	IsolationPolicyName = "computeplane-deny-other-namespaces"
	// QuotaName names the ResourceQuota and the LimitRange of a namespace
	// when spec.routing asks for them.
	QuotaName = "computeplane-apps"
	// ClusterIngressNamespace is where apps/kubernetes' ingress-nginx addon
	// runs inside the cluster; it forwards to the apps' pods, so the
	// isolation policy lets it in.
	ClusterIngressNamespace = "cozy-ingress-nginx"
	// NamespaceNameLabel is the label Kubernetes puts on every namespace
	// with its own name.
	NamespaceNameLabel = "kubernetes.io/metadata.name"
	// baselineRetryInterval is how soon the baseline Kustomization tries
	// again while its cluster is not up (no kubeconfig Secret, no API
	// server): like a routed release re-checking its dependency.
	baselineRetryInterval = 30 * time.Second
)

// The Pod Security labels a namespace is held to its level by.
var podSecurityModes = []string{"enforce", "audit", "warn"}

// BaselineObjects builds the in-cluster baseline of a tenant with a
// ComputePlane: the objects that Flux applies inside the ComputePlane
// through the cluster's admin kubeconfig before any routed app installs.
// They are, for the tenant namespace and every namespace its routed apps
// install into (model.AppNamespace): the Namespace with Pod Security
// labels at the cluster's level, the apps' ServiceAccounts (in the tenant
// namespace, where helm-controller looks for them), a RoleBinding of each
// to the admin ClusterRole in its app's namespace, the NetworkPolicy
// computeplane-deny-other-namespaces, the ResourceQuota and LimitRange
// that spec.routing asks for, and per grant a ClusterRoleBinding (and the
// ClusterRole when the grant gives rules); sorted by namespace, kind and
// name. Each mode delivers the same objects: the fleet folder as files
// (RenderBaseline), the stream as a release's values
// (RenderBaselineRelease).
func BaselineObjects(f *model.Fleet, t *model.Tenant) ([]Object, error) {
	level := f.Config.Cluster.PodSecurity
	if f.Config.Delivery == api.Platform {
		// The module's cluster enforces no level by default; the routed
		// apps' namespaces are held to the default level by their labels.
		level = api.PodSecurityRestricted
	}
	var objs []Object
	add := func(obj any, apiVersion, kind, namespace, name string) error {
		n, err := TypedNode(obj)
		if err != nil {
			return err
		}
		o := tenantObject(t, n, apiVersion, kind, name)
		o.Namespace, o.Cluster = namespace, false
		objs = append(objs, o)
		return nil
	}

	// The namespaces, each with the accounts bound there.
	type place struct {
		accounts []string
	}
	places := map[string]*place{t.Namespace: {}}
	grants := map[string]api.Grant{} // by account
	for _, app := range t.Apps {
		if app.Placement != api.PlacementComputePlane {
			continue
		}
		ns, account := f.AppNamespace(app), f.AppAccount(app)
		p := places[ns]
		if p == nil {
			p = &place{}
			places[ns] = p
		}
		if !slices.Contains(p.accounts, account) {
			p.accounts = append(p.accounts, account)
		}
		if g, ok := f.Config.Routing.GrantOf(app.Definition.Ref.Name); ok {
			grants[account] = g
		}
	}
	if !f.Config.Routing.PerApp() && !slices.Contains(places[t.Namespace].accounts, model.SharedAppsAccount) {
		// The shared account exists before the first app does.
		places[t.Namespace].accounts = append(places[t.Namespace].accounts, model.SharedAppsAccount)
	}
	var accounts []string
	for ns, p := range places {
		labels := map[string]string{}
		for _, mode := range podSecurityModes {
			labels["pod-security.kubernetes.io/"+mode] = level
		}
		if err := add(&corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: managedLabels(labels)},
		}, "v1", "Namespace", "", ns); err != nil {
			return nil, err
		}
		if err := add(&networkingv1.NetworkPolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
			ObjectMeta: inClusterMeta(IsolationPolicyName, ns),
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{
					{PodSelector: &metav1.LabelSelector{}},
					{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{NamespaceNameLabel: ClusterIngressNamespace}}},
				}}},
			},
		}, "networking.k8s.io/v1", "NetworkPolicy", ns, IsolationPolicyName); err != nil {
			return nil, err
		}
		if q := f.Config.Routing.ResourceQuota; q != nil && (ns != t.Namespace || !f.Config.Routing.PerApp()) {
			if err := add(&corev1.ResourceQuota{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
				ObjectMeta: inClusterMeta(QuotaName, ns),
				Spec:       q.Spec(),
			}, "v1", "ResourceQuota", ns, QuotaName); err != nil {
				return nil, err
			}
		}
		if l := f.Config.Routing.LimitRange; l != nil && (ns != t.Namespace || !f.Config.Routing.PerApp()) {
			if err := add(&corev1.LimitRange{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "LimitRange"},
				ObjectMeta: inClusterMeta(QuotaName, ns),
				Spec:       l.Spec(),
			}, "v1", "LimitRange", ns, QuotaName); err != nil {
				return nil, err
			}
		}
		for _, account := range p.accounts {
			accounts = append(accounts, account)
			if err := add(&rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: inClusterMeta(account, ns),
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: model.NamespaceAdminRole},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: t.Namespace}},
			}, "rbac.authorization.k8s.io/v1", "RoleBinding", ns, account); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(accounts)
	accounts = slices.Compact(accounts)
	for _, account := range accounts {
		if err := add(&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: inClusterMeta(account, t.Namespace),
		}, "v1", "ServiceAccount", t.Namespace, account); err != nil {
			return nil, err
		}
		g, ok := grants[account]
		if !ok {
			continue
		}
		if err := add(&rbacv1.ClusterRoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
			ObjectMeta: inClusterMeta(account, ""),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: g.ClusterRole},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: account, Namespace: t.Namespace}},
		}, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", account); err != nil {
			return nil, err
		}
	}
	defined := map[string]bool{}
	for _, account := range accounts {
		g, ok := grants[account]
		if !ok || len(g.Rules) == 0 || defined[g.ClusterRole] {
			continue
		}
		defined[g.ClusterRole] = true
		if err := add(&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: inClusterMeta(g.ClusterRole, ""),
			Rules:      g.Rules,
		}, "rbac.authorization.k8s.io/v1", "ClusterRole", "", g.ClusterRole); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(objs, func(a, b Object) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	return objs, nil
}

// RenderBaseline builds the fleet folder's delivery of a tenant's
// in-cluster baseline (BaselineObjects): the Flux Kustomization
// computeplane-baseline, in the tenant namespace of the management
// cluster, that applies the objects it carries (Object.InCluster) into the
// ComputePlane through the cluster's admin kubeconfig. It reads them from
// the fleet folder (<namespace>/_baseline, which no unit lists). It sets
// no spec.serviceAccountName: with a kubeConfig, kustomize-controller would
// impersonate that account inside the ComputePlane, where no account
// exists before the baseline makes one, so it applies with the
// kubeconfig's own rights (the cluster's super-admin), which creating
// namespaces and binding the admin role takes anyway. On the management
// cluster it is applied by the tenant's unit, as the fleet. With
// spec.fleet.shards > 1 it carries the tenant's shard label
// (model.KustomizationShard), like every other Kustomization of the tenant.
func RenderBaseline(f *model.Fleet, t *model.Tenant) (Object, error) {
	fc := f.Config.Fleet
	objs, err := BaselineObjects(f, t)
	if err != nil {
		return Object{}, err
	}
	release := f.ClusterRelease()
	labels := managedLabels(nil)
	if s := model.KustomizationShard(fc.Shards, t.Namespace); s > 0 {
		// The tenant's shard, the one of its units (package units).
		labels[wire.ShardingLabel] = model.ShardValue(s)
	}
	ks := kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      wire.BaselineKustomization,
			Namespace: t.Namespace,
			Labels:    labels,
		},
		Spec: kustomizev1.KustomizationSpec{
			Interval:      metav1.Duration{Duration: fc.Interval},
			RetryInterval: &metav1.Duration{Duration: baselineRetryInterval},
			SourceRef: kustomizev1.CrossNamespaceSourceReference{
				Kind: fc.SourceRef.Kind, Name: fc.SourceRef.Name, Namespace: fc.SourceRef.Namespace,
			},
			Path:  fc.FluxPath(model.BaselinePath(t.Namespace)),
			Prune: true,
			// Deleting the Kustomization (the tenant or its ComputePlane
			// leaves Git) leaves the namespaces and what runs in them: the
			// cluster itself is never pruned either.
			DeletionPolicy: kustomizev1.DeletionPolicyOrphan,
			KubeConfig: &meta.KubeConfigReference{
				SecretRef: &meta.SecretKeyReference{Name: model.KubeconfigSecret(release), Key: model.KubeconfigKey},
			},
		},
	}
	n, err := TypedNode(&ks)
	if err != nil {
		return Object{}, err
	}
	o := tenantObject(t, n, ks.APIVersion, ks.Kind, ks.Name)
	o.InCluster = objs
	return o, nil
}

// inClusterMeta is the metadata of a baseline object inside a ComputePlane.
func inClusterMeta(name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: managedLabels(nil)}
}

// RetargetBaseline returns a copy of a tenant's baseline Kustomization
// (RenderBaseline) that reads its files from source at path instead of from
// the fleet source. The fleet-folder writer does it when each namespace
// reads an ExternalArtifact of its own (spec.fleet.unitSource:
// ExternalArtifact, package units): which artifact holds the namespace
// depends on the layout of the whole fleet (its wiring group), which only
// the layout knows. o itself is left as it is.
func RetargetBaseline(o Object, source kustomizev1.CrossNamespaceSourceReference, path string) (Object, error) {
	if len(o.InCluster) == 0 || o.Kind != kustomizev1.KustomizationKind {
		return Object{}, fmt.Errorf("failed to point %s %s/%s at %s %s: it is no baseline Kustomization", o.Kind, o.Namespace, o.Name, source.Kind, source.Name)
	}
	n, err := o.Body.Node()
	if err != nil {
		return Object{}, err
	}
	c := yamlnode.Clone(n)
	spec := yamlnode.Get(c, "spec")
	if spec == nil {
		return Object{}, fmt.Errorf("failed to point Kustomization %s/%s at %s %s: it has no spec", o.Namespace, o.Name, source.Kind, source.Name)
	}
	ref, err := TypedNode(&source)
	if err != nil {
		return Object{}, err
	}
	yamlnode.SetKey(spec, "sourceRef", ref)
	yamlnode.SetKey(spec, "path", yamlnode.String(path))
	o.Body = NodeBody(c)
	return o, nil
}
