package ciliumeval_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/ciliumeval"
)

func parse(t *testing.T, doc string) *ciliumeval.Policy {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	p, err := ciliumeval.Parse(obj)
	if err != nil {
		t.Fatalf("Parse() error = %v", err)
	}
	return p
}

const header = "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: p, namespace: ns1}\n"

// TestSelectorSemantics checks the rules Cilium applies that a naive label
// match gets wrong.
func TestSelectorSemantics(t *testing.T) {
	src := ciliumeval.Pod("ns1", map[string]string{"role": "vm"}, nil)
	tests := []struct {
		name   string
		policy string
		dst    ciliumeval.Endpoint
		allow  bool
	}{{
		name:   "a peer selector without a namespace is confined to the policy's namespace",
		policy: `{endpointSelector: {}, enableDefaultDeny: {egress: false}, egressDeny: [{toEndpoints: [{matchLabels: {app: db}}]}]}`,
		dst:    ciliumeval.Pod("ns2", map[string]string{"app": "db"}, nil),
		allow:  true,
	}, {
		name:   "the same selector denies in its own namespace",
		policy: `{endpointSelector: {}, enableDefaultDeny: {egress: false}, egressDeny: [{toEndpoints: [{matchLabels: {app: db}}]}]}`,
		dst:    ciliumeval.Pod("ns1", map[string]string{"app": "db"}, nil),
	}, {
		name:   "a namespace-label selector is not confined",
		policy: `{endpointSelector: {}, enableDefaultDeny: {egress: false}, egressDeny: [{toEndpoints: [{matchExpressions: [{key: "k8s:io.cilium.k8s.namespace.labels.team", operator: Exists}]}]}]}`,
		dst:    ciliumeval.Pod("ns2", nil, map[string]string{"team": "a"}),
	}, {
		name:   "NotIn matches an absent label",
		policy: `{endpointSelector: {}, enableDefaultDeny: {egress: false}, egressDeny: [{toEndpoints: [{matchLabels: {"k8s:io.kubernetes.pod.namespace": ns2}, matchExpressions: [{key: app, operator: NotIn, values: [db]}]}]}]}`,
		dst:    ciliumeval.Pod("ns2", nil, nil),
	}, {
		name:   "a reserved selector does not match a pod",
		policy: `{endpointSelector: {}, enableDefaultDeny: {egress: false}, egressDeny: [{toEndpoints: [{matchLabels: {"reserved:world": ""}}]}]}`,
		dst:    ciliumeval.Pod("ns1", nil, nil),
		allow:  true,
	}, {
		name:   "a k8s: key does not match a reserved label",
		policy: `{endpointSelector: {}, enableDefaultDeny: {egress: false}, egressDeny: [{toEndpoints: [{matchExpressions: [{key: "k8s:kube-apiserver", operator: Exists}]}]}]}`,
		dst:    ciliumeval.Entity("kube-apiserver"),
		allow:  true,
	}, {
		name:   "deny-only rules switch the source to default-deny unless told not to",
		policy: `{endpointSelector: {}, egressDeny: [{toEntities: [kube-apiserver]}]}`,
		dst:    ciliumeval.Entity("world"),
	}, {
		name:   "deny wins over allow",
		policy: `{endpointSelector: {}, egress: [{toEntities: [all]}], egressDeny: [{toEntities: [world]}]}`,
		dst:    ciliumeval.Entity("world"),
	}, {
		name:   "the cluster entity covers pods of every namespace",
		policy: `{endpointSelector: {}, enableDefaultDeny: {egress: false}, egressDeny: [{toEntities: [cluster]}]}`,
		dst:    ciliumeval.Pod("ns9", nil, nil),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parse(t, header+"spec: "+tt.policy)
			got := ciliumeval.Egress([]*ciliumeval.Policy{p}, src, tt.dst, ciliumeval.Port(ciliumeval.TCP, 443))
			if got.Allowed != tt.allow {
				t.Errorf("Egress(%v) = %+v, want allowed=%t", tt.dst, got, tt.allow)
			}
		})
	}
}

func TestSubjectIsConfinedToTheNamespace(t *testing.T) {
	p := parse(t, header+`spec: {endpointSelector: {matchLabels: {role: vm}}, egressDeny: [{toEntities: [world]}]}`)
	if !p.Selects(ciliumeval.Pod("ns1", map[string]string{"role": "vm"}, nil)) {
		t.Error("the policy does not select a matching pod of its namespace")
	}
	if p.Selects(ciliumeval.Pod("ns2", map[string]string{"role": "vm"}, nil)) {
		t.Error("a CiliumNetworkPolicy selects a pod of another namespace")
	}
}

// TestParseRefuses covers what Cilium refuses and what this package does not
// model: a test must never pass on a field that was ignored.
func TestParseRefuses(t *testing.T) {
	for spec, want := range map[string]string{
		`{endpointSelector: {}, egressDeny: [{toEntities: [world], toEndpoints: [{}]}]}`:                                       "combining toEndpoints and toEntities",
		`{endpointSelector: {}, egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: http}]}]}]}`:                        "named ports are not modelled",
		`{endpointSelector: {}, egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "80", protocol: VRRP}]}]}]}`:        "\"VRRP\" is not modelled",
		`{endpointSelector: {}, egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "80", endPort: 79}]}]}]}`:           "79 is below port 80",
		`{endpointSelector: {}, egress: [{toEndpoints: [{}], toPorts: [{ports: [{port: "80"}], rules: {http: [{}]}}]}]}`:       "rules: not modelled",
		`{endpointSelector: {}, egressDeny: [{toEndpoints: [{}], toPorts: []}]}`:                                               "empty list is not modelled",
		`{endpointSelector: {}, egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "99999"}]}]}]}`:                     "99999 is not a port",
		`{endpointSelector: {}, egressDeny: [{toEndpoints: [{matchExpressions: [{key: a, operator: NotIn}]}]}]}`:               "needs values",
		`{endpointSelector: {}, egressDeny: [{toEndpoints: [{matchExpressions: [{key: a, operator: Exists, values: [x]}]}]}]}`: "takes no values",
		`{endpointSelector: {}, egressDeny: [{toEndpoints: [{matchExpressions: [{key: a, operator: Is}]}]}]}`:                  "is not In",
		`{endpointSelector: {}, egressDeny: [{toEntities: [everything]}]}`:                                                     "unknown entity",
		`{nodeSelector: {}, egressDeny: [{toEntities: [world]}]}`:                                                              "spec.nodeSelector: not modelled",
	} {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(header+"spec: "+spec), &obj); err != nil {
			t.Fatal(err)
		}
		_, err := ciliumeval.Parse(obj)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) error = %v, want it to say %q", spec, err, want)
		}
	}
}

// TestPortSemantics checks toPorts the way Cilium reads it: ranges with
// endPort, ANY as TCP, UDP and SCTP, port 0 as every port, ICMP matched only
// by rules without ports, and a port-narrowed deny that leaves the other
// ports to the allow rules.
func TestPortSemantics(t *testing.T) {
	src := ciliumeval.Pod("ns1", map[string]string{"role": "vm"}, nil)
	dst := ciliumeval.Pod("ns1", map[string]string{"app": "cp"}, nil)
	const allowAll = `egress: [{toEndpoints: [{}]}], `
	tests := []struct {
		name   string
		policy string
		flow   ciliumeval.Flow
		allow  bool
	}{
		{"in a denied range", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "1", endPort: 6442, protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 22), false},
		{"the range's first port", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "1", endPort: 6442, protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 1), false},
		{"the range's last port", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "1", endPort: 6442, protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 6442), false},
		{"just past the range: the allow rule decides", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "1", endPort: 6442, protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 6443), true},
		{"a TCP range does not cover UDP", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "1", endPort: 6442, protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.UDP, 53), true},
		{"a single port", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "80", protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 80), false},
		{"next to a single port", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "80", protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 81), true},
		{"ANY covers SCTP", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "80"}]}]}]`, ciliumeval.Port(ciliumeval.SCTP, 80), false},
		{"ANY does not cover ICMP", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "0"}]}]}]`, ciliumeval.Flow{Protocol: ciliumeval.ICMP}, true},
		{"port 0 is every port", allowAll + `egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "0", protocol: UDP}]}]}]`, ciliumeval.Port(ciliumeval.UDP, 5353), false},
		{"an L3 deny covers ICMP", allowAll + `egressDeny: [{toEndpoints: [{}]}]`, ciliumeval.Flow{Protocol: ciliumeval.ICMP}, false},
		{"an allow narrowed to a port leaves the others to default-deny", `egress: [{toEndpoints: [{}], toPorts: [{ports: [{port: "443", protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 444), false},
		{"an allow narrowed to a port allows it", `egress: [{toEndpoints: [{}], toPorts: [{ports: [{port: "443", protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 443), true},
		{"deny on a port wins over the allow of the same port", `egress: [{toEndpoints: [{}], toPorts: [{ports: [{port: "443", protocol: TCP}]}]}], egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "400", endPort: 500, protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 443), false},
		{"ports narrow an entity rule too", allowAll + `egressDeny: [{toEntities: [cluster], toPorts: [{ports: [{port: "22", protocol: TCP}]}]}]`, ciliumeval.Port(ciliumeval.TCP, 23), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parse(t, header+"spec: {endpointSelector: {}, "+tt.policy+"}")
			got := ciliumeval.Egress([]*ciliumeval.Policy{p}, src, dst, tt.flow)
			if got.Allowed != tt.allow {
				t.Errorf("Egress(%v) = %+v, want allowed=%t", tt.flow, got, tt.allow)
			}
		})
	}
}
