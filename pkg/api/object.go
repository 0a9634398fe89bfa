package api

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// API groups and kinds of the inputs.
const (
	DefinitionAPIVersion = "cozystack.io/v1alpha1"
	DefinitionKind       = "ApplicationDefinition"
	AppsGroup            = "apps.cozystack.io"
	AppsAPIVersion       = AppsGroup + "/v1alpha1"
	TenantKind           = "Tenant"
	KnobsKind            = "ComputePlane"
	// KnobsName is the only name a ComputePlane knob object may have.
	KnobsName = "computeplane"
)

// Object is one input document, already split from its file and unwrapped
// from a List, with its identity read.
type Object struct {
	// Node is the mapping node of the object; nil once the object's reader
	// has no more use for it (package model keeps the node only of the
	// objects that are written as they were read, and of definitions).
	Node       *yaml.Node
	Origin     Origin
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
	// Generated is true when the object carries the label that marks
	// the output of this function (wire.ManagedByLabel): output of an
	// earlier run, which is generated anew rather than read.
	Generated bool
	// Nodes is how many YAML nodes the object expands to, aliases followed,
	// as counted when it was read (package input); 0 when unknown.
	Nodes int
}

// Ref returns the object's reference for messages.
func (o Object) Ref() ObjectRef {
	return ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// Group returns the API group of the object's apiVersion.
func (o Object) Group() string {
	g, _, ok := strings.Cut(o.APIVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// NewObject reads the identity of an object, n its mapping node. Identity
// fields of the wrong type are left empty here and reported when the
// object is decoded. It reads only the object's top level and its
// metadata's, so that it is safe on a node that yamlnode.Check has not seen
// yet.
func NewObject(n *yaml.Node, origin Origin) Object {
	n = resolve(n)
	o := Object{Node: n, Origin: origin}
	o.APIVersion, _ = stringOf(child(n, "apiVersion"))
	o.Kind, _ = stringOf(child(n, "kind"))
	md := child(n, "metadata")
	o.Name, _ = stringOf(child(md, "name"))
	o.Namespace, _ = stringOf(child(md, "namespace"))
	managedBy, _ := stringOf(child(child(md, "labels"), wire.ManagedByLabel))
	o.Generated = managedBy == wire.ManagedByValue
	return o
}

// child returns the value of key in the mapping n, aliases followed, or nil
// when n is no mapping or has no such key (the last one when it has two).
// NewObject reads with it what it reads of an object that yamlnode.Check
// may not have seen yet; readObject reads the rest.
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var found *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := resolve(n.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
			found = n.Content[i+1]
		}
	}
	return resolve(found)
}

func (o Object) decoder() *decoder {
	return &decoder{ref: o.Ref(), origin: o.Origin}
}

// The decoders check an input object as Go values, read from its YAML in
// one walk by readObject, and never go back to the YAML node field by
// field. A mapping becomes [fields], a list []any, a null nil, and a scalar
// stays its *yaml.Node: its tag and its text as written are what the
// messages quote ("must be a string, not the number 0x10"), and what a
// plain Go value would lose (an unquoted date or a !!binary would read as a
// string, and be accepted where a string is wanted).
//
// The object has passed yamlnode.Check (package input reads every object
// through it), which bounds its aliases and refuses keys that are no
// strings and keys set twice; readObject relies on that.

// fields is a YAML mapping read into Go values, its keys in the order they
// are written.
type fields []field

type field struct {
	key   string
	value any
}

// get returns the value of key in v, nil when v is not a mapping or has no
// such key (or holds null there).
func get(v any, key string) any {
	v, _ = lookup(v, key)
	return v
}

// lookup is get that also reports whether v holds the key, even as null.
// With a key set twice (yamlnode.Check refuses it), the last one wins, as
// in YAML loaders that accept it.
func lookup(v any, key string) (any, bool) {
	fs, _ := v.(fields)
	for i := len(fs) - 1; i >= 0; i-- {
		if fs[i].key == key {
			return fs[i].value, true
		}
	}
	return nil, false
}

// readObject reads the mapping n of an object into Go values, all but the
// field keep (if not ""), whose value stays its node with aliases followed,
// nil for null: a spec that is passed on as written (an app's Helm values)
// or converted as a whole (a knob object's, the config's) is not read twice.
func readObject(n *yaml.Node, keep string) fields {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	fs := make(fields, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i]).Value
		if k == keep && keep != "" {
			fs = append(fs, field{k, keptNode(n.Content[i+1])})
			continue
		}
		fs = append(fs, field{k, readValue(n.Content[i+1])})
	}
	return fs
}

// keptNode is the node of a kept field, nil for null.
func keptNode(n *yaml.Node) any {
	if n = resolve(n); n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == yamlnode.TagNull {
		return nil
	}
	return n
}

// readValue reads the node n into Go values (see fields).
func readValue(n *yaml.Node) any {
	n = resolve(n)
	switch {
	case n == nil:
		return nil
	case n.Kind == yaml.MappingNode:
		return readObject(n, "")
	case n.Kind == yaml.SequenceNode:
		items := make([]any, len(n.Content))
		for i, item := range n.Content {
			items[i] = readValue(item)
		}
		return items
	case n.Kind == yaml.ScalarNode && n.ShortTag() == yamlnode.TagNull:
		return nil
	}
	return n
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// describe names what v holds for messages, as yamlnode.Describe names a
// node.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case fields:
		return "a map"
	case []any:
		return "a list"
	case *yaml.Node:
		return yamlnode.Describe(v)
	}
	return "an unsupported YAML node"
}

// stringOf returns the text of v when it is a string scalar.
func stringOf(v any) (string, bool) {
	n, ok := v.(*yaml.Node)
	if !ok || n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != yamlnode.TagString {
		return "", false
	}
	return n.Value, true
}

// decoder checks the fields of one object, as readObject reads them, and
// collects a Problem for every field that is missing or of the wrong type,
// so that one run reports all mistakes of an object at once.
type decoder struct {
	ref      ObjectRef
	origin   Origin
	problems Problems
	// labels and annotations are metadata.labels and .annotations, read
	// once by commonMetadata.
	labels, annotations map[string]string
}

func (d *decoder) fail(field, format string, args ...any) {
	d.problems = append(d.problems, Errorf(d.ref, d.origin, field, format, args...))
}

// mistyped reports that field must be want, and not what v holds.
func (d *decoder) mistyped(field, want string, v any) {
	d.fail(field, "must be %s, not %s", want, describe(v))
}

// scalar returns the scalar v, of the given tag, of an optional field: nil
// when the field is absent or null, and, after reporting that it must be
// want, when v is something else.
func (d *decoder) scalar(v any, field, tag, want string) *yaml.Node {
	if v == nil {
		return nil
	}
	n, ok := v.(*yaml.Node)
	if !ok || n.Kind != yaml.ScalarNode || n.ShortTag() != tag {
		d.mistyped(field, want, v)
		return nil
	}
	return n
}

// str reads an optional string field.
func (d *decoder) str(v any, field string) string {
	if n := d.scalar(v, field, yamlnode.TagString, "a string"); n != nil {
		return n.Value
	}
	return ""
}

// requiredStr reads a string field that must be present and not empty.
func (d *decoder) requiredStr(v any, field string) string {
	if v == nil {
		d.fail(field, "is required")
		return ""
	}
	s := d.str(v, field)
	if _, ok := stringOf(v); ok && s == "" {
		d.fail(field, "must not be empty")
	}
	return s
}

// boolean reads an optional boolean field.
func (d *decoder) boolean(v any, field string, def bool) bool {
	n := d.scalar(v, field, yamlnode.TagBool, "true or false")
	if n == nil {
		return def
	}
	return n.Value == "true" || n.Value == "True" || n.Value == "TRUE"
}

// mapping reads an optional mapping field; it returns nil when absent or
// of the wrong type (after reporting it).
func (d *decoder) mapping(v any, field string) fields {
	m, ok := v.(fields)
	if !ok && v != nil {
		d.mistyped(field, "a map", v)
	}
	return m
}

// mappingNode is mapping for a field that readObject kept as its node.
func (d *decoder) mappingNode(v any, field string) *yaml.Node {
	if v == nil {
		return nil
	}
	n, _ := v.(*yaml.Node)
	if n == nil || n.Kind != yaml.MappingNode {
		d.mistyped(field, "a map", v)
		return nil
	}
	return n
}

// sequence reads an optional list field; it returns nil when absent or of
// the wrong type (after reporting it).
func (d *decoder) sequence(v any, field string) []any {
	items, ok := v.([]any)
	if !ok && v != nil {
		d.mistyped(field, "a list", v)
	}
	return items
}

// stringMap reads a map of string to string, such as labels.
func (d *decoder) stringMap(v any, field string) map[string]string {
	m := d.mapping(v, field)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for _, f := range m {
		out[f.key] = d.str(f.value, joinField(field, f.key))
	}
	return out
}

// keys checks that mapping m has no keys outside allowed: the top-level
// fields of an object whose shape no schema of this project states (the
// config's root takes its names from the schema).
func (d *decoder) keys(m fields, field string, allowed ...string) {
	for _, f := range m {
		if !slices.Contains(allowed, f.key) {
			d.fail(joinField(field, f.key), "unknown field; known fields here: %s", strings.Join(allowed, ", "))
		}
	}
}

// value converts a node into JSON-like Go values, reporting where it fails.
func (d *decoder) value(n *yaml.Node, field string) (any, bool) {
	v, err := yamlnode.ToValue(n, yamlnode.DefaultBudget)
	if err != nil {
		if pe, ok := err.(*yamlnode.PathError); ok {
			d.fail(joinField(field, pe.Path), "%v", pe.Err)
		} else {
			d.fail(field, "%v", err)
		}
		return nil, false
	}
	return v, true
}

// joinField appends a map key to a field path. Keys that contain dots or
// brackets (label keys such as app.kubernetes.io/name) are written in
// brackets, as in metadata.labels[app.kubernetes.io/name].
func joinField(field, key string) string {
	if key == "" {
		return field
	}
	if strings.ContainsAny(key, ".[] ") {
		return fmt.Sprintf("%s[%s]", field, key)
	}
	if field == "" {
		return key
	}
	return field + "." + key
}

func itoa(i int) string { return fmt.Sprint(i) }

// metadata checks the metadata every input needs, in obj, the object read
// by readObject, and returns it: a name (each kind checks its syntax), a
// namespace where namespaced, and labels and annotations as the API server
// would admit them.
func (d *decoder) metadata(obj fields, namespaced bool) fields {
	v := get(obj, "metadata")
	md := d.mapping(v, "metadata")
	if md == nil {
		if v == nil {
			d.fail("metadata", "is required")
		}
		return nil
	}
	d.requiredStr(get(md, "name"), "metadata.name")
	if namespaced {
		d.requiredStr(get(md, "namespace"), "metadata.namespace")
	}
	d.commonMetadata(md)
	return md
}

// commonMetadata checks what the API server checks in the metadata of every
// object: the namespace is a DNS label, labels and annotations are maps of
// strings with valid keys (and label values), and the annotations are not
// larger than 256 KiB.
func (d *decoder) commonMetadata(md fields) {
	if ns := d.str(get(md, "namespace"), "metadata.namespace"); ns != "" && !ValidDNSLabel(ns) {
		d.fail("metadata.namespace", "%q is not a valid namespace name (a DNS label: at most 63 lowercase letters, digits and dashes)", ns)
	}
	d.labels = d.stringMap(get(md, "labels"), "metadata.labels")
	for k, v := range d.labels {
		d.labelKey(joinField("metadata.labels", k), k)
		d.labelValue(joinField("metadata.labels", k), v)
	}
	d.annotations = d.stringMap(get(md, "annotations"), "metadata.annotations")
	size := 0
	for k, v := range d.annotations {
		size += len(k) + len(v)
		if !ValidLabelKey(k) {
			d.fail(joinField("metadata.annotations", k), "%q is not a valid annotation key: %s", clip(k), content.IsLabelKey(k)[0])
		}
	}
	if size > MaxAnnotationBytes {
		d.fail("metadata.annotations", "hold %d bytes; the API server admits at most %d (256 KiB)", size, MaxAnnotationBytes)
	}
}

// labelKey and labelValue check a label the way the API server does,
// reporting the first of its reasons.
func (d *decoder) labelKey(field, k string) {
	if !ValidLabelKey(k) {
		d.fail(field, "%q is not a valid label key: %s", clip(k), content.IsLabelKey(k)[0])
	}
}

func (d *decoder) labelValue(field, v string) {
	if !ValidLabelValue(v) {
		d.fail(field, "%q is not a valid label value: %s", clip(v), content.IsLabelValue(v)[0])
	}
}

// ValidLabelValue is content.IsLabelValue without its regular expression
// and allocations, for the hundreds of thousands of labels of a large fleet
// (BenchmarkLabelChecks measures the difference; TestLabelChecksMatchAPIMachinery
// holds the two to the same answers):
// at most 63 characters, alphanumerics, '-', '_' and '.', starting and
// ending with an alphanumeric.
func ValidLabelValue(v string) bool {
	if len(v) > 63 {
		return false
	}
	return v == "" || validName(v)
}

// ValidLabelKey is content.IsLabelKey (a qualified name) the same way: a
// name as ValidLabelValue but not empty, after an optional DNS subdomain
// prefix and '/'.
func ValidLabelKey(k string) bool {
	prefix, name, found := strings.Cut(k, "/")
	if !found {
		prefix, name = "", k
	} else if !validDNSSubdomain(prefix) {
		return false
	}
	return name != "" && len(name) <= 63 && validName(name)
}

func validName(s string) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// MaxAnnotationBytes is the API server's limit on all annotations of one
// object together.
const MaxAnnotationBytes = 256 << 10

// objectName checks a name the way the API server checks the name of every
// object (it becomes a segment of a URL path), and refuses control
// characters, which no Kubernetes name holds and which garble messages.
func (d *decoder) objectName(name string) {
	if name == "" {
		return
	}
	if msgs := content.IsPathSegmentName(name); len(msgs) > 0 {
		d.fail("metadata.name", "%q is not a valid object name: %s", clip(name), msgs[0])
		return
	}
	if strings.ContainsFunc(name, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) || r == utf8.RuneError }) {
		d.fail("metadata.name", "%q is not a valid object name: it holds spaces or control characters", clip(name))
	}
}

// CheckObject checks an object that passes through (no input of this
// function) for what every Kubernetes object needs: a string apiVersion and
// kind, and metadata as the API server would admit it. kpt and kustomize
// would refuse it further down the line; refusing it here names the file.
func CheckObject(o Object) Problems {
	d := o.decoder()
	// Only the fields checked are read: what passes through may be large
	// (the data of a ConfigMap), and is written as it was read.
	for _, f := range []string{"apiVersion", "kind"} {
		if v := readValue(child(o.Node, f)); v == nil {
			d.fail(f, "is required: every input must be a Kubernetes object")
		} else if d.str(v, f) == "" {
			d.fail(f, "must not be empty")
		}
	}
	if md := d.mapping(readValue(child(o.Node, "metadata")), "metadata"); md != nil {
		d.objectName(d.str(get(md, "name"), "metadata.name"))
		d.commonMetadata(md)
	}
	return d.problems
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// ObjectFields are the top-level fields of every object the function
// interprets (an ApplicationDefinition, a Tenant, an app): a key outside
// them (specs:, say) is refused as an unknown field.
var ObjectFields = []string{"apiVersion", "kind", "metadata", "spec", "status"}

// ValidDNSLabel reports whether s is a DNS-1123 label (a namespace name).
func ValidDNSLabel(s string) bool { return len(validation.IsDNS1123Label(s)) == 0 }

// validDNSSubdomain reports whether s is a DNS-1123 subdomain (the name of
// most objects).
func validDNSSubdomain(s string) bool { return len(validation.IsDNS1123Subdomain(s)) == 0 }

// IsToolAnnotation reports whether an annotation key is bookkeeping of kpt,
// kustomize or the KRM function framework (where an item was read from),
// which describes the input file rather than the app and is never copied.
func IsToolAnnotation(key string) bool {
	switch key {
	case "config.kubernetes.io/path", "config.kubernetes.io/index", "config.k8s.io/id",
		"config.kubernetes.io/local-config", "config.kubernetes.io/function":
		return true
	}
	return strings.HasPrefix(key, "internal.config.kubernetes.io/") || strings.HasPrefix(key, "kustomize.config.k8s.io/")
}

var (
	// tenantNameRE is Cozystack's rule for a tenant's name.
	tenantNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	// releasePrefixRE is what a definition's release prefix may hold.
	releasePrefixRE = regexp.MustCompile(`^[a-z0-9-]*$`)
	// kindRE is the shape of a Kubernetes kind: CamelCase letters and digits.
	kindRE     = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	durationRE = regexp.MustCompile(`^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$`)
)
