package ciliumeval

import (
	"fmt"
	"slices"
)

// Policy is a parsed CiliumNetworkPolicy or CiliumClusterwideNetworkPolicy,
// as far as egress goes.
type Policy struct {
	Name string
	// Namespace is empty for a clusterwide policy.
	Namespace         string
	subject           selector
	defaultDenyEgress bool
	egress            []peers
	egressDeny        []peers
}

// peers is one egress or egressDeny rule: the endpoints it names and, when
// it has toPorts, the ports it is narrowed to.
type peers struct {
	entities  []string
	endpoints []selector
	ports     []portRange
}

// the fields of a rule this package models, and the ones Cilium accepts but
// it does not.
var (
	peerFields        = []string{"toEndpoints", "toEntities"}
	unsupportedFields = []string{"toCIDR", "toCIDRSet", "toFQDNs", "toGroups", "toNodes", "toRequires", "toServices", "icmps", "authentication"}
)

// Parse reads a policy decoded from YAML or JSON. It refuses fields it does
// not model and what the Cilium agent would refuse.
func Parse(obj map[string]any) (*Policy, error) {
	md, _ := obj["metadata"].(map[string]any)
	p := &Policy{}
	p.Name, _ = md["name"].(string)
	switch obj["kind"] {
	case "CiliumNetworkPolicy":
		p.Namespace, _ = md["namespace"].(string)
		if p.Namespace == "" {
			return nil, fmt.Errorf("a CiliumNetworkPolicy needs metadata.namespace")
		}
	case "CiliumClusterwideNetworkPolicy":
	default:
		return nil, fmt.Errorf("kind %v is not a Cilium network policy", obj["kind"])
	}
	if obj["apiVersion"] != "cilium.io/v2" {
		return nil, fmt.Errorf("apiVersion %v is not cilium.io/v2", obj["apiVersion"])
	}
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("spec: is required (specs lists are not modelled)")
	}
	for k := range spec {
		switch k {
		case "description", "labels", "endpointSelector", "enableDefaultDeny", "egress", "egressDeny", "ingress", "ingressDeny":
		default:
			return nil, fmt.Errorf("spec.%s: not modelled", k)
		}
	}
	sel, err := parseSelector(spec["endpointSelector"], "spec.endpointSelector")
	if err != nil {
		return nil, err
	}
	if p.Namespace != "" {
		// A namespaced policy only ever selects its own namespace's pods.
		sel.reqs = append(sel.reqs, requirement{SourceK8s, NamespaceKey, "In", []string{p.Namespace}})
	}
	p.subject = sel
	if p.egress, err = p.parseRules(spec["egress"], "spec.egress"); err != nil {
		return nil, err
	}
	if p.egressDeny, err = p.parseRules(spec["egressDeny"], "spec.egressDeny"); err != nil {
		return nil, err
	}
	p.defaultDenyEgress = len(p.egress)+len(p.egressDeny) > 0
	if dd, ok := spec["enableDefaultDeny"].(map[string]any); ok {
		if v, ok := dd["egress"].(bool); ok {
			p.defaultDenyEgress = v
		}
	}
	return p, nil
}

func (p *Policy) parseRules(v any, path string) ([]peers, error) {
	if v == nil {
		return nil, nil
	}
	var out []peers
	err := eachEntry(v, path, "a rule", func(rule map[string]any, path string) error {
		r, err := p.parseRule(rule, path)
		out = append(out, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// eachEntry calls read with every entry of v and its path, failing at the
// first error: v must be a list of maps, what names an entry in messages.
func eachEntry(v any, path, what string, read func(entry map[string]any, path string) error) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s: must be a list", path)
	}
	for i, item := range list {
		entryPath := fmt.Sprintf("%s[%d]", path, i)
		entry, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: must be %s", entryPath, what)
		}
		if err := read(entry, entryPath); err != nil {
			return err
		}
	}
	return nil
}

// parseRule reads one egress or egressDeny rule: the peers it names (one
// kind of them, as Cilium allows) and the ports it narrows them to.
func (p *Policy) parseRule(rule map[string]any, path string) (peers, error) {
	var set []string
	for k := range rule {
		switch {
		case slices.Contains(peerFields, k):
			set = append(set, k)
		case k == "toPorts":
		case slices.Contains(unsupportedFields, k):
			return peers{}, fmt.Errorf("%s.%s: not modelled", path, k)
		default:
			return peers{}, fmt.Errorf("%s.%s: unknown field", path, k)
		}
	}
	if len(set) > 1 {
		slices.Sort(set)
		return peers{}, fmt.Errorf("%s: combining %s and %s is not supported by Cilium", path, set[0], set[1])
	}
	var r peers
	if tp, ok := rule["toPorts"]; ok {
		ports, err := parsePorts(tp, path+".toPorts")
		if err != nil {
			return peers{}, err
		}
		if len(ports) == 0 {
			// toPorts: [] narrows to nothing Cilium can match.
			return peers{}, fmt.Errorf("%s.toPorts: an empty list is not modelled", path)
		}
		r.ports = ports
	}
	if ents, ok := rule["toEntities"].([]any); ok {
		for _, e := range ents {
			s, _ := e.(string)
			if _, known := entities[s]; !known {
				return peers{}, fmt.Errorf("%s.toEntities: unknown entity %v", path, e)
			}
			r.entities = append(r.entities, s)
		}
	}
	if eps, ok := rule["toEndpoints"].([]any); ok {
		for j, e := range eps {
			sel, err := parseSelector(e, fmt.Sprintf("%s.toEndpoints[%d]", path, j))
			if err != nil {
				return peers{}, err
			}
			r.endpoints = append(r.endpoints, p.scopePeer(sel))
		}
	}
	return r, nil
}

// scopePeer confines a peer selector as Cilium does: a selector on reserved
// labels stays as written; one that names neither the namespace nor a
// namespace label matches only the policy's namespace, or, in a clusterwide
// policy, only endpoints that have a namespace (pods).
func (p *Policy) scopePeer(sel selector) selector {
	if sel.hasSource(SourceReserved) || sel.hasKey(SourceK8s, NamespaceKey) {
		return sel
	}
	switch {
	case p.Namespace == "":
		sel.reqs = append(sel.reqs, requirement{SourceK8s, NamespaceKey, "Exists", nil})
	case !sel.hasKeyPrefix(SourceK8s, NamespaceLabelsPrefix):
		sel.reqs = append(sel.reqs, requirement{SourceK8s, NamespaceKey, "In", []string{p.Namespace}})
	}
	return sel
}

// Selects reports whether the policy applies to the endpoint as a source.
func (p *Policy) Selects(e Endpoint) bool {
	return e.Entity == "" && p.subject.matches(e.identity())
}

// matches reports whether the rule covers a flow to dst, whose identity
// labels are id.
func (r peers) matches(dst Endpoint, id []label, f Flow) bool {
	if len(r.ports) > 0 && !slices.ContainsFunc(r.ports, func(p portRange) bool { return p.matches(f) }) {
		return false
	}
	for _, e := range r.entities {
		if entityMatches(e, dst) {
			return true
		}
	}
	return slices.ContainsFunc(r.endpoints, func(s selector) bool { return s.matches(id) })
}

// Verdict is the outcome of an egress connection.
type Verdict struct {
	Allowed bool
	// Reason names the deciding policy and rule, or why nothing decided.
	Reason string
}

// Egress decides whether src may open a connection of flow f to dst under
// policies. A rule without toPorts matches every protocol and port, ICMP
// included; one with toPorts only its ports.
func Egress(policies []*Policy, src, dst Endpoint, f Flow) Verdict {
	var selecting []*Policy
	for _, p := range policies {
		if p.Selects(src) {
			selecting = append(selecting, p)
		}
	}
	id := dst.identity()
	for _, p := range selecting {
		for i, r := range p.egressDeny {
			if r.matches(dst, id, f) {
				return Verdict{false, fmt.Sprintf("denied by %s egressDeny[%d]", p.Name, i)}
			}
		}
	}
	defaultDeny := false
	for _, p := range selecting {
		defaultDeny = defaultDeny || p.defaultDenyEgress
		for i, r := range p.egress {
			if r.matches(dst, id, f) {
				return Verdict{true, fmt.Sprintf("allowed by %s egress[%d]", p.Name, i)}
			}
		}
	}
	if defaultDeny {
		return Verdict{false, "no egress rule allows it and the source is in default-deny"}
	}
	if len(selecting) == 0 {
		return Verdict{true, "no policy selects the source"}
	}
	return Verdict{true, "no rule denies it and the source is not in default-deny"}
}
