package ciliumeval_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/ciliumeval"
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
			got := ciliumeval.Egress([]*ciliumeval.Policy{p}, src, tt.dst)
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
		`{endpointSelector: {}, egressDeny: [{toEndpoints: [{}], toPorts: [{ports: [{port: "80"}]}]}]}`:                        "toPorts: not modelled",
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
