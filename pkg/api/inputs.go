package api

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
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

// Annotations read from ApplicationDefinitions and app objects.
const (
	InstallTimeoutAnnotation     = "release.cozystack.io/helm-install-timeout"
	UpgradeTimeoutAnnotation     = "release.cozystack.io/helm-upgrade-timeout"
	InstallDisableWaitAnnotation = "release.cozystack.io/helm-install-disable-wait"
	PlacementAnnotation          = "computeplane.dev/placement"
	ReachableAnnotation          = "computeplane.dev/reachable-from-computeplane"
)

// Placement says where the workloads of an application kind run.
type Placement string

// The placements an ApplicationDefinition may ask for.
const (
	PlacementManagementPlane Placement = "ManagementPlane"
	PlacementComputePlane    Placement = "ComputePlane"
)

// ChartRef is spec.release.chartRef of an ApplicationDefinition.
type ChartRef struct {
	Kind      string
	Name      string
	Namespace string
}

// HealthCheck is one entry of spec.release.healthCheckExprs.
type HealthCheck struct {
	APIVersion string
	Kind       string
	Current    string
	InProgress string
	Failed     string
}

// Definition is an ApplicationDefinition: which app kind it declares and how
// cozystack-api turns an app of that kind into a HelmRelease.
type Definition struct {
	Ref    ObjectRef
	Origin Origin

	Kind     string // spec.application.kind
	Plural   string
	Singular string

	Prefix           string            // spec.release.prefix
	Labels           map[string]string // spec.release.labels
	ChartRef         ChartRef
	HealthCheckExprs []HealthCheck
	WaitStrategy     string

	InstallTimeout time.Duration // 10m unless annotated
	UpgradeTimeout time.Duration // 10m unless annotated
	DisableWait    bool

	Placement Placement
}

// DefaultReleaseTimeout is cozystack-api's install and upgrade timeout.
const DefaultReleaseTimeout = 10 * time.Minute

// Tenant is one entry of the tenant list.
type Tenant struct {
	Ref    ObjectRef
	Origin Origin

	Name         string
	Parent       string // metadata.namespace: the parent tenant's namespace
	ComputePlane bool   // spec.computeplane
}

// App is an app object of a kind some ApplicationDefinition declares.
type App struct {
	Ref    ObjectRef
	Origin Origin

	Kind        string
	Name        string
	Namespace   string
	Labels      map[string]string
	Annotations map[string]string
	// Reachable is true when the annotation ReachableAnnotation is "true":
	// the tenant opens this app to the VMs of its own ComputePlane (see the
	// egress policy in package render).
	Reachable bool
}

// Knobs is a ComputePlane object: what a tenant sets for its own cluster.
type Knobs struct {
	Ref    ObjectRef
	Origin Origin

	Namespace string
	Values    map[string]any // spec
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

// DefinitionFields are the fields of an ApplicationDefinition's spec that
// the API server accepts (the CRD of cozystack.io/v1alpha1, checked against
// it by a test), by the path of the mapping that holds them, plus
// spec.placement, the ComputePlane design's field (SPEC 3.1), which
// DecodeDefinition reads before the CRD has it. A key outside them is
// refused as an unknown field, as kubectl apply --validate=strict refuses
// it, before anything is read from the definition: a typo such as
// spec.placment would otherwise put the apps on the management plane
// without a word.
var DefinitionFields = map[string][]string{
	"spec":                  {"application", "dashboard", "ingresses", "placement", "release", "secrets", "services"},
	"spec.application":      {"kind", "openAPISchema", "plural", "singular"},
	"spec.release":          {"chartRef", "healthCheckExprs", "labels", "prefix", "waitStrategy"},
	"spec.release.chartRef": {"apiVersion", "kind", "name", "namespace"},
}

// ObjectFields are the top-level fields of every object the function
// interprets (an ApplicationDefinition, a Tenant, an app): a key outside
// them (specs:, say) is refused as an unknown field.
var ObjectFields = []string{"apiVersion", "kind", "metadata", "spec", "status"}

// TenantSpecFields are the fields of a Tenant's spec: those of Cozystack's
// tenant ApplicationDefinition's openAPISchema (checked against it by a
// test), computeplane among them. A key outside them is refused: a typo
// such as spec.computeplan would otherwise leave the tenant without its
// ComputePlane without a word.
var TenantSpecFields = []string{"computeplane", "etcd", "gateway", "host", "ingress", "monitoring", "resourceQuotas", "schedulingClass", "seaweedfs"}

// DecodeDefinition reads an ApplicationDefinition.
func DecodeDefinition(o Object) (*Definition, Problems) {
	d := o.decoder()
	def := &Definition{Ref: o.Ref(), Origin: o.Origin, InstallTimeout: DefaultReleaseTimeout, UpgradeTimeout: DefaultReleaseTimeout}
	d.keys(o.Node, "", ObjectFields...)
	md := d.metadata(o, false)
	if name := d.str(yamlnode.Get(md, "name"), "metadata.name"); name != "" && !validDNSSubdomain(name) {
		d.fail("metadata.name", "%q is not a valid ApplicationDefinition name (a DNS subdomain: lowercase letters, digits, dashes and dots)", clip(name))
	}
	spec := d.mapping(yamlnode.Get(o.Node, "spec"), "spec")
	if spec == nil {
		if yamlnode.IsNull(yamlnode.Get(o.Node, "spec")) {
			d.fail("spec", "is required")
		}
		return nil, d.problems
	}
	d.keys(spec, "spec", DefinitionFields["spec"]...)
	app := d.mapping(yamlnode.Get(spec, "application"), "spec.application")
	if app == nil {
		d.fail("spec.application", "is required")
	}
	d.keys(app, "spec.application", DefinitionFields["spec.application"]...)
	def.Kind = d.requiredStr(yamlnode.Get(app, "kind"), "spec.application.kind")
	if def.Kind != "" && (!kindRE.MatchString(def.Kind) || len(def.Kind) > 63) {
		d.fail("spec.application.kind", "%q is not a valid kind: CamelCase letters and digits, starting with a capital letter", clip(def.Kind))
		def.Kind = ""
	}
	def.Plural = d.str(yamlnode.Get(app, "plural"), "spec.application.plural")
	def.Singular = d.str(yamlnode.Get(app, "singular"), "spec.application.singular")
	d.str(yamlnode.Get(app, "openAPISchema"), "spec.application.openAPISchema")

	rel := d.mapping(yamlnode.Get(spec, "release"), "spec.release")
	if rel == nil {
		d.fail("spec.release", "is required: without it the definition says nothing about how its apps are released")
	} else {
		d.keys(rel, "spec.release", DefinitionFields["spec.release"]...)
		pn := yamlnode.Get(rel, "prefix")
		if pn == nil {
			d.fail("spec.release.prefix", "is required (use \"\" for no prefix)")
		}
		def.Prefix = d.str(pn, "spec.release.prefix")
		if def.Prefix != "" && !releasePrefixRE.MatchString(def.Prefix) {
			d.fail("spec.release.prefix", "%q may hold only lowercase letters, digits and dashes", def.Prefix)
		}
		def.Labels = d.stringMap(yamlnode.Get(rel, "labels"), "spec.release.labels")
		for k, v := range def.Labels {
			d.labelKey(joinField("spec.release.labels", k), k)
			d.labelValue(joinField("spec.release.labels", k), v)
		}
		cr := d.mapping(yamlnode.Get(rel, "chartRef"), "spec.release.chartRef")
		d.keys(cr, "spec.release.chartRef", DefinitionFields["spec.release.chartRef"]...)
		if cr == nil {
			d.fail("spec.release.chartRef", "is required")
		} else {
			def.ChartRef = ChartRef{
				Kind:      d.requiredStr(yamlnode.Get(cr, "kind"), "spec.release.chartRef.kind"),
				Name:      d.requiredStr(yamlnode.Get(cr, "name"), "spec.release.chartRef.name"),
				Namespace: d.str(yamlnode.Get(cr, "namespace"), "spec.release.chartRef.namespace"),
			}
		}
		def.HealthCheckExprs = d.healthChecks(yamlnode.Get(rel, "healthCheckExprs"), "spec.release.healthCheckExprs")
		def.WaitStrategy = d.str(yamlnode.Get(rel, "waitStrategy"), "spec.release.waitStrategy")
		if ws := def.WaitStrategy; ws != "" && ws != "poller" && ws != "legacy" {
			d.fail("spec.release.waitStrategy", "must be poller or legacy, not %q", ws)
		}
	}

	ann := d.annotations
	if v, ok := ann[InstallTimeoutAnnotation]; ok && v != "" {
		if t, ok := d.timeout(v, joinField("metadata.annotations", InstallTimeoutAnnotation)); ok {
			def.InstallTimeout, def.UpgradeTimeout = t, t
		}
	}
	if v, ok := ann[UpgradeTimeoutAnnotation]; ok && v != "" {
		if t, ok := d.timeout(v, joinField("metadata.annotations", UpgradeTimeoutAnnotation)); ok {
			def.UpgradeTimeout = t
		}
	}
	if v, ok := ann[InstallDisableWaitAnnotation]; ok {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			def.DisableWait = true
		case "false", "":
		default:
			d.fail(joinField("metadata.annotations", InstallDisableWaitAnnotation), "must be \"true\" or \"false\", not %q", v)
		}
	}

	// Placement: spec.placement (not yet in the installed CRD) or the
	// annotation; both set and different is a mistake.
	fromSpec := Placement(d.str(yamlnode.Get(spec, "placement"), "spec.placement"))
	fromAnn := Placement(ann[PlacementAnnotation])
	for field, p := range map[string]Placement{"spec.placement": fromSpec, joinField("metadata.annotations", PlacementAnnotation): fromAnn} {
		if p != "" && p != PlacementManagementPlane && p != PlacementComputePlane {
			d.fail(field, "must be %s or %s, not %q", PlacementManagementPlane, PlacementComputePlane, p)
		}
	}
	switch {
	case fromSpec != "" && fromAnn != "" && fromSpec != fromAnn:
		d.fail("spec.placement", "is %s but the annotation %s says %s; set one, or both to the same value", fromSpec, PlacementAnnotation, fromAnn)
	case fromSpec != "":
		def.Placement = fromSpec
	case fromAnn != "":
		def.Placement = fromAnn
	default:
		def.Placement = PlacementManagementPlane
	}
	return def, d.problems
}

func (d *decoder) timeout(v, field string) (time.Duration, bool) {
	if !durationRE.MatchString(v) {
		d.fail(field, "%q is not a duration such as 10m or 1h30m", v)
		return 0, false
	}
	t, err := time.ParseDuration(v)
	if err != nil || t <= 0 {
		d.fail(field, "%q is not a positive duration", v)
		return 0, false
	}
	return t, true
}

func (d *decoder) healthChecks(n *yaml.Node, field string) []HealthCheck {
	if n = d.sequence(n, field); n == nil {
		return nil
	}
	var out []HealthCheck
	for i, item := range n.Content {
		f := field + "[" + itoa(i) + "]"
		m := d.mapping(item, f)
		if m == nil {
			continue
		}
		d.keys(m, f, "apiVersion", "kind", "current", "inProgress", "failed")
		out = append(out, HealthCheck{
			APIVersion: d.requiredStr(yamlnode.Get(m, "apiVersion"), f+".apiVersion"),
			Kind:       d.requiredStr(yamlnode.Get(m, "kind"), f+".kind"),
			Current:    d.requiredStr(yamlnode.Get(m, "current"), f+".current"),
			InProgress: d.str(yamlnode.Get(m, "inProgress"), f+".inProgress"),
			Failed:     d.str(yamlnode.Get(m, "failed"), f+".failed"),
		})
	}
	return out
}

// DecodeTenant reads a Tenant of the tenant list.
func DecodeTenant(o Object) (*Tenant, Problems) {
	d := o.decoder()
	t := &Tenant{Ref: o.Ref(), Origin: o.Origin}
	d.keys(o.Node, "", ObjectFields...)
	md := d.metadata(o, true)
	t.Name = d.str(yamlnode.Get(md, "name"), "metadata.name")
	t.Parent = d.str(yamlnode.Get(md, "namespace"), "metadata.namespace")
	if t.Name != "" && !tenantNameRE.MatchString(t.Name) {
		d.fail("metadata.name", "tenant name %q must start with a lowercase letter and hold only lowercase letters and digits (^[a-z][a-z0-9]*$); dashes are not allowed", clip(t.Name))
	}
	spec := d.mapping(yamlnode.Get(o.Node, "spec"), "spec")
	d.keys(spec, "spec", TenantSpecFields...)
	t.ComputePlane = d.boolean(yamlnode.Get(spec, "computeplane"), "spec.computeplane", false)
	return t, d.problems
}

// DecodeApp reads an app object of a declared kind. It returns, besides the
// app, its spec (nil when it has none): the Helm values of its release,
// which package fleet holds as the text they take there.
func DecodeApp(o Object) (*App, *yaml.Node, Problems) {
	d := o.decoder()
	a := &App{Ref: o.Ref(), Origin: o.Origin, Kind: o.Kind}
	d.keys(o.Node, "", ObjectFields...)
	md := d.metadata(o, true)
	a.Name = d.str(yamlnode.Get(md, "name"), "metadata.name")
	a.Namespace = d.str(yamlnode.Get(md, "namespace"), "metadata.namespace")
	if a.Name != "" && len(validation.IsDNS1035Label(a.Name)) > 0 {
		d.fail("metadata.name", "%q must be a DNS-1035 label: lowercase letters, digits and dashes, starting with a letter", clip(a.Name))
	}
	a.Labels, a.Annotations = d.labels, d.annotations
	for k := range a.Annotations {
		if IsToolAnnotation(k) {
			delete(a.Annotations, k)
		}
	}
	// cozystack-api copies them to the release with a prefix, which must
	// leave them valid keys there.
	for field, m := range map[string]map[string]string{"metadata.labels": a.Labels, "metadata.annotations": a.Annotations} {
		for k := range m {
			if key := wire.ReleaseKeyPrefix + k; !ValidLabelKey(key) {
				d.fail(joinField(field, k), "becomes %q on the app's release, which is not a valid key there: %s; shorten the key", clip(key), content.IsLabelKey(key)[0])
			}
		}
	}
	if v, ok := a.Annotations[ReachableAnnotation]; ok {
		// A misspelt opt-in must not silently leave the app closed, nor an
		// unclear one open it: only the two words are accepted.
		switch v {
		case "true":
			a.Reachable = true
		case "false":
		default:
			d.fail(joinField("metadata.annotations", ReachableAnnotation), "must be \"true\" or \"false\", not %q", v)
		}
	}
	var values *yaml.Node
	if spec := yamlnode.Get(o.Node, "spec"); !yamlnode.IsNull(spec) {
		values = d.mapping(spec, "spec")
		if values != nil {
			for i := 0; i+1 < len(values.Content); i += 2 {
				k := yamlnode.Resolve(values.Content[i])
				if k != nil && strings.HasPrefix(k.Value, "_") {
					d.fail(joinField("spec", k.Value), "values key %q is reserved: Cozystack keeps top-level keys starting with '_' for itself", k.Value)
				}
			}
		}
	}
	return a, values, d.problems
}

// DecodeKnobs reads a ComputePlane knob object.
func DecodeKnobs(o Object) (*Knobs, Problems) {
	d := o.decoder()
	k := &Knobs{Ref: o.Ref(), Origin: o.Origin}
	md := d.metadata(o, true)
	name := d.str(yamlnode.Get(md, "name"), "metadata.name")
	k.Namespace = d.str(yamlnode.Get(md, "namespace"), "metadata.namespace")
	if name != "" && name != KnobsName {
		d.fail("metadata.name", "a ComputePlane object must be named %q (one per tenant), not %q", KnobsName, name)
	}
	spec := yamlnode.Get(o.Node, "spec")
	if !yamlnode.IsNull(spec) && d.mapping(spec, "spec") != nil {
		if v, ok := d.value(spec, "spec"); ok {
			k.Values, _ = v.(map[string]any)
			for _, field := range nullFields(k.Values, "spec") {
				d.fail(field, "a knob must not be null: Helm reads a null as \"delete the chart's default\", so the values applied would not be the values validated; leave the key out to keep the default")
			}
		}
	}
	return k, d.problems
}

// nullFields returns the field paths of the nulls in a values tree, keys in
// sorted order.
func nullFields(v any, field string) []string {
	switch v := v.(type) {
	case nil:
		return []string{field}
	case map[string]any:
		var out []string
		for _, key := range slices.Sorted(maps.Keys(v)) {
			out = append(out, nullFields(v[key], joinField(field, key))...)
		}
		return out
	case []any:
		var out []string
		for i, item := range v {
			out = append(out, nullFields(item, fmt.Sprintf("%s[%d]", field, i))...)
		}
		return out
	}
	return nil
}

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
