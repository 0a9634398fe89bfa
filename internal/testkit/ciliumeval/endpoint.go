package ciliumeval

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Cilium's label sources and the keys it derives from Kubernetes objects.
const (
	SourceK8s      = "k8s"
	SourceReserved = "reserved"
	SourceAny      = "any"

	// NamespaceKey is the label of a pod's namespace.
	NamespaceKey = "io.kubernetes.pod.namespace"
	// NamespaceLabelsPrefix prefixes the labels of a pod's namespace.
	NamespaceLabelsPrefix = "io.cilium.k8s.namespace.labels."
	// ClusterKey is the label of the cluster a pod runs in.
	ClusterKey = "io.cilium.k8s.policy.cluster"
)

// Endpoint is the source or destination of a connection.
type Endpoint struct {
	// Entity is a reserved identity: kube-apiserver, world, host,
	// remote-node, health, init, ingress or unmanaged. Empty for a pod.
	Entity string
	// Namespace, Labels and NamespaceLabels describe a pod.
	Namespace       string
	Labels          map[string]string
	NamespaceLabels map[string]string
}

// Pod returns a pod endpoint with the given labels in namespace ns, whose
// namespace carries nsLabels (and, as in any cluster since Kubernetes 1.21,
// kubernetes.io/metadata.name).
func Pod(ns string, labels, nsLabels map[string]string) Endpoint {
	all := map[string]string{"kubernetes.io/metadata.name": ns}
	maps.Copy(all, nsLabels)
	return Endpoint{Namespace: ns, Labels: labels, NamespaceLabels: all}
}

// Entity returns a reserved endpoint such as kube-apiserver or world.
func Entity(name string) Endpoint { return Endpoint{Entity: name} }

// String describes the endpoint for test messages.
func (e Endpoint) String() string {
	if e.Entity != "" {
		return "entity " + e.Entity
	}
	keys := slices.Sorted(maps.Keys(e.Labels))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + e.Labels[k]
	}
	return fmt.Sprintf("pod in %s {%s}", e.Namespace, strings.Join(parts, ", "))
}

// label is one identity label.
type label struct{ source, key, value string }

// identity returns the labels Cilium derives for the endpoint.
func (e Endpoint) identity() []label {
	if e.Entity != "" {
		return []label{{SourceReserved, e.Entity, ""}}
	}
	out := []label{
		{SourceK8s, NamespaceKey, e.Namespace},
		{SourceK8s, ClusterKey, "default"},
	}
	for k, v := range e.Labels {
		out = append(out, label{SourceK8s, k, v})
	}
	for k, v := range e.NamespaceLabels {
		out = append(out, label{SourceK8s, NamespaceLabelsPrefix + k, v})
	}
	return out
}

// entities maps each entity a rule may name to the reserved identities it
// covers; "cluster" also covers every pod, "all" everything.
var entities = map[string][]string{
	"all":            nil,
	"cluster":        {"host", "remote-node", "init", "ingress", "health", "unmanaged"},
	"world":          {"world", "world-ipv4", "world-ipv6"},
	"host":           {"host"},
	"remote-node":    {"remote-node"},
	"kube-apiserver": {"kube-apiserver"},
	"init":           {"init"},
	"ingress":        {"ingress"},
	"health":         {"health"},
	"unmanaged":      {"unmanaged"},
	"none":           {},
}

// entityMatches reports whether the endpoint is one of the entity's.
func entityMatches(entity string, e Endpoint) bool {
	switch entity {
	case "all":
		return true
	case "cluster":
		if e.Entity == "" {
			return true
		}
	}
	return slices.Contains(entities[entity], e.Entity)
}
