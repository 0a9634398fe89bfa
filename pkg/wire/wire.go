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
	// ClusterChartLabel with ClusterChartSplitPools marks a cluster release
	// rendered for the split chart (no workers of its own): a later render
	// reads it from the fleet folder to tell a ComputePlane whose workers
	// are its pools' from one whose workers the release itself holds.
	ClusterChartLabel      = "computeplane.dev/cluster-chart"
	ClusterChartSplitPools = "SplitPools"
	// PruneAnnotation with PruneDisabled keeps Flux's kustomize-controller
	// from deleting the live cluster when its HelmRelease leaves Git.
	PruneAnnotation = "kustomize.toolkit.fluxcd.io/prune"
	PruneDisabled   = "disabled"
)

// ShardLabelPolicyName names the MutatingAdmissionPolicy (and its binding)
// that gives the function's releases ShardingLabel: ShardingTenants under
// spec.releases.shardLabel: Admission.
const ShardLabelPolicyName = "computeplane-release-shard"

// Cozystack's flux-shard-operator as Cozystack v1.6 deploys it
// (packages/system/flux-shard-operator): the Service of its admission
// webhook, the path that stamps a tenant's recorded shard on a
// HelmRelease's create, and the cert-manager Certificate whose CA
// cert-manager's cainjector writes into a webhook configuration that
// names it. The MutatingWebhookConfiguration ShardLabelPolicyName of
// spec.releases.shardLabel: Webhook points there.
const (
	ShardOperatorNamespace   = "cozy-fluxcd"
	ShardOperatorService     = "flux-shard-operator"
	ShardOperatorWebhookPath = "/mutate-helmrelease-shard"
	ShardOperatorCertificate = ShardOperatorNamespace + "/flux-shard-operator"
	// CertManagerInjectCA is cert-manager's cainjector annotation.
	CertManagerInjectCA = "cert-manager.io/inject-ca-from"
)

// GuardName names the ValidatingAdmissionPolicy of the management-plane
// guard (docs/guard.md) and its binding; the posture summary names the guard's
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

// GuardRoutesAnnotation names the guard's annotation that states, for the
// pull-request summary, what G1 routes: a JSON list, sorted by kind, of one
// object per ApplicationDefinition placed on the ComputePlane, with its
// "kind", its "definition" (metadata.name) and its "chartRef" ("kind",
// "name", "namespace"), the same kinds and charts the rules' variables
// and match condition hold. A kind that leaves the list is one whose
// releases, made on the management nodes, the guard no longer refuses.
const GuardRoutesAnnotation = "computeplane.dev/guard-routes"

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

// The accounts the render gives each role, by name, and the namespaces of
// tenants (Cozystack names every tenant's namespace tenant-...): the
// config refuses a fleet account or a wiring namespace that is one of
// them (package api's roles.go), and package model names them so.
const (
	// InstallerAccount is a tenant's cluster installer, in its namespace.
	InstallerAccount = "computeplane-installer"
	// SharedAppsAccount and PerAppAccountPrefix are the accounts routed
	// apps install as inside their ComputePlane.
	SharedAppsAccount   = "computeplane-apps"
	PerAppAccountPrefix = "computeplane-app-"
	// TenantNamespacePrefix starts every tenant's namespace, the root's
	// (tenant-root) included.
	TenantNamespacePrefix = "tenant-"
)
