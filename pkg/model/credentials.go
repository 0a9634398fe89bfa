package model

import (
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// clusterCredentialSuffixes are the Secrets written for a cluster of
// apps/kubernetes with release name R, each as R-<suffix>: the cluster's
// TenantControlPlane, Cluster, KamajiControlPlane and KubevirtCluster are all
// named R, so every controller's prefix is the release name. Read from the
// sources (Cozystack 3c780acd; Kamaji, cluster-api-control-plane-provider-
// kamaji, cluster-api-bootstrap-provider-talos and
// cluster-api-provider-kubevirt at their main branches of 2026):
//
//	suffix                                 written by (file)                       holds
//	admin-kubeconfig                       Kamaji (controllers/resources.go)       admin.conf, super-admin.conf (+ .svc)
//	controller-manager-kubeconfig          Kamaji (controllers/resources.go)       kube-controller-manager's client cert
//	scheduler-kubeconfig                   Kamaji (controllers/resources.go)       kube-scheduler's client cert
//	konnectivity-kubeconfig                Kamaji (konnectivity/kubeconfig_...)    konnectivity-server's client cert
//	ca                                     Kamaji (ca_certificate.go); the CAPI    the cluster CA, key included
//	                                       provider copies it under this name
//	front-proxy-ca-certificate             Kamaji (front_proxy_ca_certificate.go)  the front-proxy CA, key included
//	front-proxy-client-certificate         Kamaji                                  the aggregator's client cert
//	sa-certificate                         Kamaji (sa_certificate.go)              the service-account signing key
//	api-server-certificate                 Kamaji                                  the API server's serving key
//	api-server-kubelet-client-certificate  Kamaji                                  the API server's cert to every kubelet
//	konnectivity-certificate               Kamaji (konnectivity/certificate_...)   konnectivity-server's serving key
//	datastore-certificate                  Kamaji (datastore/)                     the datastore's client cert
//	datastore-config                       Kamaji (datastore/)                     the datastore's credentials
//	kubeconfig                             CAPI Kamaji control-plane provider      CAPI's admin kubeconfig (key value)
//	talos                                  CAPI Talos bootstrap provider           the Talos secrets bundle
//	talosconfig                            CAPI Talos bootstrap provider           talosctl's admin configuration
//	ssh-keys                               CAPI KubeVirt provider (pkg/ssh)        the nodes' SSH key pair
//	talos-secrets                          chart, talos/talos-secrets.yaml         trustd and bootstrap tokens
//	talos-ca                               chart, talos/talos-pki.yaml             the Talos machine CA, key included
//	talos-tls-cert                         chart, talos/talos-pki.yaml             talos-csr-signer's serving key
//	oidc-kubeconfig                        chart, oidc-kubeconfig-secret.yaml      the users' OIDC kubeconfig
//	oidc-authn-config                      chart, oidc-authn-config.yaml           the AuthenticationConfiguration
//
// Per machine, the Talos bootstrap provider writes <machine>-bootstrap-data
// (the worker's Talos machine config, with the cluster's secrets) and the
// KubeVirt provider copies it to <machine>-bootstrap-data-userdata;
// machines are named R-<node group>-... (MachineDeployment R-<group>), so
// those names are matched by prefix and suffix (IsClusterCredential).
var clusterCredentialSuffixes = []string{
	"admin-kubeconfig",
	"controller-manager-kubeconfig",
	"scheduler-kubeconfig",
	"konnectivity-kubeconfig",
	"ca",
	"front-proxy-ca-certificate",
	"front-proxy-client-certificate",
	"sa-certificate",
	"api-server-certificate",
	"api-server-kubelet-client-certificate",
	"konnectivity-certificate",
	"datastore-certificate",
	"datastore-config",
	"kubeconfig",
	"talos",
	"talosconfig",
	"ssh-keys",
	"talos-secrets",
	"talos-ca",
	"talos-tls-cert",
	"oidc-kubeconfig",
	"oidc-authn-config",
}

// MachineCredentialSuffixes end the per-machine Secrets of a cluster's
// workers, <release>-<machine>-bootstrap-data and its -userdata copy (see
// clusterCredentialSuffixes): names with hashes, matched by the release's
// prefix and one of these suffixes (IsClusterCredential).
var MachineCredentialSuffixes = []string{"-bootstrap-data", "-bootstrap-data-userdata"}

// ClusterReleases are the release names of a ComputePlane cluster under
// either delivery. Render-time refusals look for both whatever the
// delivery: a fleet can change delivery, and the names are the
// ComputePlane's in every tenant namespace.
var ClusterReleases = []string{wire.DirectClusterRelease, wire.PlatformClusterRelease}

// ClusterCredentials returns the name of every Secret that Kamaji, the
// Cluster API providers and apps/kubernetes itself write in the tenant
// namespace for a cluster with the given release name: each is a
// credential of the cluster or of its workers (see the table on
// clusterCredentialSuffixes for where each comes from). The per-machine
// Secrets, whose names carry hashes, are not in the list:
// IsClusterCredential matches them.
func ClusterCredentials(release string) []string {
	out := make([]string, len(clusterCredentialSuffixes))
	for i, s := range clusterCredentialSuffixes {
		out[i] = release + "-" + s
	}
	return out
}

// IsClusterCredential reports whether name is one of the Secrets of
// ClusterCredentials(release), or a per-machine bootstrap Secret of one of
// that cluster's workers (<release>-<...>-bootstrap-data, and its
// -userdata copy).
func IsClusterCredential(release, name string) bool {
	rest, ok := strings.CutPrefix(name, release+"-")
	if !ok {
		return false
	}
	for _, s := range clusterCredentialSuffixes {
		if rest == s {
			return true
		}
	}
	for _, s := range MachineCredentialSuffixes {
		if strings.HasSuffix(rest, s) && len(rest) > len(s) {
			return true
		}
	}
	return false
}

// chartAccountSuffixes are the ServiceAccounts apps/kubernetes creates in
// its release's namespace, each <release>-<suffix> (Cozystack 3c780acd):
//
//	suffix                  template                                   runs
//	kccm                    kccm/service_account.yaml                  the cloud controller manager
//	kcsi                    csi/infra-cluster-service-account.yaml     the CSI driver's infra side (attaches DataVolumes)
//	cluster-autoscaler      cluster-autoscaler/deployment.yaml         the autoscaler (scales MachineDeployments)
//	talos-reconcile         talos/talos-reconcile-job.yaml             the job that rewrites the workers' Talos configs
//	bootstrap-token-tenant  talos/bootstrap-token-tenant-job.yaml      the job that writes bootstrap tokens
//	oidc-bootstrap          oidc-rbac-job.yaml                         the job that binds the OIDC groups
//	cleanup                 delete.yaml                                the pre-delete hook
//
// Each holds rights over the cluster's objects or Secrets in the tenant
// namespace, so a token of one is as sensitive as the credentials
// (pkg/render's TestChartAccounts reads the chart and keeps the list whole).
var chartAccountSuffixes = []string{
	"bootstrap-token-tenant",
	"cleanup",
	"cluster-autoscaler",
	"kccm",
	"kcsi",
	"oidc-bootstrap",
	"talos-reconcile",
}

// ChartServiceAccounts returns the name of every ServiceAccount the cluster
// chart creates in its namespace for a cluster with the given release name
// (see chartAccountSuffixes).
func ChartServiceAccounts(release string) []string {
	out := make([]string, len(chartAccountSuffixes))
	for i, s := range chartAccountSuffixes {
		out[i] = release + "-" + s
	}
	return out
}
