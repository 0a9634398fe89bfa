package render_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/ciliumeval"
	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// egressFleet: tenant acme (ComputePlane) under root, its child dev (with a
// ComputePlane of its own) and grandchild qa, and a sibling beta. Every
// tenant has a Postgres "db" that opts in; acme also has apps that do not.
const egressFleet = `
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: postgres}
spec:
  application: {kind: Postgres, plural: postgreses, singular: postgres, openAPISchema: "{}"}
  release: {prefix: postgres-, chartRef: {kind: ExternalArtifact, name: postgres, namespace: cozy-system}}
---
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: redis}
spec:
  application: {kind: Redis, plural: redises, singular: redis, openAPISchema: "{}"}
  release: {prefix: redis-, chartRef: {kind: ExternalArtifact, name: redis, namespace: cozy-system}}
---
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: kubernetes}
spec:
  application: {kind: Kubernetes, plural: kuberneteses, singular: kubernetes, openAPISchema: "{}"}
  release: {prefix: kubernetes-, chartRef: {kind: ExternalArtifact, name: kubernetes, namespace: cozy-system}}
---
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: jupyterhub}
spec:
  application: {kind: JupyterHub, plural: jupyterhubs, singular: jupyterhub, openAPISchema: "{}"}
  release: {prefix: jupyterhub-, chartRef: {kind: ExternalArtifact, name: jupyterhub, namespace: cozy-system}}
  placement: ComputePlane
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: acme, namespace: tenant-root}
spec: {computeplane: true}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: dev, namespace: tenant-acme}
spec: {computeplane: true}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: qa, namespace: tenant-acme-dev}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: beta, namespace: tenant-root}
spec: {computeplane: true}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: db, namespace: tenant-acme, annotations: {computeplane.dev/reachable-from-computeplane: "true"}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: other, namespace: tenant-acme}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Redis
metadata: {name: db, namespace: tenant-acme}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Redis
metadata: {name: cache, namespace: tenant-acme, annotations: {computeplane.dev/reachable-from-computeplane: "false"}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Kubernetes
metadata: {name: foo, namespace: tenant-acme}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: JupyterHub
metadata: {name: lab, namespace: tenant-acme, annotations: {computeplane.dev/reachable-from-computeplane: "true"}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: db, namespace: tenant-acme-dev, annotations: {computeplane.dev/reachable-from-computeplane: "true"}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: db, namespace: tenant-acme-dev-qa, annotations: {computeplane.dev/reachable-from-computeplane: "true"}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: db, namespace: tenant-beta, annotations: {computeplane.dev/reachable-from-computeplane: "true"}}
`

// renderPolicies renders a fleet and returns its egress policies, as
// decoded values, by namespace.
func renderPolicies(t *testing.T, fleetYAML string) map[string]map[string]any {
	t.Helper()
	return renderPoliciesWith(t, directConfig(), fleetYAML)
}

// directConfig is the default config under delivery: Direct.
func directConfig() *api.Config {
	return &api.Config{Delivery: api.Direct, Cluster: api.ClusterConfig{Values: api.DefaultClusterValues(), PodSecurity: api.PodSecurityRestricted}}
}

func renderPoliciesWith(t *testing.T, cfg *api.Config, fleetYAML string) map[string]map[string]any {
	t.Helper()
	objs, err := input.Decode([]byte(fleetYAML), "fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run, problems := pipeline.Run(pipeline.Options{Config: cfg, Items: objs})
	if len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	out := run.Objects
	policies := map[string]map[string]any{}
	for _, o := range out {
		if o.Kind != "CiliumNetworkPolicy" {
			continue
		}
		v, err := yamlnode.ToValue(nodeOf(t, o), yamlnode.DefaultBudget)
		if err != nil {
			t.Fatal(err)
		}
		policies[o.Namespace] = v.(map[string]any)
	}
	return policies
}

func parsePolicy(t *testing.T, obj map[string]any) *ciliumeval.Policy {
	t.Helper()
	p, err := ciliumeval.Parse(obj)
	if err != nil {
		t.Fatalf("the policy is not one Cilium would load: %v", err)
	}
	return p
}

// Labels of the pods the flows go to.
func lineage(kind, name string) map[string]string {
	return map[string]string{
		wire.ApplicationKindLabel:  kind,
		wire.ApplicationGroupLabel: api.AppsGroup,
		wire.ApplicationNameLabel:  name,
	}
}

func with(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// tenantNS returns the namespace labels Cozystack's tenant chart stamps on a
// tenant namespace: one per ancestor and one for itself.
func tenantNS(chain ...string) map[string]string {
	out := map[string]string{}
	for _, ns := range chain {
		out["tenant.cozystack.io/"+ns] = ""
	}
	return out
}

// vm is a VM pod (virt-launcher) of the ComputePlane cluster of ns.
func vm(ns string, nsLabels map[string]string) ciliumeval.Endpoint {
	return ciliumeval.Pod(ns, map[string]string{render.ClusterNameLabel: "computeplane", "kubevirt.io": "virt-launcher"}, nsLabels)
}

// TestEgressFlows evaluates the emitted policy of tenant acme the way Cilium
// would, for flows from one of its ComputePlane's VMs.
func TestEgressFlows(t *testing.T) {
	policy := parsePolicy(t, renderPolicies(t, egressFleet)["tenant-acme"])
	acmeNS := tenantNS("tenant-root", "tenant-acme")
	devNS := tenantNS("tenant-root", "tenant-acme", "tenant-acme-dev")
	src := vm("tenant-acme", acmeNS)
	pod := func(ns string, nsLabels map[string]string, labels map[string]string) ciliumeval.Endpoint {
		return ciliumeval.Pod(ns, labels, nsLabels)
	}

	cp := pod("tenant-acme", acmeNS, map[string]string{render.ControlPlaneLabel: "computeplane", "kamaji.clastix.io/component": "deployment"})
	tcp := func(port int) ciliumeval.Flow { return ciliumeval.Port(ciliumeval.TCP, port) }
	https := tcp(443)
	tests := []struct {
		name  string
		dst   ciliumeval.Endpoint
		allow bool
		flow  ciliumeval.Flow
	}{
		{"own control plane: the API server", cp, true, tcp(6443)},
		{"own control plane: konnectivity", cp, true, tcp(8132)},
		{"own control plane: Talos trustd (talos-csr-signer)", cp, true, tcp(50001)},
		{"own control plane: konnectivity admin port", cp, false, tcp(8133)},
		{"own control plane: konnectivity health port", cp, false, tcp(8134)},
		{"own control plane: kine/etcd port", cp, false, tcp(2379)},
		{"own control plane: kubelet-like port", cp, false, tcp(10250)},
		{"own control plane: 443", cp, false, https},
		{"own control plane: below the API server", cp, false, tcp(6442)},
		{"own control plane: above the API server", cp, false, tcp(6444)},
		{"own control plane: port 1", cp, false, tcp(1)},
		{"own control plane: port 65535", cp, false, tcp(65535)},
		{"own control plane: API server port over UDP", cp, false, ciliumeval.Port(ciliumeval.UDP, 6443)},
		{"own control plane: konnectivity over SCTP", cp, false, ciliumeval.Port(ciliumeval.SCTP, 8132)},
		{"another VM of the same cluster (node-to-node traffic)", vm("tenant-acme", acmeNS), true, https},
		{"another cluster's control plane in the same namespace", pod("tenant-acme", acmeNS, with(lineage("Kubernetes", "foo"), render.ControlPlaneLabel, "kubernetes-foo")), false, https},
		{"another cluster's VM in the same namespace", pod("tenant-acme", acmeNS, with(lineage("Kubernetes", "foo"), render.ClusterNameLabel, "kubernetes-foo")), false, https},
		{"exposed app", pod("tenant-acme", acmeNS, lineage("Postgres", "db")), true, https},
		{"exposed app, pod with more labels", pod("tenant-acme", acmeNS, with(lineage("Postgres", "db"), "cnpg.io/instanceRole", "primary")), true, https},
		{"unexposed app of an exposed kind", pod("tenant-acme", acmeNS, lineage("Postgres", "other")), false, https},
		{"Redis named like the exposed Postgres", pod("tenant-acme", acmeNS, lineage("Redis", "db")), false, https},
		{"app annotated \"false\"", pod("tenant-acme", acmeNS, lineage("Redis", "cache")), false, https},
		{"pod with the exposed name and no kind", pod("tenant-acme", acmeNS, map[string]string{wire.ApplicationNameLabel: "db"}), false, https},
		{"pod with the exposed kind and no name", pod("tenant-acme", acmeNS, map[string]string{wire.ApplicationKindLabel: "Postgres"}), false, https},
		{"pod without lineage labels in the tenant namespace", pod("tenant-acme", acmeNS, map[string]string{"app": "operator"}), false, https},
		{"routed app annotated reachable: its kind is not exposed here", pod("tenant-acme", acmeNS, lineage("JupyterHub", "lab")), false, https},
		{"child tenant's app, exposed in the child", pod("tenant-acme-dev", devNS, lineage("Postgres", "db")), false, https},
		{"child tenant's ComputePlane control plane (same label value)", pod("tenant-acme-dev", devNS, map[string]string{render.ControlPlaneLabel: "computeplane"}), false, https},
		{"child tenant's ComputePlane VM", vm("tenant-acme-dev", devNS), false, https},
		{"grandchild tenant's app", pod("tenant-acme-dev-qa", tenantNS("tenant-root", "tenant-acme", "tenant-acme-dev", "tenant-acme-dev-qa"), lineage("Postgres", "db")), false, https},
		{"descendant not in the inputs (by its namespace label)", pod("tenant-acme-new", tenantNS("tenant-root", "tenant-acme", "tenant-acme-new"), lineage("Postgres", "db")), false, https},
		{"cluster DNS", pod("kube-system", nil, map[string]string{"k8s-app": "kube-dns"}), true, https},
		{"management API server", ciliumeval.Entity("kube-apiserver"), false, https},
		{"ancestor etcd", pod("tenant-root", tenantNS("tenant-root"), map[string]string{"app.kubernetes.io/instance": "etcd", "cozystack.io/service": "etcd"}), false, https},
		{"ancestor etcd by its instance label alone", pod("tenant-root", tenantNS("tenant-root"), map[string]string{"app.kubernetes.io/instance": "etcd"}), false, https},
		{"ancestor etcd by its service label alone", pod("tenant-root", tenantNS("tenant-root"), map[string]string{"cozystack.io/service": "etcd"}), false, https},
		{"ancestor ingress", pod("tenant-root", tenantNS("tenant-root"), map[string]string{"cozystack.io/service": "ingress"}), false, https},
		{"ancestor ingress, plain HTTP", pod("tenant-root", tenantNS("tenant-root"), map[string]string{"cozystack.io/service": "ingress", "app.kubernetes.io/name": "ingress-nginx"}), false, tcp(80)},
		{"cluster DNS over UDP", pod("kube-system", nil, map[string]string{"k8s-app": "kube-dns"}), true, ciliumeval.Port(ciliumeval.UDP, 53)},
		// Not this policy's business: the tenant baseline decides these
		// (TestEgressWithTenantBaseline).
		{"another tenant's exposed app", pod("tenant-beta", tenantNS("tenant-root", "tenant-beta"), lineage("Postgres", "db")), true, https},
		{"the internet", ciliumeval.Entity("world"), true, https},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ciliumeval.Egress([]*ciliumeval.Policy{policy}, src, tt.dst, tt.flow)
			if got.Allowed != tt.allow {
				t.Errorf("%v -> %v %v: %s; want allowed=%t", src, tt.dst, tt.flow, got.Reason, tt.allow)
			}
		})
	}

	t.Run("selects only the cluster's VMs", func(t *testing.T) {
		for _, e := range []ciliumeval.Endpoint{
			ciliumeval.Pod("tenant-acme", map[string]string{render.ControlPlaneLabel: "computeplane"}, acmeNS),
			ciliumeval.Pod("tenant-acme", with(lineage("Kubernetes", "foo"), render.ClusterNameLabel, "kubernetes-foo"), acmeNS),
			vm("tenant-acme-dev", devNS),
		} {
			if policy.Selects(e) {
				t.Errorf("the policy selects %v", e)
			}
		}
		if !policy.Selects(src) {
			t.Errorf("the policy does not select %v", src)
		}
	})
}

// TestEgressExposureIsExact enumerates pods of the tenant namespace over
// every combination of the labels that matter and checks that exactly the
// exceptions are reachable: the cluster's own control plane (on its ports)
// and VMs, and the exposed apps by kind AND name, whatever else the pod
// carries.
func TestEgressExposureIsExact(t *testing.T) {
	fleet := egressFleet + `---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: analytics, namespace: tenant-acme, annotations: {computeplane.dev/reachable-from-computeplane: "true"}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Redis
metadata: {name: queue, namespace: tenant-acme, annotations: {computeplane.dev/reachable-from-computeplane: "true"}}
`
	policy := parsePolicy(t, renderPolicies(t, fleet)["tenant-acme"])
	nsLabels := tenantNS("tenant-root", "tenant-acme")
	src := vm("tenant-acme", nsLabels)
	exposed := map[[2]string]bool{{"Postgres", "db"}: true, {"Postgres", "analytics"}: true, {"Redis", "queue"}: true}

	values := func(vs ...string) []string { return append(vs, "other", "") } // "" = label absent
	count := 0
	for _, kind := range values("Postgres", "Redis", "Kubernetes") {
		for _, name := range values("db", "analytics", "queue") {
			for _, cp := range values("computeplane") {
				for _, cluster := range values("computeplane") {
					labels := map[string]string{}
					for k, v := range map[string]string{wire.ApplicationKindLabel: kind, wire.ApplicationNameLabel: name, render.ControlPlaneLabel: cp, render.ClusterNameLabel: cluster} {
						if v != "" {
							labels[k] = v
						}
					}
					dst := ciliumeval.Pod("tenant-acme", labels, nsLabels)
					for _, flow := range []ciliumeval.Flow{ciliumeval.Port(ciliumeval.TCP, 6443), ciliumeval.Port(ciliumeval.TCP, 5432)} {
						// The control plane is open on its own ports only,
						// whatever else the pod carries.
						want := cluster == "computeplane" || exposed[[2]string{kind, name}]
						if cp == "computeplane" {
							want = flow.Port == 6443
						}
						got := ciliumeval.Egress([]*ciliumeval.Policy{policy}, src, dst, flow)
						if got.Allowed != want {
							t.Errorf("%v %v: %s; want allowed=%t", dst, flow, got.Reason, want)
						}
					}
					count++
				}
			}
		}
	}
	if count != 5*5*3*3 {
		t.Fatalf("enumerated %d pods", count)
	}
}

// TestEgressWithTenantBaseline evaluates the policy together with the egress
// policies Cozystack's tenant chart puts in tenant-acme (apps/tenant
// templates/networkpolicy.yaml at 3c780acd, rendered for tenant-acme; the
// allow-to-apiserver policy selects only pods labelled for it, never the
// VMs, and is left out): the baseline allows, the ComputePlane policy takes
// away.
func TestEgressWithTenantBaseline(t *testing.T) {
	policies := []*ciliumeval.Policy{parsePolicy(t, renderPolicies(t, egressFleet)["tenant-acme"])}
	for _, doc := range strings.Split(tenantBaseline, "---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		policies = append(policies, parsePolicy(t, obj))
	}
	acmeNS := tenantNS("tenant-root", "tenant-acme")
	src := vm("tenant-acme", acmeNS)
	https := ciliumeval.Port(ciliumeval.TCP, 443)
	cp := ciliumeval.Pod("tenant-acme", map[string]string{render.ControlPlaneLabel: "computeplane"}, acmeNS)
	tests := []struct {
		name  string
		dst   ciliumeval.Endpoint
		allow bool
		flow  ciliumeval.Flow
	}{
		{"exposed app", ciliumeval.Pod("tenant-acme", lineage("Postgres", "db"), acmeNS), true, https},
		{"unexposed app: the baseline allows, the ComputePlane policy denies", ciliumeval.Pod("tenant-acme", lineage("Postgres", "other"), acmeNS), false, https},
		{"own control plane: the API server", cp, true, ciliumeval.Port(ciliumeval.TCP, 6443)},
		{"own control plane: konnectivity", cp, true, ciliumeval.Port(ciliumeval.TCP, 8132)},
		{"own control plane, another port: the baseline allows, the ComputePlane policy denies", cp, false, ciliumeval.Port(ciliumeval.TCP, 8133)},
		{"child tenant: the baseline allows, the ComputePlane policy denies", ciliumeval.Pod("tenant-acme-dev", lineage("Postgres", "db"), tenantNS("tenant-root", "tenant-acme", "tenant-acme-dev")), false, https},
		{"ancestor etcd: the baseline allows, the ComputePlane policy denies", ciliumeval.Pod("tenant-root", map[string]string{"app.kubernetes.io/instance": "etcd", "cozystack.io/service": "etcd"}, tenantNS("tenant-root")), false, https},
		{"ancestor ingress: the baseline allows, the ComputePlane policy denies", ciliumeval.Pod("tenant-root", map[string]string{"cozystack.io/service": "ingress"}, tenantNS("tenant-root")), false, https},
		{"ancestor vminsert: open by design", ciliumeval.Pod("tenant-root", map[string]string{"app.kubernetes.io/name": "vminsert"}, tenantNS("tenant-root")), true, ciliumeval.Port(ciliumeval.TCP, 8480)},
		{"another tenant: the baseline denies", ciliumeval.Pod("tenant-beta", lineage("Postgres", "db"), tenantNS("tenant-root", "tenant-beta")), false, https},
		{"cluster DNS", ciliumeval.Pod("kube-system", map[string]string{"k8s-app": "kube-dns"}, nil), true, ciliumeval.Port(ciliumeval.UDP, 53)},
		{"the dashboard's API proxy: the baseline allows, the ComputePlane policy denies", ciliumeval.Pod("cozy-dashboard", map[string]string{"app.kubernetes.io/name": "dashboard"}, nil), false, ciliumeval.Port(ciliumeval.TCP, 8080)},
		{"the LINSTOR controller: the baseline allows, the ComputePlane policy denies", ciliumeval.Pod("cozy-linstor", map[string]string{"app.kubernetes.io/component": "linstor-controller"}, nil), false, ciliumeval.Port(ciliumeval.TCP, 3370)},
		{"Keycloak: the baseline allows, the ComputePlane policy denies", ciliumeval.Pod("cozy-keycloak", map[string]string{"app": "keycloak"}, nil), false, ciliumeval.Port(ciliumeval.TCP, 8080)},
		{"Grafana's plugin server: the baseline allows, the ComputePlane policy denies", ciliumeval.Pod("cozy-grafana-operator", map[string]string{"app": "grafana-dashboards"}, nil), false, https},
		{"CDI's upload proxy: the baseline allows, the ComputePlane policy denies", ciliumeval.Pod("cozy-kubevirt-cdi", map[string]string{"cdi.kubevirt.io": "cdi-uploadproxy"}, nil), false, ciliumeval.Port(ciliumeval.TCP, 8443)},
		{"another platform namespace: the baseline denies", ciliumeval.Pod("cozy-system", nil, nil), false, https},
		{"management API server", ciliumeval.Entity("kube-apiserver"), false, https},
		{"the internet", ciliumeval.Entity("world"), true, https},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ciliumeval.Egress(policies, src, tt.dst, tt.flow)
			if got.Allowed != tt.allow {
				t.Errorf("%v -> %v %v: %s; want allowed=%t", src, tt.dst, tt.flow, got.Reason, tt.allow)
			}
		})
	}
}

// tenantBaseline is the egress side of Cozystack's tenant policies for
// tenant-acme (a child of tenant-root).
const tenantBaseline = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-internal-communication, namespace: tenant-acme}
spec:
  endpointSelector: {}
  egress:
  - toEndpoints:
    - {}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-external-communication, namespace: tenant-acme}
spec:
  endpointSelector: {}
  egress:
  - toEntities: [world]
---
apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata: {name: tenant-acme-egress}
spec:
  endpointSelector:
    matchLabels: {"k8s:io.kubernetes.pod.namespace": tenant-acme}
  egress:
  - toEndpoints:
    - matchLabels: {"k8s:io.cilium.k8s.namespace.labels.tenant.cozystack.io/tenant-acme": ""}
  - toEndpoints:
    - matchLabels: {"k8s:app.kubernetes.io/name": vminsert, "k8s:io.kubernetes.pod.namespace": tenant-root}
  - toEndpoints:
    - matchLabels: {"k8s:app.kubernetes.io/instance": etcd, "k8s:io.kubernetes.pod.namespace": tenant-root}
  - toEndpoints:
    - matchLabels: {cozystack.io/service: ingress, "k8s:io.kubernetes.pod.namespace": tenant-root}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-to-dns, namespace: tenant-acme}
spec:
  endpointSelector: {}
  egress:
  - toEndpoints:
    - matchLabels: {"k8s:io.kubernetes.pod.namespace": kube-system, k8s-app: kube-dns}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-to-dashboard, namespace: tenant-acme}
spec:
  endpointSelector: {}
  egress:
  - toEndpoints:
    - matchLabels: {"k8s:io.kubernetes.pod.namespace": cozy-dashboard}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-to-linstor-gui, namespace: tenant-acme}
spec:
  endpointSelector: {}
  egress:
  - toEndpoints:
    - matchLabels: {"k8s:io.kubernetes.pod.namespace": cozy-linstor}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-to-keycloak, namespace: tenant-acme}
spec:
  endpointSelector: {}
  egress:
  - toEndpoints:
    - matchLabels: {"k8s:io.kubernetes.pod.namespace": cozy-keycloak}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-to-grafana-dashboards, namespace: tenant-acme}
spec:
  endpointSelector: {}
  egress:
  - toEndpoints:
    - matchLabels: {"k8s:io.kubernetes.pod.namespace": cozy-grafana-operator}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-to-cdi-upload-proxy, namespace: tenant-acme}
spec:
  endpointSelector: {}
  egress:
  - toEndpoints:
    - matchLabels: {"k8s:io.kubernetes.pod.namespace": cozy-kubevirt-cdi}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-to-ingress, namespace: tenant-acme}
spec:
  endpointSelector: {}
  egress:
  - toEndpoints:
    - matchLabels: {cozystack.io/service: ingress}
`

// TestEgressPolicyShapes checks the policy of every tenant of the fleet:
// each is what Cilium's CRD admits and what the agent loads, and the root
// tenant, which has no ancestors, has no etcd rule.
func TestEgressPolicyShapes(t *testing.T) {
	registry := crdtest.LoadShared(t)
	fleet := egressFleet + `---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: root, namespace: tenant-root}
spec: {computeplane: true}
`
	policies := renderPolicies(t, fleet)
	for _, ns := range []string{"tenant-root", "tenant-acme", "tenant-acme-dev", "tenant-beta"} {
		obj, ok := policies[ns]
		if !ok {
			t.Errorf("no egress policy in %s", ns)
			continue
		}
		for _, v := range registry.Validate(obj) {
			t.Errorf("%s: %s", ns, v)
		}
		parsePolicy(t, obj)
	}
	if len(policies) != 4 {
		t.Errorf("got egress policies in %d namespaces, want 4 (one per ComputePlane)", len(policies))
	}
	rules := policies["tenant-root"]["spec"].(map[string]any)["egressDeny"].([]any)
	if got := fmt.Sprint(rules); strings.Contains(got, "etcd") || strings.Contains(got, "ingress") {
		t.Errorf("the root tenant has no ancestors, yet its policy names etcd or ingress: %s", got)
	}
	root := parsePolicy(t, policies["tenant-root"])
	src := vm("tenant-root", tenantNS("tenant-root"))
	for _, dst := range []ciliumeval.Endpoint{
		ciliumeval.Pod("tenant-beta", lineage("Postgres", "db"), tenantNS("tenant-root", "tenant-beta")),
		ciliumeval.Pod("tenant-root", map[string]string{"cozystack.io/service": "etcd"}, tenantNS("tenant-root")),
	} {
		if v := ciliumeval.Egress([]*ciliumeval.Policy{root}, src, dst, ciliumeval.Port(ciliumeval.TCP, 5432)); v.Allowed {
			t.Errorf("root ComputePlane -> %v: %s; every tenant is a descendant of root and root's own pods are not exposed", dst, v.Reason)
		}
	}
}

// TestDocsListTheBaselineNamespaces keeps docs/security.md's table of what the
// tenant baseline opens in step with BaselineNamespaces: each platform
// namespace has its row, with the baseline policy and the verdict.
func TestDocsListTheBaselineNamespaces(t *testing.T) {
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range render.BaselineNamespaces {
		verdict := "open"
		if b.Deny {
			verdict = "deny"
		}
		row := regexp.MustCompile("(?m)^\\| `" + regexp.QuoteMeta(b.Namespace) + "` \\(`" + regexp.QuoteMeta(b.Policy) + "`\\) \\| [^|]* \\| " + verdict + " \\|")
		if !row.Match(doc) {
			t.Errorf("docs/security.md has no row `%s` (`%s`) with verdict %s", b.Namespace, b.Policy, verdict)
		}
	}
}
