package render_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/ciliumeval"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// expectEgress is the contract of the egress policy (docs/security.md), written as
// a plain decision over one flow from a VM of tenant-acme's ComputePlane, to
// check the policy against: independently of how the policy expresses it.
// It answers for the policy alone; what the tenant baseline adds or takes
// away is TestEgressWithTenantBaseline's.
func expectEgress(release string, allowAncestorIngress bool, dst ciliumeval.Endpoint, f ciliumeval.Flow) bool {
	if dst.Entity != "" {
		return dst.Entity != "kube-apiserver"
	}
	l := dst.Labels
	switch {
	case slices.Contains([]string{"cozy-dashboard", "cozy-linstor", "cozy-keycloak", "cozy-grafana-operator", "cozy-kubevirt-cdi"}, dst.Namespace):
		return false // platform namespaces the tenant baseline opens, of no use to the VMs
	case dst.Namespace == "tenant-acme":
		if l[render.ControlPlaneLabel] == release {
			// The own control plane, on exactly its ports. ICMP has no
			// port, and the policy does not name it (README: limits).
			if f.Protocol == ciliumeval.ICMP {
				return true
			}
			return f.Protocol == ciliumeval.TCP && slices.Contains([]int{6443, 8132, 50001}, f.Port)
		}
		if l[render.ClusterNameLabel] == release {
			return true // the cluster's own VMs
		}
		exposed := map[[2]string]bool{{"Postgres", "db"}: true}
		return exposed[[2]string{l[wire.ApplicationKindLabel], l[wire.ApplicationNameLabel]}]
	case dst.NamespaceLabels["tenant.cozystack.io/tenant-acme"] == "set":
		return false // a descendant, known or not
	case dst.Namespace == "tenant-root":
		if l["app.kubernetes.io/instance"] == "etcd" || l["cozystack.io/service"] == "etcd" {
			return false
		}
		if l["cozystack.io/service"] == "ingress" {
			return allowAncestorIngress
		}
	}
	return true
}

// flowTable is the destinations and flows the generated table crosses: pods
// of every kind of namespace the VMs see, over every combination of the
// labels the policy looks at, and entities; flows over the boundaries of
// the open ports, well-known ports, random ports, and other protocols.
func flowTable(release string) ([]ciliumeval.Endpoint, []ciliumeval.Flow) {
	type ns struct {
		name   string
		labels map[string]string
	}
	// "set" marks the label of a tenant namespace (tenantNS uses "";
	// expectEgress tells them apart by value, so these use "set").
	chain := func(nss ...string) map[string]string {
		out := map[string]string{}
		for _, n := range nss {
			out["tenant.cozystack.io/"+n] = "set"
		}
		return out
	}
	namespaces := []ns{
		{"tenant-acme", chain("tenant-root", "tenant-acme")},
		{"tenant-acme-dev", chain("tenant-root", "tenant-acme", "tenant-acme-dev")},
		{"tenant-acme-dev-qa", chain("tenant-root", "tenant-acme", "tenant-acme-dev", "tenant-acme-dev-qa")},
		{"tenant-acme-unlisted", chain("tenant-root", "tenant-acme", "tenant-acme-unlisted")},
		{"tenant-root", chain("tenant-root")},
		{"tenant-beta", chain("tenant-root", "tenant-beta")},
		{"kube-system", nil},
		{"cozy-system", nil},
		{"cozy-dashboard", nil},
		{"cozy-linstor", nil},
		{"cozy-kubevirt-cdi", nil},
		{"cozy-keycloak", nil},
		{"cozy-grafana-operator", nil},
	}
	opt := func(vs ...string) []string { return append(vs, "") } // "" = absent
	var dsts []ciliumeval.Endpoint
	for _, n := range namespaces {
		for _, cp := range opt(release, "kubernetes-foo") {
			for _, cluster := range opt(release, "kubernetes-foo") {
				for _, app := range [][2]string{{"Postgres", "db"}, {"Postgres", "other"}, {"Redis", "db"}, {"", "db"}, {"Postgres", ""}, {"", ""}} {
					for _, service := range opt("ingress", "etcd") {
						for _, instance := range opt("etcd") {
							labels := map[string]string{}
							for k, v := range map[string]string{
								render.ControlPlaneLabel: cp, render.ClusterNameLabel: cluster,
								wire.ApplicationKindLabel: app[0], wire.ApplicationNameLabel: app[1],
								"cozystack.io/service": service, "app.kubernetes.io/instance": instance,
							} {
								if v != "" {
									labels[k] = v
								}
							}
							dsts = append(dsts, ciliumeval.Pod(n.name, labels, n.labels))
						}
					}
				}
			}
		}
	}
	for _, e := range []string{"kube-apiserver", "world", "host", "remote-node", "ingress", "health"} {
		dsts = append(dsts, ciliumeval.Entity(e))
	}

	var flows []ciliumeval.Flow
	ports := []int{1, 2, 22, 53, 80, 443, 2379, 2380, 5432, 6379, 6442, 6443, 6444, 8131, 8132, 8133, 8134, 9443, 10250, 50000, 50001, 50002, 65534, 65535}
	r := rand.New(rand.NewPCG(10, 8))
	for range 24 {
		ports = append(ports, 1+r.IntN(65535))
	}
	for _, p := range ports {
		flows = append(flows, ciliumeval.Port(ciliumeval.TCP, p))
	}
	for _, p := range []int{53, 6443, 8132, 50001, 1 + r.IntN(65535)} {
		flows = append(flows, ciliumeval.Port(ciliumeval.UDP, p), ciliumeval.Port(ciliumeval.SCTP, p))
	}
	flows = append(flows, ciliumeval.Flow{Protocol: ciliumeval.ICMP})
	return dsts, flows
}

// TestEgressFlowTable evaluates the rendered policy, as Cilium would,
// against a generated table of flows from the VMs, under both deliveries and
// both settings of cluster.egress.allowAncestorIngress, and checks every
// verdict against the contract (expectEgress).
func TestEgressFlowTable(t *testing.T) {
	for _, tc := range []struct {
		delivery api.Delivery
		release  string
		allow    bool
	}{
		{api.Direct, "computeplane", false},
		{api.Direct, "computeplane", true},
		{api.Platform, "computeplane-cluster", false},
		{api.Platform, "computeplane-cluster", true},
	} {
		t.Run(fmt.Sprintf("%s/allowAncestorIngress=%t", tc.delivery, tc.allow), func(t *testing.T) {
			cfg := directConfig()
			if tc.delivery == api.Platform {
				cfg = &api.Config{Delivery: api.Platform}
			}
			cfg.Cluster.Egress.AllowAncestorIngress = tc.allow
			policy := parsePolicy(t, renderPoliciesWith(t, cfg, egressFleet)["tenant-acme"])
			src := ciliumeval.Pod("tenant-acme", map[string]string{render.ClusterNameLabel: tc.release, "kubevirt.io": "virt-launcher"}, tenantNS("tenant-root", "tenant-acme"))
			if !policy.Selects(src) {
				t.Fatalf("the policy does not select the cluster's VM %v", src)
			}
			dsts, flows := flowTable(tc.release)
			checked, wrong := 0, 0
			for _, dst := range dsts {
				for _, f := range flows {
					want := expectEgress(tc.release, tc.allow, dst, f)
					got := ciliumeval.Egress([]*ciliumeval.Policy{policy}, src, dst, f)
					checked++
					if got.Allowed != want {
						wrong++
						if wrong <= 20 {
							t.Errorf("%v %v: %s; want allowed=%t", dst, f, got.Reason, want)
						}
					}
				}
			}
			if wrong > 20 {
				t.Errorf("... %d wrong verdicts in all", wrong)
			}
			if checked < 100_000 {
				t.Errorf("checked %d flows; the table is smaller than intended", checked)
			}
			t.Logf("checked %d flows (%d destinations x %d flows)", checked, len(dsts), len(flows))
		})
	}
}

// TestEgressAncestorIngressShape pins the shape the pull-request summary
// reads: the ancestor-ingress deny is egressDeny toEndpoints selectors whose
// matchLabels carry cozystack.io/service: ingress with the ancestor's
// namespace, present only when not allowed.
func TestEgressAncestorIngressShape(t *testing.T) {
	for _, allow := range []bool{false, true} {
		cfg := directConfig()
		cfg.Cluster.Egress.AllowAncestorIngress = allow
		policies := renderPoliciesWith(t, cfg, egressFleet)
		for ns, want := range map[string][]string{
			"tenant-acme":     {"tenant-root"},
			"tenant-acme-dev": {"tenant-acme", "tenant-root"},
			"tenant-beta":     {"tenant-root"},
		} {
			var got []string
			for _, r := range policies[ns]["spec"].(map[string]any)["egressDeny"].([]any) {
				for _, sel := range asList(r.(map[string]any)["toEndpoints"]) {
					ml, _ := sel.(map[string]any)["matchLabels"].(map[string]any)
					if ml["cozystack.io/service"] == "ingress" {
						got = append(got, fmt.Sprint(ml["k8s:io.kubernetes.pod.namespace"]))
					}
				}
			}
			if allow {
				want = nil
			}
			if !slices.Equal(got, want) {
				t.Errorf("allowAncestorIngress=%t: %s denies the ingress of %v, want %v", allow, ns, got, want)
			}
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
