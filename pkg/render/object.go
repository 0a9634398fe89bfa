package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// PlatformNamespace is where the fleet-wide objects live.
const PlatformNamespace = "cozy-system"

// Object is one output object: its identity, what a writer or a report
// needs to know of it, and its Body.
type Object struct {
	// Body is the object's content: a node tree, text encoded already, or a
	// release still to render (see Body).
	Body       Body
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// Platform objects are fleet-wide and come first in the output.
	Platform bool
	// Generated is false for inputs kept with keepInputs and for objects
	// that pass through.
	Generated bool
	// From is the input the object was made from, for messages.
	From   api.ObjectRef
	Origin api.Origin
	// Tenant is the namespace of the tenant the object belongs to; empty for
	// platform objects and objects that pass through.
	Tenant string
	// Cluster marks a tenant's ComputePlane cluster and its hardening: the
	// cluster HelmRelease, the Pod Security ConfigMap and the egress
	// policy. They are applied together or not at all, so a fleet laid out
	// in Flux units keeps them in their namespace's base unit whatever the
	// split (package units): a cluster never runs before its fence.
	Cluster bool
	// InCluster are the objects a Kustomization with a kubeConfig applies
	// inside a ComputePlane (the in-cluster baseline, RenderBaseline): they
	// are never objects of the management cluster, so only the fleet-folder
	// writer writes them, into the folder the Kustomization reads, which no
	// unit lists; the stream and the KRM items leave them out.
	InCluster []Object
	// Routed marks the release of an app placed on a ComputePlane. A fleet
	// laid out in units applies routed releases from a unit of their own
	// that waits for the tenant's baseline Kustomization (package units):
	// a HelmRelease can depend on HelmReleases only, so that is how a
	// routed app never installs before its account and namespace exist.
	Routed bool
	// Account marks the fleet's own account (RenderFleetAccount) and the
	// management-plane guard (RenderGuard). A fleet laid out in units
	// applies them from a unit of its own that the platform unit waits
	// for: kustomize-controller dry-runs all of a unit's RBAC in one
	// stage, so a new tenant's installer binding next to the fleet role's
	// new bind grant would be refused; and that unit's name and folder no
	// layout changes (splitting the platform unit, the wiring groups,
	// unitSource), so the guard is never pruned by a layout change
	// (package units).
	Account bool
	// Kept marks a generated object that carries
	// kustomize.toolkit.fluxcd.io/prune: disabled (wire.PruneAnnotation):
	// no Kustomization ever deletes it, so it may move between the parts of
	// a unit in any order (package units lays out the platform unit's
	// per-tenant objects so). An input that carries the annotation is not
	// marked, and is laid out like any object that may be pruned.
	Kept bool
}

// AppendYAML appends the object as one YAML document (without a "---"
// line) to buf, byte for byte what the library's encoder writes for its
// Node. Writers call it for each object just before writing it, so that a
// large fleet never holds the nodes, nor the text, of all its releases at
// once.
func (o Object) AppendYAML(buf []byte) ([]byte, error) {
	out, err := o.Body.AppendYAML(buf)
	if err != nil {
		return buf, fmt.Errorf("failed to encode %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
	}
	return out, nil
}

// Node returns the object as a node tree, for writers and reports that
// work on nodes (the KRM adapter, the posture review). A body held as text
// or as a release still to render builds a new tree on every call; writers
// that only encode use AppendYAML, which spares that.
func (o Object) Node() (*yaml.Node, error) {
	n, err := o.Body.Node()
	if err != nil {
		return nil, fmt.Errorf("failed to build %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
	}
	return n, nil
}

// holdAsText encodes the object's body and keeps the text instead of the
// nodes: a few KB instead of hundreds of nodes, for objects a large run
// holds until they are written. The text is encoded into *scratch, which
// the next call reuses, and kept as a copy of its own size: a buffer grown
// by doubling for each object held about a fifth more than its text (at
// 1,000 tenants about 8 MB of live heap instead of 6.4 MB; at 10,000 ten
// times that, which the collector's soft limit pays for in cycles).
func (o *Object) holdAsText(scratch *[]byte) error {
	text, err := o.AppendYAML((*scratch)[:0])
	if err != nil {
		return err
	}
	*scratch = text
	o.Body = textBody(bytes.Clone(text))
	for i := range o.InCluster {
		if err := o.InCluster[i].holdAsText(scratch); err != nil {
			return err
		}
	}
	return nil
}

// objectMeta is the metadata node of a generated object as toNode writes an
// ObjectMeta with these fields: keys sorted (annotations, labels, name,
// namespace), empty ones left out.
func objectMeta(name, namespace string, labels, annotations map[string]string) *yaml.Node {
	md := &yaml.Node{Kind: yaml.MappingNode, Tag: yamlnode.TagMap, Content: make([]*yaml.Node, 0, 8)}
	if len(annotations) > 0 {
		md.Content = append(md.Content, yamlnode.String("annotations"), yamlnode.StringMap(annotations))
	}
	if len(labels) > 0 {
		md.Content = append(md.Content, yamlnode.String("labels"), yamlnode.StringMap(labels))
	}
	if name != "" {
		md.Content = append(md.Content, yamlnode.String("name"), yamlnode.String(name))
	}
	if namespace != "" {
		md.Content = append(md.Content, yamlnode.String("namespace"), yamlnode.String(namespace))
	}
	return md
}

// Path is the file an object is written to in a fleet folder and in kpt:
// <namespace>/<kind-lowercase>-<name>.yaml. Objects without a namespace go
// under "_cluster". Characters that could leave the folder are replaced, and
// a leading dot too (a segment like ".git" or ".." would reach places no
// writer should touch); a valid Kubernetes name never holds them.
func (o Object) Path() string {
	ns := o.Namespace
	if ns == "" {
		ns = "_cluster"
	}
	return safeSegment(ns) + "/" + safeSegment(strings.ToLower(o.Kind)+"-"+o.Name) + ".yaml"
}

func safeSegment(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
	if s == "" || strings.HasPrefix(s, ".") {
		return "_" + s
	}
	return s
}

// objectMeta is what every generated object gets in metadata.
func managedLabels(labels map[string]string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[wire.ManagedByLabel] = wire.ManagedByValue
	return labels
}

// TypedNode converts a typed API object to a YAML mapping with sorted keys,
// without the empty status and creationTimestamp that typed objects always
// marshal: how every object built from upstream Go types enters the output.
func TypedNode(obj any) (*yaml.Node, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal %T: %w", obj, err)
	}
	n, err := yamlnode.FromJSON(data)
	if err != nil {
		return nil, err
	}
	yamlnode.DeleteKey(n, "status")
	if md := yamlnode.Get(n, "metadata"); md != nil {
		yamlnode.DeleteKey(md, "creationTimestamp")
	}
	return n, nil
}

// FromInput wraps an input object that is kept or passes through.
//
// An object with comments is written in yamlnode.Canonical form, so that
// running the function on its own output changes nothing.
func FromInput(o api.Object) Object {
	n := o.Node
	if yamlnode.HasComments(n) {
		n = yamlnode.Canonical(n)
	}
	return Object{Body: NodeBody(n), APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, From: o.Ref(), Origin: o.Origin}
}
