package posture

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// The egress policy is read for what it enforces, not for how it is
// written: an app is reachable when no deny rule of the policy matches its
// pods, and ancestor ingress is denied when, for every ancestor, some deny
// rule matches that ancestor's ingress pods. A rule with toPorts denies only
// some ports, so it never counts as a full deny.

type egressPolicy struct {
	Spec struct {
		EgressDeny []egressRule `yaml:"egressDeny"`
	} `yaml:"spec"`
}

type egressRule struct {
	ToEndpoints []labelSelector `yaml:"toEndpoints"`
	ToPorts     []any           `yaml:"toPorts"`
}

type labelSelector struct {
	MatchLabels      map[string]string `yaml:"matchLabels"`
	MatchExpressions []struct {
		Key      string   `yaml:"key"`
		Operator string   `yaml:"operator"`
		Values   []string `yaml:"values"`
	} `yaml:"matchExpressions"`
}

func (r *Record) readEgress(doc *yaml.Node) error {
	r.Kind = KindEgress
	var p egressPolicy
	if err := yamlnode.Resolve(doc).Decode(&p); err != nil {
		return fmt.Errorf("spec.egressDeny: %w", err)
	}
	ns := r.Key.Namespace
	// The candidates are the apps the policy names in its cut-outs: an app
	// it never names is matched by the deny of the whole namespace, or by
	// nothing at all, which no cut-out can tell apart from any other app.
	seen := map[string]bool{}
	for _, rule := range p.Spec.EgressDeny {
		for _, sel := range rule.ToEndpoints {
			var kind string
			for k, v := range sel.MatchLabels {
				if bareKey(k) == wire.ApplicationKindLabel {
					kind = v
				}
			}
			if kind == "" {
				continue
			}
			for _, req := range sel.MatchExpressions {
				if bareKey(req.Key) != wire.ApplicationNameLabel || req.Operator != "NotIn" {
					continue
				}
				for _, name := range req.Values {
					app := kind + "/" + name
					if seen[app] {
						continue
					}
					seen[app] = true
					pod := podLabels(ns, map[string]string{wire.ApplicationKindLabel: kind, wire.ApplicationNameLabel: name})
					if !p.denies(pod) {
						r.Reachable = append(r.Reachable, app)
					}
				}
			}
		}
	}
	slices.Sort(r.Reachable)
	ancestors := Ancestors(ns)
	if len(ancestors) == 0 {
		return nil
	}
	r.AncestorIngress = "denied"
	for _, a := range ancestors {
		if !p.denies(podLabels(a, map[string]string{wire.IngressServiceLabel: wire.IngressServiceValue})) {
			r.AncestorIngress = "allowed"
			break
		}
	}
	return nil
}

// denies reports whether a deny rule without ports matches the pod.
func (p *egressPolicy) denies(pod map[string]string) bool {
	for _, rule := range p.Spec.EgressDeny {
		if len(rule.ToPorts) > 0 {
			continue
		}
		for _, sel := range rule.ToEndpoints {
			if sel.matches(pod) {
				return true
			}
		}
	}
	return false
}

// podLabels are the labels Cilium sees on a pod of a tenant namespace
// (source prefixes taken off): its own, its namespace, and the
// tenant.cozystack.io/<namespace> label Cozystack stamps on a tenant's
// namespace for itself and each ancestor.
func podLabels(ns string, own map[string]string) map[string]string {
	out := map[string]string{bareKey(render.PodNamespaceKey): ns}
	for k, v := range own {
		out[k] = v
	}
	for _, a := range append(Ancestors(ns), ns) {
		out[bareKey(render.NamespaceLabelPrefix)+render.TenantNamespaceLabel+a] = ""
	}
	return out
}

// matches follows Cilium: matchLabels and matchExpressions are ANDed, NotIn
// and DoesNotExist match an absent label, a key of a source other than k8s
// (or any) is never on a pod.
func (s labelSelector) matches(pod map[string]string) bool {
	for k, v := range s.MatchLabels {
		got, ok := lookupLabel(pod, k)
		if !ok || got != v {
			return false
		}
	}
	for _, req := range s.MatchExpressions {
		got, ok := lookupLabel(pod, req.Key)
		var match bool
		switch req.Operator {
		case "In":
			match = ok && slices.Contains(req.Values, got)
		case "NotIn":
			match = !ok || !slices.Contains(req.Values, got)
		case "Exists":
			match = ok
		case "DoesNotExist":
			match = !ok
		}
		if !match {
			return false
		}
	}
	return true
}

func lookupLabel(pod map[string]string, key string) (string, bool) {
	if src, _, found := strings.Cut(key, ":"); found && src != "k8s" && src != "any" {
		return "", false
	}
	v, ok := pod[bareKey(key)]
	return v, ok
}

// bareKey takes Cilium's source prefix (k8s: or any:) off a label key.
func bareKey(key string) string {
	for _, src := range []string{"k8s:", "any:"} {
		if rest, ok := strings.CutPrefix(key, src); ok {
			return rest
		}
	}
	return key
}

// Ancestors returns the namespaces of the ancestor tenants of a tenant
// namespace, root first: Cozystack names a child of tenant-root
// tenant-<name> and any deeper one <parent namespace>-<name>, and tenant
// names have no hyphen, so the namespace alone says the lineage. The root
// tenant has none.
func Ancestors(ns string) []string {
	if ns == model.RootNamespace || !IsTenantNamespace(ns) {
		return nil
	}
	out := []string{model.RootNamespace}
	rest := strings.TrimPrefix(ns, "tenant-")
	for i, c := range rest {
		if c == '-' {
			out = append(out, "tenant-"+rest[:i])
		}
	}
	return out
}

// IsTenantNamespace reports whether ns is named like a tenant's namespace.
func IsTenantNamespace(ns string) bool {
	rest, ok := strings.CutPrefix(ns, "tenant-")
	return ok && rest != ""
}

// TenantName is the name of the tenant that owns namespace ns.
func TenantName(ns string) string {
	rest := strings.TrimPrefix(ns, "tenant-")
	return rest[strings.LastIndexByte(rest, '-')+1:]
}
