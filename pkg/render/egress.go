package render

import (
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// Names and labels of the egress policy of a ComputePlane's VMs.
const (
	// ClusterNameLabel is on every VM pod (virt-launcher) of a cluster of
	// apps/kubernetes; its value is the cluster's release name.
	ClusterNameLabel = "cluster.x-k8s.io/cluster-name"
	// ControlPlaneLabel is on the Kamaji control-plane pods of a cluster;
	// its value is the cluster's release name.
	ControlPlaneLabel = "kamaji.clastix.io/name"

	// PodNamespaceKey is Cilium's label of an endpoint's namespace. A peer
	// selector of a CiliumNetworkPolicy without it is confined to the
	// policy's own namespace, so every selector here names it.
	PodNamespaceKey = "k8s:io.kubernetes.pod.namespace"
	// NamespaceLabelPrefix makes a namespace's label an endpoint label.
	NamespaceLabelPrefix = "k8s:io.cilium.k8s.namespace.labels."
	// TenantNamespaceLabel, followed by a tenant namespace, is on that
	// tenant's namespace and on every descendant's: the Cozystack tenant
	// chart stamps each namespace with the label of each ancestor.
	TenantNamespaceLabel = "tenant.cozystack.io/"

	// EtcdInstanceLabel is the label by which the tenant baseline opens an
	// ancestor's etcd to every pod of a descendant tenant; EtcdServiceLabel
	// is the one by which etcd's own ingress policy selects its pods.
	EtcdInstanceLabel = "app.kubernetes.io/instance"
	EtcdServiceLabel  = "cozystack.io/service"
	EtcdValue         = "etcd"

	// EntityKubeAPIServer is Cilium's entity of the management API server.
	EntityKubeAPIServer = "kube-apiserver"
)

// ciliumNetworkPolicy is the part of cilium.io/v2 CiliumNetworkPolicy
// (Cilium 1.19) that this function writes. The Cilium Go module brings the
// agent's dependency tree, so the few types are written out here; their
// selectors are Kubernetes label selectors, which is what Cilium's
// EndpointSelector wraps. Tests validate the output against Cilium's CRD.
type ciliumNetworkPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ciliumRule `json:"spec"`
}

type ciliumRule struct {
	Description       string               `json:"description,omitempty"`
	EndpointSelector  metav1.LabelSelector `json:"endpointSelector"`
	EnableDefaultDeny ciliumDefaultDeny    `json:"enableDefaultDeny"`
	EgressDeny        []ciliumEgressDeny   `json:"egressDeny"`
}

type ciliumDefaultDeny struct {
	Egress  bool `json:"egress"`
	Ingress bool `json:"ingress"`
}

// ciliumEgressDeny is one egressDeny rule. Cilium refuses a rule that
// combines kinds of peer, so each rule sets one of the two; ToPorts narrows
// a rule to those ports (Cilium's PortDenyRule).
type ciliumEgressDeny struct {
	ToEntities  []string               `json:"toEntities,omitempty"`
	ToEndpoints []metav1.LabelSelector `json:"toEndpoints,omitempty"`
	ToPorts     []ciliumPortDenyRule   `json:"toPorts,omitempty"`
}

// ciliumPortDenyRule is Cilium's PortDenyRule: a list of ports.
type ciliumPortDenyRule struct {
	Ports []ciliumPortProtocol `json:"ports"`
}

// ciliumPortProtocol is Cilium's PortProtocol: a port, or the range from
// Port to EndPort, of one protocol.
type ciliumPortProtocol struct {
	Port     string `json:"port"`
	EndPort  int32  `json:"endPort,omitempty"`
	Protocol string `json:"protocol"`
}

// controlPlanePort is a port of the Kamaji control-plane pods that the
// cluster's VMs need, with where it comes from.
type controlPlanePort struct {
	Port   int32
	Name   string
	Source string
}

// controlPlanePorts are the TCP ports of a cluster's control-plane pods that
// its VMs may reach; every other port and protocol of those pods is denied.
// From Kamaji (clastix/kamaji) and apps/kubernetes (Cozystack at 3c780acd):
//
//   - 6443, the API server: kube-apiserver's --secure-port is the
//     TenantControlPlane's spec.networkProfile.port, which Kamaji's API
//     defaults to 6443 and apps/kubernetes leaves at its default (its Cilium
//     and Talos settings dial <release>.<namespace>.svc:6443);
//   - 8132, konnectivity: apps/kubernetes sets
//     spec.addons.konnectivity.server.port: 8132, which Kamaji makes the
//     konnectivity-server container's agent port (its admin and health
//     ports, 8133 and 8134, are not for the agents and stay denied);
//   - 50001, Talos trustd: apps/kubernetes adds the talos-csr-signer
//     container to the control-plane pod, listening on 50001 and published
//     on the cluster's Service; its Talos workers have their machine
//     certificates signed there, without which the chart's reconcile Jobs
//     cannot reach them.
var controlPlanePorts = []controlPlanePort{
	{6443, "kube-apiserver", "Kamaji TenantControlPlane spec.networkProfile.port (default 6443)"},
	{8132, "konnectivity-server", "apps/kubernetes spec.addons.konnectivity.server.port"},
	{50001, "talos-trustd", "apps/kubernetes talos-csr-signer container and Service port"},
}

// BaselineNamespace is a platform namespace that Cozystack's tenant baseline
// opens to every pod of every tenant (apps/tenant
// templates/networkpolicy.yaml at Cozystack 3c780acd, each an allow-to-*
// CiliumNetworkPolicy with endpointSelector {}), with what runs there and
// whether the ComputePlane's VMs keep it.
type BaselineNamespace struct {
	Namespace string
	// Policy is the baseline's policy that opens it.
	Policy string
	// What runs there.
	What string
	// Deny says whether computeplane-egress takes it away from the VMs.
	Deny   bool
	Reason string
}

// BaselineNamespaces are those namespaces. Cluster DNS, opened by
// allow-to-dns to kube-system's kube-dns pods only, stays open; the rest of
// the baseline (the tenant's own namespace, descendants, ancestors' etcd,
// ingress and vminsert, the internet) is RenderEgress's.
var BaselineNamespaces = []BaselineNamespace{
	{"cozy-dashboard", "allow-to-dashboard", "the Cozystack dashboard and its backend, whose port 8080 proxies /api and /apis to kubernetes.default.svc without authenticating the caller", true,
		"a path to the management API server around the deny of the kube-apiserver entity; the VMs have no use for the dashboard, which people reach through its ingress"},
	{"cozy-linstor", "allow-to-linstor-gui", "the LINSTOR controller (the storage API of the management cluster), linstor-gui and its gatekeeper, cert-manager's ACME solvers", true,
		"the controller's API manages every volume of the platform; the VMs' disks are attached by KubeVirt on the node and replicated by DRBD between the nodes' host networks, never over the VMs' pod network"},
	{"cozy-keycloak", "allow-to-keycloak", "Keycloak, the platform's identity provider (realms, admin console and API)", true,
		"the VMs do not log anyone in; an app inside that signs users in with Keycloak reaches it by its public host name, through the internet, as a browser does"},
	{"cozy-grafana-operator", "allow-to-grafana-dashboards", "the Grafana operator and the static server of Grafana plugins and dashboards for the tenants' Grafana pods", true,
		"only the tenants' Grafana pods on the management cluster install plugins from there"},
	{"cozy-kubevirt-cdi", "allow-to-cdi-upload-proxy", "CDI: the upload proxy, its API server and controller", true,
		"disk images are imported and uploaded by CDI's own pods and by users through the upload proxy's ingress, never by a running VM"},
}

// deniedBaselineNamespaces returns the namespaces of BaselineNamespaces
// that the VMs lose, sorted.
func deniedBaselineNamespaces() []string {
	var out []string
	for _, b := range BaselineNamespaces {
		if b.Deny {
			out = append(out, b.Namespace)
		}
	}
	slices.Sort(out)
	return out
}

// Port numbers and protocols of Cilium's port rules.
const (
	maxPort = 65535
	// Cilium's port rules match these transport protocols; "ANY" means all
	// three, and the rules below name each.
	ProtocolTCP  = "TCP"
	ProtocolUDP  = "UDP"
	ProtocolSCTP = "SCTP"
)

// RenderEgress builds the CiliumNetworkPolicy computeplane-egress of a
// tenant's ComputePlane, for the cluster's release name (computeplane under
// delivery: Direct, computeplane-cluster, the module's, under Platform). It
// selects the cluster's VM pods and denies them:
//
//   - the management cluster's API server (entity kube-apiserver);
//   - every endpoint in the tenant's namespace, except the cluster's own
//     control plane (Kamaji pods), the cluster's own VMs (its nodes talk to
//     each other over these pods' addresses) and the pods of the tenant's
//     own apps annotated computeplane.dev/reachable-from-computeplane:
//     "true", matched by both lineage labels, kind and name;
//   - every port and protocol of the cluster's own control plane but the
//     TCP ports of controlPlanePorts;
//   - every endpoint of every descendant tenant: the namespaces known from
//     the inputs by name, and any other by the tenant.cozystack.io/<tenant>
//     label Cozystack puts on descendant namespaces;
//   - the etcd pods of every ancestor tenant, which the tenant baseline opens
//     to every pod of a descendant tenant;
//   - the ingress pods (cozystack.io/service: ingress) of every ancestor
//     tenant, unless the config's cluster.egress.allowAncestorIngress says
//     otherwise: the management API can be published there with TLS
//     passthrough;
//   - every pod of the platform namespaces the tenant baseline opens to all
//     tenant pods that the VMs have no use for (BaselineNamespaces): the
//     dashboard, whose backend proxies the management API without
//     authenticating, LINSTOR, Keycloak, the Grafana operator and CDI.
//
// Cilium applies deny rules before allow rules and has no "except", on a
// selector or on a port, so the exceptions are cut out of the deny rules:
// the pods of the namespace that are not exceptions are the union of one
// selector for the pods whose kind label is none of the exposed kinds and,
// per exposed kind, one for the pods of that kind whose name label is none
// of its exposed names; both also require that the pod is not the cluster's
// control plane nor one of its VMs. The control plane is then denied by a
// rule of its own on the complement of its open ports: TCP port ranges
// (endPort) around them, and every UDP and SCTP port. Cluster DNS lives in
// kube-system, which no rule names.
//
// Deny rules alone would, by Cilium's default, also switch the VMs to
// default-deny egress and so cut them off from everything, DNS and the
// internet included: enableDefaultDeny is off, leaving the allow side to the
// tenant baseline.
func RenderEgress(f *model.Fleet, t *model.Tenant) (Object, error) {
	release := f.ClusterRelease()
	rules := []ciliumEgressDeny{
		{ToEntities: []string{EntityKubeAPIServer}},
		{ToEndpoints: ownNamespaceSelectors(t, release)},
		{
			ToEndpoints: []metav1.LabelSelector{{MatchLabels: map[string]string{PodNamespaceKey: t.Namespace, ControlPlaneLabel: release}}},
			ToPorts:     []ciliumPortDenyRule{{Ports: controlPlaneClosedPorts()}},
		},
		{ToEndpoints: descendantSelectors(t)},
		{ToEndpoints: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: PodNamespaceKey, Operator: metav1.LabelSelectorOpIn, Values: deniedBaselineNamespaces()},
		}}}},
	}
	if etcd := ancestorEtcdSelectors(t); len(etcd) > 0 {
		rules = append(rules, ciliumEgressDeny{ToEndpoints: etcd})
	}
	if !f.Config.Cluster.Egress.AllowAncestorIngress {
		if ingress := ancestorIngressSelectors(t); len(ingress) > 0 {
			rules = append(rules, ciliumEgressDeny{ToEndpoints: ingress})
		}
	}
	policy := ciliumNetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "cilium.io/v2", Kind: "CiliumNetworkPolicy"},
		ObjectMeta: hardeningMeta(wire.EgressPolicyName, t),
		Spec: ciliumRule{
			// Short: kustomize folds long strings, and the output must
			// read the same through every way of running the function.
			Description:      "ComputePlane VM egress, by computeplane-fn",
			EndpointSelector: metav1.LabelSelector{MatchLabels: map[string]string{ClusterNameLabel: release}},
			EgressDeny:       rules,
		},
	}
	n, err := TypedNode(&policy)
	if err != nil {
		return Object{}, err
	}
	return keptObject(tenantObject(t, n, policy.APIVersion, policy.Kind, policy.Name)), nil
}

// controlPlaneClosedPorts is every port of the control-plane pods but the
// open TCP ports: the TCP ranges between them, and all UDP and SCTP ports.
// Port 0 is not a port a connection can use, and Cilium reads it as "every
// port", so ranges start at 1.
func controlPlaneClosedPorts() []ciliumPortProtocol {
	open := make([]int32, len(controlPlanePorts))
	for i, p := range controlPlanePorts {
		open[i] = p.Port
	}
	slices.Sort(open)
	var out []ciliumPortProtocol
	from := int32(1)
	for _, p := range append(open, maxPort+1) {
		if p > from {
			out = append(out, portRange(from, p-1, ProtocolTCP))
		}
		from = p + 1
	}
	return append(out, portRange(1, maxPort, ProtocolUDP), portRange(1, maxPort, ProtocolSCTP))
}

func portRange(from, to int32, protocol string) ciliumPortProtocol {
	p := ciliumPortProtocol{Port: strconv.Itoa(int(from)), Protocol: protocol}
	if to > from {
		p.EndPort = to
	}
	return p
}

// ownNamespaceSelectors selects every pod of the tenant's namespace but the
// exceptions: the cluster's control plane (denied on its other ports by a
// rule of its own) and VMs, and the exposed apps.
func ownNamespaceSelectors(t *model.Tenant, release string) []metav1.LabelSelector {
	notCluster := []metav1.LabelSelectorRequirement{
		{Key: ControlPlaneLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{release}},
		{Key: ClusterNameLabel, Operator: metav1.LabelSelectorOpNotIn, Values: []string{release}},
	}
	exposed := ExposedApps(t)
	kinds := make([]string, 0, len(exposed))
	for k := range exposed {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)

	otherKinds := metav1.LabelSelector{
		MatchLabels:      map[string]string{PodNamespaceKey: t.Namespace},
		MatchExpressions: slices.Clone(notCluster),
	}
	if len(kinds) > 0 {
		otherKinds.MatchExpressions = append(otherKinds.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: wire.ApplicationKindLabel, Operator: metav1.LabelSelectorOpNotIn, Values: kinds,
		})
	}
	out := []metav1.LabelSelector{otherKinds}
	for _, kind := range kinds {
		out = append(out, metav1.LabelSelector{
			MatchLabels: map[string]string{PodNamespaceKey: t.Namespace, wire.ApplicationKindLabel: kind},
			MatchExpressions: append(slices.Clone(notCluster), metav1.LabelSelectorRequirement{
				Key: wire.ApplicationNameLabel, Operator: metav1.LabelSelectorOpNotIn, Values: exposed[kind],
			}),
		})
	}
	return out
}

// ExposedApps returns, by kind, the sorted names of the tenant's apps that
// its ComputePlane may reach: those annotated
// computeplane.dev/reachable-from-computeplane: "true" that run on the
// management cluster. A routed app runs inside the ComputePlane itself, so
// the annotation means nothing there and is ignored. Apps of other tenants,
// descendants included, are never exposed to this tenant's ComputePlane.
func ExposedApps(t *model.Tenant) map[string][]string {
	out := map[string][]string{}
	for _, app := range t.Apps {
		if app.Reachable && app.Placement != api.PlacementComputePlane {
			out[app.Kind] = append(out[app.Kind], app.Name)
		}
	}
	for k := range out {
		slices.Sort(out[k])
		out[k] = slices.Compact(out[k])
	}
	return out
}

// descendantSelectors selects every pod of every descendant tenant: by the
// namespaces the inputs know, and by the namespace label Cozystack stamps on
// descendants, which also covers tenants created outside these inputs.
func descendantSelectors(t *model.Tenant) []metav1.LabelSelector {
	var out []metav1.LabelSelector
	if desc := t.Descendants(); len(desc) > 0 {
		out = append(out, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: PodNamespaceKey, Operator: metav1.LabelSelectorOpIn, Values: desc},
		}})
	}
	return append(out, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: NamespaceLabelPrefix + TenantNamespaceLabel + t.Namespace, Operator: metav1.LabelSelectorOpExists},
		{Key: PodNamespaceKey, Operator: metav1.LabelSelectorOpNotIn, Values: []string{t.Namespace}},
	}})
}

// ancestorEtcdSelectors selects the etcd pods of every ancestor tenant, by
// both labels etcd pods carry.
func ancestorEtcdSelectors(t *model.Tenant) []metav1.LabelSelector {
	ancestors := t.Ancestors()
	if len(ancestors) == 0 {
		return nil
	}
	namespaces := make([]string, len(ancestors))
	for i, a := range ancestors {
		namespaces[i] = a.Namespace
	}
	slices.Sort(namespaces)
	in := []metav1.LabelSelectorRequirement{{Key: PodNamespaceKey, Operator: metav1.LabelSelectorOpIn, Values: namespaces}}
	return []metav1.LabelSelector{
		{MatchLabels: map[string]string{EtcdInstanceLabel: EtcdValue}, MatchExpressions: slices.Clone(in)},
		{MatchLabels: map[string]string{EtcdServiceLabel: EtcdValue}, MatchExpressions: slices.Clone(in)},
	}
}

// ancestorIngressSelectors selects the ingress pods of every ancestor
// tenant, one selector per ancestor namespace, sorted by namespace.
func ancestorIngressSelectors(t *model.Tenant) []metav1.LabelSelector {
	var namespaces []string
	for _, a := range t.Ancestors() {
		namespaces = append(namespaces, a.Namespace)
	}
	slices.Sort(namespaces)
	out := make([]metav1.LabelSelector, len(namespaces))
	for i, ns := range namespaces {
		out[i] = metav1.LabelSelector{MatchLabels: map[string]string{wire.IngressServiceLabel: wire.IngressServiceValue, PodNamespaceKey: ns}}
	}
	return out
}
