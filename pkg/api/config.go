package api

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// The function config's group, version and kind.
const (
	ConfigAPIVersion = "fn.computeplane.dev/v1alpha1"
	ConfigKind       = "ComputePlaneGenerator"
)

// Delivery says who provisions the ComputePlane clusters.
type Delivery string

const (
	// Direct: this function emits the source and the cluster HelmRelease.
	Direct Delivery = "Direct"
	// Platform: Cozystack's computeplane tenant module provisions the
	// cluster; this function only routes apps.
	Platform Delivery = "Platform"
)

// PodSecurity levels of the cluster's API server admission.
const (
	PodSecurityRestricted = "restricted"
	PodSecurityBaseline   = "baseline"
	PodSecurityPrivileged = "privileged"
)

// Config is the spec of a ComputePlaneGenerator.
type Config struct {
	Ref    ObjectRef
	Origin Origin

	// Inputs are files, folders and globs, relative to the working
	// directory, read in addition to the ResourceList items.
	Inputs     []string
	Delivery   Delivery
	KeepInputs bool
	Source     SourceConfig
	Cluster    ClusterConfig
	Routing    RoutingConfig
	// Fleet lays the fleet folder out in Flux units and wires them to Flux;
	// nil when spec.fleet is absent.
	Fleet *FleetConfig
}

// SourceConfig is where the apps/kubernetes chart is re-sourced from.
type SourceConfig struct {
	Generate  bool
	Kind      string // OCIRepository or GitRepository
	Name      string
	Namespace string
	Path      string // base path of the packages inside the source
}

// ClusterConfig is the operator's posture of every ComputePlane cluster.
type ClusterConfig struct {
	// Values are the operator-fixed values of apps/kubernetes; they always
	// win over the tenant's knobs.
	Values map[string]any
	// Knobs is the OpenAPI v3 schema of what a tenant may set.
	Knobs map[string]any
	// PodSecurity is the level the cluster's API server enforces.
	PodSecurity string
	// Egress tunes the egress policy of the clusters' VMs (both
	// deliveries).
	Egress EgressConfig
}

// EgressConfig tunes the CiliumNetworkPolicy computeplane-egress.
type EgressConfig struct {
	// AllowAncestorIngress lifts the deny of the ingress pods
	// (cozystack.io/service: ingress) of every ancestor tenant. Off by
	// default: the management API can be published there with TLS
	// passthrough, so an open ancestor ingress is a path from the VMs to
	// the management API server.
	AllowAncestorIngress bool
}

// RoutingConfig tunes the HelmReleases of routed apps.
type RoutingConfig struct {
	// EditableThroughAPI keeps the apps.cozystack.io/application.* labels on
	// routed releases, so cozystack-api lists them and lets users edit them.
	// An edit through the API rebuilds the release without its kubeConfig
	// and so moves the app onto the management cluster: off by default.
	EditableThroughAPI bool
}

// DefaultClusterValues returns the operator-fixed values used when the config
// sets none: the posture of Cozystack's own computeplane module.
func DefaultClusterValues() map[string]any {
	return map[string]any{
		"addons": map[string]any{
			"certManager":  map[string]any{"enabled": true},
			"ingressNginx": map[string]any{"enabled": true, "exposeMethod": "Proxied"},
		},
	}
}

// DecodeConfig reads a ComputePlaneGenerator. Unknown fields are an error.
func DecodeConfig(o Object) (*Config, Problems) {
	d := o.decoder()
	c := &Config{Ref: o.Ref(), Origin: o.Origin}
	if o.APIVersion != ConfigAPIVersion || o.Kind != ConfigKind {
		d.fail("", "the function config must be %s %s, not %s %s", ConfigAPIVersion, ConfigKind, o.APIVersion, o.Kind)
		return nil, d.problems
	}
	d.keys(o.Node, "", "apiVersion", "kind", "metadata", "spec")
	d.mapping(yamlnode.Get(o.Node, "metadata"), "metadata")
	spec := d.mapping(yamlnode.Get(o.Node, "spec"), "spec")
	d.keys(spec, "spec", "inputs", "delivery", "keepInputs", "source", "cluster", "routing", "fleet")

	c.Inputs = d.strings(yamlnode.Get(spec, "inputs"), "spec.inputs")
	c.Delivery = Delivery(d.str(yamlnode.Get(spec, "delivery"), "spec.delivery"))
	switch c.Delivery {
	case "":
		c.Delivery = Direct
	case Direct, Platform:
	default:
		d.fail("spec.delivery", "must be %s or %s, not %q", Direct, Platform, c.Delivery)
	}
	c.KeepInputs = d.boolean(yamlnode.Get(spec, "keepInputs"), "spec.keepInputs", false)

	src := d.mapping(yamlnode.Get(spec, "source"), "spec.source")
	d.keys(src, "spec.source", "generate", "kind", "name", "namespace", "path")
	c.Source = SourceConfig{
		Generate:  d.boolean(yamlnode.Get(src, "generate"), "spec.source.generate", true),
		Kind:      d.str(yamlnode.Get(src, "kind"), "spec.source.kind"),
		Name:      d.str(yamlnode.Get(src, "name"), "spec.source.name"),
		Namespace: d.str(yamlnode.Get(src, "namespace"), "spec.source.namespace"),
		Path:      d.str(yamlnode.Get(src, "path"), "spec.source.path"),
	}
	switch c.Source.Kind {
	case "":
		c.Source.Kind = "OCIRepository"
	case "OCIRepository", "GitRepository":
	default:
		d.fail("spec.source.kind", "must be OCIRepository or GitRepository, not %q", c.Source.Kind)
	}
	if c.Source.Name == "" {
		c.Source.Name = "cozystack-packages"
	}
	if c.Source.Namespace == "" {
		c.Source.Namespace = "cozy-system"
	}
	if yamlnode.Get(src, "path") == nil && c.Source.Kind == "GitRepository" {
		c.Source.Path = "packages"
	}
	if c.Source.Name != "" && !ValidDNSLabel(c.Source.Name) {
		d.fail("spec.source.name", "%q is not a valid object name", c.Source.Name)
	}
	if !ValidDNSLabel(c.Source.Namespace) {
		d.fail("spec.source.namespace", "%q is not a valid namespace name", c.Source.Namespace)
	}

	cl := d.mapping(yamlnode.Get(spec, "cluster"), "spec.cluster")
	d.keys(cl, "spec.cluster", "values", "knobs", "podSecurity", "egress")
	eg := d.mapping(yamlnode.Get(cl, "egress"), "spec.cluster.egress")
	d.keys(eg, "spec.cluster.egress", "allowAncestorIngress")
	c.Cluster.Egress.AllowAncestorIngress = d.boolean(yamlnode.Get(eg, "allowAncestorIngress"), "spec.cluster.egress.allowAncestorIngress", false)
	c.Cluster.PodSecurity = d.str(yamlnode.Get(cl, "podSecurity"), "spec.cluster.podSecurity")
	switch c.Cluster.PodSecurity {
	case "":
		c.Cluster.PodSecurity = PodSecurityRestricted
	case PodSecurityRestricted, PodSecurityBaseline, PodSecurityPrivileged:
	default:
		d.fail("spec.cluster.podSecurity", "must be restricted, baseline or privileged, not %q", c.Cluster.PodSecurity)
	}
	c.Cluster.Values = DefaultClusterValues()
	if n := yamlnode.Get(cl, "values"); !yamlnode.IsNull(n) && d.mapping(n, "spec.cluster.values") != nil {
		if v, ok := d.value(n, "spec.cluster.values"); ok {
			c.Cluster.Values = v.(map[string]any)
		}
	}
	if n := yamlnode.Get(cl, "knobs"); !yamlnode.IsNull(n) && d.mapping(n, "spec.cluster.knobs") != nil {
		if v, ok := d.value(n, "spec.cluster.knobs"); ok {
			c.Cluster.Knobs = v.(map[string]any)
		}
	}

	rt := d.mapping(yamlnode.Get(spec, "routing"), "spec.routing")
	d.keys(rt, "spec.routing", "editableThroughAPI")
	c.Routing.EditableThroughAPI = d.boolean(yamlnode.Get(rt, "editableThroughAPI"), "spec.routing.editableThroughAPI", false)

	c.Fleet = d.decodeFleet(yamlnode.Get(spec, "fleet"))

	if c.Delivery == Platform {
		// The egress policy is emitted under both deliveries; the rest of
		// spec.cluster, and the source, belong to the platform's module.
		if yamlnode.Get(spec, "source") != nil {
			d.fail("spec.source", "is only used with delivery: Direct; under delivery: Platform the computeplane module owns the source and the cluster")
		}
		for _, f := range []string{"values", "knobs", "podSecurity"} {
			if yamlnode.Get(cl, f) != nil {
				d.fail("spec.cluster."+f, "is only used with delivery: Direct; under delivery: Platform the computeplane module owns the cluster (only spec.cluster.egress applies)")
			}
		}
	}
	return c, d.problems
}

func (d *decoder) strings(n *yaml.Node, field string) []string {
	if yamlnode.IsNull(n) {
		return nil
	}
	n = yamlnode.Resolve(n)
	if n.Kind != yaml.SequenceNode {
		d.fail(field, "must be a list of strings, not %s", yamlnode.Describe(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		out = append(out, d.requiredStr(item, field+"["+itoa(i)+"]"))
	}
	return out
}
