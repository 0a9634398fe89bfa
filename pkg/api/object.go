package api

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"

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
	// has no more use for it (package fleet keeps the node only of the
	// objects that are written as they were read, and of definitions).
	Node       *yaml.Node
	Origin     Origin
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
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

// NewObject reads the identity of a document. Identity fields of the wrong
// type are left empty here and reported when the object is decoded.
func NewObject(n *yaml.Node, origin Origin) Object {
	n = yamlnode.Resolve(n)
	o := Object{Node: n, Origin: origin}
	o.APIVersion = scalar(yamlnode.Get(n, "apiVersion"))
	o.Kind = scalar(yamlnode.Get(n, "kind"))
	md := yamlnode.Get(n, "metadata")
	o.Name = scalar(yamlnode.Get(md, "name"))
	o.Namespace = scalar(yamlnode.Get(md, "namespace"))
	return o
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != yamlnode.TagString {
		return ""
	}
	return n.Value
}

func (o Object) decoder() *decoder {
	return &decoder{ref: o.Ref(), origin: o.Origin}
}

// metadata checks the metadata every input needs and returns it: a name
// (each kind checks its syntax), a namespace where namespaced, and labels
// and annotations as the API server would admit them.
func (d *decoder) metadata(o Object, namespaced bool) *yaml.Node {
	md := d.mapping(yamlnode.Get(o.Node, "metadata"), "metadata")
	if md == nil {
		if yamlnode.IsNull(yamlnode.Get(o.Node, "metadata")) {
			d.fail("metadata", "is required")
		}
		return nil
	}
	d.requiredStr(yamlnode.Get(md, "name"), "metadata.name")
	if namespaced {
		d.requiredStr(yamlnode.Get(md, "namespace"), "metadata.namespace")
	}
	d.commonMetadata(md)
	return md
}

// commonMetadata checks what the API server checks in the metadata of every
// object: the namespace is a DNS label, labels and annotations are maps of
// strings with valid keys (and label values), and the annotations are not
// larger than 256 KiB.
func (d *decoder) commonMetadata(md *yaml.Node) {
	if ns := d.str(yamlnode.Get(md, "namespace"), "metadata.namespace"); ns != "" && !ValidDNSLabel(ns) {
		d.fail("metadata.namespace", "%q is not a valid namespace name (a DNS label: at most 63 lowercase letters, digits and dashes)", ns)
	}
	d.labels = d.stringMap(yamlnode.Get(md, "labels"), "metadata.labels")
	for k, v := range d.labels {
		d.labelKey(joinField("metadata.labels", k), k)
		d.labelValue(joinField("metadata.labels", k), v)
	}
	d.annotations = d.stringMap(yamlnode.Get(md, "annotations"), "metadata.annotations")
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
	for _, f := range []string{"apiVersion", "kind"} {
		if n := yamlnode.Get(o.Node, f); yamlnode.IsNull(n) {
			d.fail(f, "is required: every input must be a Kubernetes object")
		} else if d.str(n, f) == "" {
			d.fail(f, "must not be empty")
		}
	}
	if md := d.mapping(yamlnode.Get(o.Node, "metadata"), "metadata"); md != nil {
		d.objectName(d.str(yamlnode.Get(md, "name"), "metadata.name"))
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

// NewObjectLabels returns the string labels of an object, ignoring values of
// other types; used to recognise earlier output before full decoding.
func NewObjectLabels(o Object) map[string]string {
	labels := yamlnode.Lookup(o.Node, "metadata", "labels")
	if labels == nil || labels.Kind != yaml.MappingNode {
		return nil
	}
	out := make(map[string]string, len(labels.Content)/2)
	for i := 0; i+1 < len(labels.Content); i += 2 {
		out[labels.Content[i].Value] = scalar(yamlnode.Resolve(labels.Content[i+1]))
	}
	return out
}

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
