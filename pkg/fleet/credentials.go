package fleet

import "strings"

// clusterCredentialSuffixes are the Secrets written for a cluster of
// apps/kubernetes with release name R, each as R-<suffix>: the cluster's
// TenantControlPlane, Cluster, KamajiControlPlane and KubevirtCluster are all
// named R, so every controller's prefix is the release name. Read from the
// sources (Cozystack 3c780acd; Kamaji, cluster-api-control-plane-provider-kamaji,
// cluster-api-bootstrap-provider-talos and cluster-api-provider-kubevirt at
// their main branches of 2026):
//
//	suffix                                 written by                 holds
//	admin-kubeconfig                       Kamaji (controllers/resources.go, kubeconfig.go)          admin.conf, super-admin.conf (and .svc): cluster-admin
//	controller-manager-kubeconfig          Kamaji (controllers/resources.go)                         kube-controller-manager's client certificate
//	scheduler-kubeconfig                   Kamaji (controllers/resources.go)                         kube-scheduler's client certificate
//	konnectivity-kubeconfig                Kamaji (konnectivity/kubeconfig_resource.go)              konnectivity-server's client certificate
//	ca                                     Kamaji (ca_certificate.go); the CAPI provider (kamajicontrolplane_controller_resources.go) copies it under the same name; CABPT reads it   the cluster CA, key included
//	front-proxy-ca-certificate             Kamaji (front_proxy_ca_certificate.go)                    the front-proxy CA, key included
//	front-proxy-client-certificate         Kamaji (front-proxy-client-certificate.go)                the aggregator's client certificate
//	sa-certificate                         Kamaji (sa_certificate.go)                                the service-account signing key
//	api-server-certificate                 Kamaji (api_server_certificate.go)                        the API server's serving key
//	api-server-kubelet-client-certificate  Kamaji (api_server_kubelet_client_certificate.go)         the API server's client certificate to every kubelet
//	konnectivity-certificate               Kamaji (konnectivity/certificate_resource.go)             konnectivity-server's serving key
//	datastore-certificate                  Kamaji (datastore/datastore_certificate.go)               the client certificate of the datastore (the tenant's etcd)
//	datastore-config                       Kamaji (datastore/datastore_storage_config.go)            the datastore's connection string and credentials
//	kubeconfig                             cluster-api-control-plane-provider-kamaji                 CAPI's copy of the admin kubeconfig (key value)
//	talos                                  cluster-api-bootstrap-provider-talos (controllers/secrets.go)   the Talos secrets bundle of the cluster
//	talosconfig                            cluster-api-bootstrap-provider-talos (controllers/secrets.go)   talosctl's admin client configuration
//	ssh-keys                               cluster-api-provider-kubevirt (pkg/ssh/cluster_node_ssh_keys.go) the nodes' SSH key pair
//	talos-secrets                          apps/kubernetes templates/talos/talos-secrets.yaml        the trustd token, cluster secret and bootstrap token of the workers
//	talos-ca                               apps/kubernetes templates/talos/talos-pki.yaml (cert-manager)   the Talos machine CA, key included
//	talos-tls-cert                         apps/kubernetes templates/talos/talos-pki.yaml (cert-manager)   talos-csr-signer's serving key
//	oidc-kubeconfig                        apps/kubernetes templates/oidc-kubeconfig-secret.yaml     the OIDC kubeconfig handed to users (the cluster CA and issuer)
//	oidc-authn-config                      apps/kubernetes templates/oidc-authn-config.yaml          the API server's AuthenticationConfiguration
//
// Per machine, cluster-api-bootstrap-provider-talos writes
// <machine>-bootstrap-data (the worker's Talos machine config, with the
// cluster's secrets) and cluster-api-provider-kubevirt copies it to
// <machine>-bootstrap-data-userdata; machines are named R-<node group>-...
// (MachineDeployment R-<group>), so those names are matched by prefix and
// suffix (IsClusterCredential).
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
var ClusterReleases = []string{DirectClusterRelease, PlatformClusterRelease}

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
