package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// PlatformNamespace is where the fleet-wide objects live.
const PlatformNamespace = "cozy-system"

// Object is one output object.
type Object struct {
	// Node is the object; nil for the objects RunLazy puts off or holds as
	// text (Build gives them one).
	Node       *yaml.Node
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
	// Values, when set, is the encoded value that replaces the node of
	// yamlnode.Placeholder in Node (spec.values of an app release) when the
	// object is written.
	Values *yamlnode.Encoded
	// Text, when set, is the whole object already encoded as one YAML
	// document, and Node is nil (RunLazy holds tenant objects so); Build
	// decodes it for writers that need a node.
	Text []byte

	pending *pendingRelease
}

// pendingRelease is what AppendYAML and Build need to render a release put
// off by RunLazy.
type pendingRelease struct {
	releases *releases
	app      *fleet.App
}

// Build returns the object with its whole Node, for writers and tests
// that work on nodes: a release that RunLazy put off is rendered, text held
// ready is decoded, and encoded values are decoded into the release. Writers
// that only encode use AppendYAML, which spares all of that.
func (o Object) Build() (Object, error) {
	switch {
	case o.pending != nil:
		rendered, err := o.pending.releases.render(o.pending.app)
		if err != nil {
			return o, err
		}
		o = rendered
	case o.Node == nil && o.Text != nil:
		var doc yaml.Node
		if err := yaml.Unmarshal(o.Text, &doc); err != nil {
			return o, fmt.Errorf("failed to decode %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
		// The node of the text, as it was rendered (no styles of the text).
		n, err := yamlnode.Copy(&doc, yamlnode.DefaultBudget)
		if err != nil {
			return o, err
		}
		o.Node, o.Text = n, nil
		return o, nil
	}
	if o.Values != nil {
		values, err := decodeValues(o.Values)
		if err != nil {
			return o, err
		}
		n := yamlnode.Clone(o.Node)
		yamlnode.SetKey(yamlnode.Get(n, "spec"), "values", values)
		o.Node, o.Values = n, nil
	}
	return o, nil
}

// encode turns the object into text (Text set, Node dropped).
func (o *Object) encode() error {
	if o.Node == nil || o.Values != nil {
		return nil
	}
	text, err := yamlnode.AppendDocument(nil, o.Node)
	if err != nil {
		return fmt.Errorf("failed to encode %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
	}
	o.Text, o.Node = text, nil
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
	labels[fleet.ManagedByLabel] = fleet.ManagedByValue
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

// id is the identity of an output object for collision checks.
type id struct {
	group, kind, namespace, name string
}

func idOf(o Object) id {
	g, _, _ := strings.Cut(o.APIVersion, "/")
	if !strings.Contains(o.APIVersion, "/") {
		g = ""
	}
	return id{g, o.Kind, o.Namespace, o.Name}
}

// Compare orders objects: platform objects first, then by namespace, kind,
// name and apiVersion.
func Compare(a, b Object) int { return compare(&a, &b) }

func compare(a, b *Object) int {
	if a.Platform != b.Platform {
		if a.Platform {
			return -1
		}
		return 1
	}
	return cmp.Or(
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.APIVersion, b.APIVersion),
		// Ties only between objects that collide: order them by what they
		// were made from, so that the message is the same for any input order.
		cmp.Compare(a.From.Kind, b.From.Kind),
		cmp.Compare(a.From.Namespace, b.From.Namespace),
		cmp.Compare(a.From.Name, b.From.Name),
		cmp.Compare(a.Origin.File, b.Origin.File),
		cmp.Compare(a.Origin.Index, b.Origin.Index),
	)
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
	return Object{Node: n, APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, From: o.Ref(), Origin: o.Origin}
}

// Assemble adds the kept inputs and the objects that pass through to the
// generated ones, refuses two objects with one identity where one of them is
// generated, and sorts the result.
func Assemble(generated []Object, others []Object) ([]Object, api.Problems) {
	all := generated
	if len(others) > 0 {
		all = make([]Object, 0, len(generated)+len(others))
		all = append(all, generated...)
		all = append(all, others...)
	}
	out := sortStable(all)
	var problems api.Problems
	for i := 1; i < len(out); i++ {
		a, b := out[i-1], out[i]
		if idOf(a) != idOf(b) || (!a.Generated && !b.Generated) {
			continue
		}
		if !a.Generated {
			a, b = b, a
		}
		what := fmt.Sprintf("%s %s/%s", b.Kind, b.Namespace, b.Name)
		if b.Generated {
			problems = append(problems, api.Errorf(b.From, b.Origin, "metadata.name",
				"would produce %s, which %s (%s) produces too; two inputs must not produce the same object", what, a.From, a.Origin.Describe()))
		} else {
			problems = append(problems, api.Errorf(b.From, b.Origin, "metadata.name",
				"%s is generated from %s (%s) and must not also be among the inputs", what, a.From, a.Origin.Describe()))
		}
	}
	if len(problems) > 0 {
		return nil, problems.Compact()
	}
	return out, nil
}

// sortStable sorts objects as slices.SortStableFunc(objs, Compare) does,
// faster for as many and as large values as a fleet's objects: it sorts
// their indices, ties broken by index, and moves each object once.
func sortStable(objs []Object) []Object {
	idx := make([]int, len(objs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(compare(&objs[a], &objs[b]), cmp.Compare(a, b))
	})
	out := make([]Object, len(objs))
	for i, j := range idx {
		out[i] = objs[j]
	}
	return out
}
