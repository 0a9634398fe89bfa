package api

import (
	"strings"
	"time"
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
	// OpenAPISchema is spec.application.openAPISchema: the JSON Schema of
	// its apps' spec, as written; "" when the definition has none.
	OpenAPISchema string

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

// DefinitionFields are the fields of an ApplicationDefinition's spec that
// the API server accepts (the CRD of cozystack.io/v1alpha1, checked against
// it by a test), by the path of the mapping that holds them, plus
// spec.placement, the ComputePlane design's field (docs/inputs-outputs.md), which
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

// DecodeDefinition reads an ApplicationDefinition.
func DecodeDefinition(o Object) (*Definition, Problems) {
	d := o.decoder()
	def := &Definition{Ref: o.Ref(), Origin: o.Origin, InstallTimeout: DefaultReleaseTimeout, UpgradeTimeout: DefaultReleaseTimeout}
	obj := readObject(o.Node, "")
	d.keys(obj, "", ObjectFields...)
	md := d.metadata(obj, false)
	if name := d.str(get(md, "name"), "metadata.name"); name != "" && !validDNSSubdomain(name) {
		d.fail("metadata.name", "%q is not a valid ApplicationDefinition name (a DNS subdomain: lowercase letters, digits, dashes and dots)", clip(name))
	}
	spec := d.mapping(get(obj, "spec"), "spec")
	if spec == nil {
		if get(obj, "spec") == nil {
			d.fail("spec", "is required")
		}
		return nil, d.problems
	}
	d.keys(spec, "spec", DefinitionFields["spec"]...)
	app := d.mapping(get(spec, "application"), "spec.application")
	if app == nil {
		d.fail("spec.application", "is required")
	}
	d.keys(app, "spec.application", DefinitionFields["spec.application"]...)
	def.Kind = d.requiredStr(get(app, "kind"), "spec.application.kind")
	if def.Kind != "" && (!kindRE.MatchString(def.Kind) || len(def.Kind) > 63) {
		d.fail("spec.application.kind", "%q is not a valid kind: CamelCase letters and digits, starting with a capital letter", clip(def.Kind))
		def.Kind = ""
	}
	def.Plural = d.str(get(app, "plural"), "spec.application.plural")
	def.Singular = d.str(get(app, "singular"), "spec.application.singular")
	def.OpenAPISchema = d.str(get(app, "openAPISchema"), "spec.application.openAPISchema")

	rel := d.mapping(get(spec, "release"), "spec.release")
	if rel == nil {
		d.fail("spec.release", "is required: without it the definition says nothing about how its apps are released")
	} else {
		d.keys(rel, "spec.release", DefinitionFields["spec.release"]...)
		pn, ok := lookup(rel, "prefix")
		if !ok {
			d.fail("spec.release.prefix", "is required (use \"\" for no prefix)")
		}
		def.Prefix = d.str(pn, "spec.release.prefix")
		if def.Prefix != "" && !releasePrefixRE.MatchString(def.Prefix) {
			d.fail("spec.release.prefix", "%q may hold only lowercase letters, digits and dashes", def.Prefix)
		}
		def.Labels = d.stringMap(get(rel, "labels"), "spec.release.labels")
		for k, v := range def.Labels {
			d.labelKey(joinField("spec.release.labels", k), k)
			d.labelValue(joinField("spec.release.labels", k), v)
		}
		cr := d.mapping(get(rel, "chartRef"), "spec.release.chartRef")
		d.keys(cr, "spec.release.chartRef", DefinitionFields["spec.release.chartRef"]...)
		if cr == nil {
			d.fail("spec.release.chartRef", "is required")
		} else {
			def.ChartRef = ChartRef{
				Kind:      d.requiredStr(get(cr, "kind"), "spec.release.chartRef.kind"),
				Name:      d.requiredStr(get(cr, "name"), "spec.release.chartRef.name"),
				Namespace: d.str(get(cr, "namespace"), "spec.release.chartRef.namespace"),
			}
		}
		def.HealthCheckExprs = d.healthChecks(get(rel, "healthCheckExprs"), "spec.release.healthCheckExprs")
		def.WaitStrategy = d.str(get(rel, "waitStrategy"), "spec.release.waitStrategy")
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
	fromSpec := Placement(d.str(get(spec, "placement"), "spec.placement"))
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

func (d *decoder) healthChecks(v any, field string) []HealthCheck {
	items := d.sequence(v, field)
	if items == nil {
		return nil
	}
	var out []HealthCheck
	for i, item := range items {
		f := field + "[" + itoa(i) + "]"
		m := d.mapping(item, f)
		if m == nil {
			continue
		}
		d.keys(m, f, "apiVersion", "kind", "current", "inProgress", "failed")
		out = append(out, HealthCheck{
			APIVersion: d.requiredStr(get(m, "apiVersion"), f+".apiVersion"),
			Kind:       d.requiredStr(get(m, "kind"), f+".kind"),
			Current:    d.requiredStr(get(m, "current"), f+".current"),
			InProgress: d.str(get(m, "inProgress"), f+".inProgress"),
			Failed:     d.str(get(m, "failed"), f+".failed"),
		})
	}
	return out
}
