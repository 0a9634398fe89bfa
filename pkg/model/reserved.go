package model

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// ClusterAddonReleases are the addon HelmReleases apps/kubernetes creates in
// the tenant namespace, each named <cluster release>-<addon> (the
// metadata.name of templates/helmreleases/*.yaml at Cozystack 3c780acd; the
// test reads them from ../shared). Each installs into the cluster with its
// admin kubeconfig, so an app released under one of these names would have
// the fleet take over (or fight) an addon that carries the cluster's
// credentials.
var ClusterAddonReleases = []string{
	"cert-manager",
	"cert-manager-crds",
	"cilium", // ReadyAddonRelease: routed apps wait for it
	"coredns",
	"cozy-victoria-metrics-operator",
	"csi",
	"gateway-api-crds",
	"gpu-operator",
	"hami",
	"ingress-nginx",
	"metrics-server",
	"monitoring-agents",
	"ouroboros",
	"prometheus-operator-crds",
	"velero",
	"vertical-pod-autoscaler",
	"vertical-pod-autoscaler-crds",
	"vsnap-crd",
}

// clusterObjectNames are the other objects apps/kubernetes names
// <cluster release>-<name> in the tenant namespace (the test reads every
// {{ .Release.Name }}-<name> of the chart's templates from ../shared):
// the ConfigMaps, Deployments, ServiceAccounts, Roles, Jobs, Issuers and
// Certificates of the cluster's autoscaler, CSI and cloud controller, its
// Talos PKI and jobs, its OIDC jobs, its delete hooks and its dashboard
// view (the ingress Service is named like the ingress-nginx addon, its
// Secrets are credentials).
// Charts name their objects after their release, so an app released under
// one of these names would create objects of the same kinds and names: the
// second of the two installs fails (the cluster's, if the app came first).
var clusterObjectNames = []string{
	"awaiting-etcd",
	"bootstrap-token-tenant",
	"cert-manager-crds-values-override",
	"cleanup",
	"cloud-config",
	"cluster-autoscaler",
	"dashboard-resources",
	"kccm",
	"kcsi",
	"kcsi-binding",
	"kcsi-controller",
	"oidc-bootstrap",
	"oidc-cleanup",
	"pre-cleanup",
	"talos-bootstrap",
	"talos-reconcile",
}

// ReservedRelease says why an app may not be released as name in a tenant
// namespace where the cluster with the given release name lives, or returns
// "" when it may. Reserved are the cluster release itself, its addon
// releases (ClusterAddonReleases), the other objects its chart names after
// it (clusterObjectNames) and its credential Secrets (ClusterCredentials:
// an app whose chart writes a Secret named after its release would plant
// the cluster's CA or kubeconfig before Kamaji writes it, and Kamaji keeps
// a valid certificate it finds).
func ReservedRelease(cluster, name string) string {
	if name == cluster {
		return "is reserved for the tenant's ComputePlane in every tenant namespace"
	}
	if name == ReadyAddonRelease(cluster) {
		return "is the CNI addon that the tenant's ComputePlane cluster creates in every tenant namespace (routed apps wait for it)"
	}
	rest, ok := cutRelease(cluster, name)
	if !ok {
		return ""
	}
	switch {
	case slices.Contains(ClusterAddonReleases, rest):
		return "is an addon HelmRelease that the tenant's ComputePlane cluster creates in every tenant namespace (<cluster release>-" + rest + ", installed with the cluster's admin kubeconfig)"
	case slices.Contains(clusterObjectNames, rest):
		return "names objects that the tenant's ComputePlane cluster creates in every tenant namespace (<cluster release>-" + rest + "); an app's chart names its objects after its release, so the two would collide"
	case IsClusterCredential(cluster, name):
		return "is the name of a credential Secret that Kamaji, Cluster API or the ComputePlane cluster's chart writes in every tenant namespace; an app whose chart names a Secret after its release would plant it"
	}
	return ""
}

func cutRelease(cluster, name string) (string, bool) {
	if len(name) <= len(cluster)+1 || name[:len(cluster)] != cluster || name[len(cluster)] != '-' {
		return "", false
	}
	return name[len(cluster)+1:], true
}

// PoolKind is the kind of Cozystack's worker pool app (apps/kubernetes-nodes,
// after cozystack#3315).
const PoolKind = "KubernetesNodes"

// poolClaim says, with the field, why an app may not be released in a
// tenant namespace where the cluster with the given release name lives
// because it would be a worker pool of that cluster: its release is named
// as the cluster's pools are (kubernetes-nodes-<cluster>-<pool>), or it is
// a pool app (kind KubernetesNodes, or a release named kubernetes-nodes-...)
// whose values name the cluster. A pool of the tenant's making would add
// workers of its choosing (OS image, kubelet settings) to a cluster the
// tenant must not administer; a ComputePlane's pools are its node groups,
// which only the fleet renders. "" when the app is no such pool.
func poolClaim(cluster string, app *App) (field, why string) {
	if strings.HasPrefix(app.Release, api.PoolReleasePrefix(cluster)) {
		return "metadata.name", fmt.Sprintf("release name %q is named like a worker pool of the tenant's ComputePlane (%s<pool>), whose pools only the fleet renders, from the ComputePlane's node groups; rename the app",
			app.Release, api.PoolReleasePrefix(cluster))
	}
	if app.Kind != PoolKind && !strings.HasPrefix(app.Release, "kubernetes-nodes-") {
		return "", ""
	}
	for _, f := range slices.Sorted(maps.Keys(app.PoolCluster)) {
		if app.PoolCluster[f] == cluster {
			return f, fmt.Sprintf("names %q, the cluster of the tenant's ComputePlane: a worker pool attached to it would add workers of the app's choosing (OS image, kubelet settings) to a cluster the tenant must not administer; the ComputePlane's pools are its node groups, which only the fleet renders (set them in the tenant's ComputePlane object)",
				cluster)
		}
	}
	return "", ""
}
