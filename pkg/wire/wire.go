package wire

// ManagedByLabel marks every object this function generates; objects that
// carry it among the inputs are earlier output and are generated anew.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "computeplane-fn"
)

// Release names of the ComputePlane cluster, per delivery. The admin
// kubeconfig Secret, which every routed release reads, is derived from it in
// one place: model.KubeconfigSecret.
const (
	DirectClusterRelease   = "computeplane"
	PlatformClusterRelease = "computeplane-cluster"
	// PlatformModuleRelease is the HelmRelease of Cozystack's computeplane
	// tenant module, which owns the cluster under delivery: Platform.
	PlatformModuleRelease = "computeplane"
)

// Labels and prefixes of app releases, as cozystack-api writes them.
const (
	// ReleaseKeyPrefix is what cozystack-api glues onto every key of an
	// app's labels and annotations when it copies them to the app's
	// HelmRelease.
	ReleaseKeyPrefix = "apps.cozystack.io-"

	ApplicationKindLabel  = "apps.cozystack.io/application.kind"
	ApplicationGroupLabel = "apps.cozystack.io/application.group"
	ApplicationNameLabel  = "apps.cozystack.io/application.name"

	// Routed releases carry these instead of the three above, so that
	// cozystack-api does not list them as editable apps.
	RoutedKindLabel = "computeplane.dev/application.kind"
	RoutedNameLabel = "computeplane.dev/application.name"

	// ValuesSecret is the platform Secret every release takes values from.
	ValuesSecret = "cozystack-values"
)

// Labels and annotations of the cluster HelmRelease.
const (
	ShardingLabel     = "sharding.fluxcd.io/key"
	ShardingTenants   = "tenants"
	ComputePlaneLabel = "internal.cozystack.io/computeplane"
	// PoolLabel names, on a worker pool's release (the SplitPools line),
	// its node group.
	PoolLabel = "computeplane.dev/pool"
	// PruneAnnotation with PruneDisabled keeps Flux's kustomize-controller
	// from deleting the live cluster when its HelmRelease leaves Git.
	PruneAnnotation = "kustomize.toolkit.fluxcd.io/prune"
	PruneDisabled   = "disabled"
)

// ShardLabelPolicyName names the MutatingAdmissionPolicy (and its binding)
// that gives the function's releases ShardingLabel: ShardingTenants under
// spec.releases.shardLabel: Admission.
const ShardLabelPolicyName = "computeplane-release-shard"

// GuardName names the ValidatingAdmissionPolicy of the management-plane
// guard (SPEC 3.5) and its binding; the posture summary names the guard's
// on and off by it too.
const GuardName = "computeplane-guard"

// GuardMatchCondition names the guard's match condition, which passes on
// to its rules only the requests one of them may refuse.
const GuardMatchCondition = "may-be-refused"

// Names of the guard's variables that hold the fleet's identities (every
// rule reads them; below Kubernetes 1.36 their expressions are inlined).
// The pull-request summary reads the three lists back from a committed
// policy's annotation GuardIdentitiesAnnotation: a JSON object of the
// lists by these names, each sorted and without duplicates.
const (
	GuardFluxIdentitiesVariable     = "fluxIdentities"
	GuardHelmIdentitiesVariable     = "helmIdentities"
	GuardPlatformIdentitiesVariable = "platformIdentities"

	GuardIdentitiesAnnotation = "computeplane.dev/guard-identities"
)

// Origin labels helm-controller stamps, last, on every object it applies
// from a release's chart: the HelmRelease it comes from.
const (
	HelmOriginNameLabel      = "helm.toolkit.fluxcd.io/name"
	HelmOriginNamespaceLabel = "helm.toolkit.fluxcd.io/namespace"
)

// The hardening of a ComputePlane that the posture review reads back: the
// ConfigMap of its API server's AdmissionConfiguration (Pod Security) and
// the CiliumNetworkPolicy of its VMs' egress, one each per ComputePlane.
const (
	AdmissionConfigMapName = "computeplane-admission"
	EgressPolicyName       = "computeplane-egress"
)

// IngressServiceLabel and IngressServiceValue select the ingress pods of a
// tenant; a deny of them for every ancestor is what
// cluster.egress.allowAncestorIngress: false renders.
const (
	IngressServiceLabel = "cozystack.io/service"
	IngressServiceValue = "ingress"
)

// The in-cluster baseline of a tenant's ComputePlane (docs/incluster.md):
// in the fleet folder, the Flux Kustomization in the tenant namespace that
// applies it and the folder of its objects inside the namespace's folder
// (<namespace>/_baseline), which the posture review reads back; in the
// stream, the HelmRelease of the project's baseline chart in the tenant
// namespace, and the OCIRepository of that chart (one per fleet).
const (
	BaselineKustomization = "computeplane-baseline"
	BaselineFolder        = "_baseline"
	BaselineRelease       = "computeplane-baseline"
)
