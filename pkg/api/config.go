package api

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
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

// Config is the spec of a ComputePlaneGenerator. The config's JSON Schema
// (computeplanegenerator.schema.json) is the one source of its fields,
// their types, enums, bounds and patterns: [DecodeConfig] checks the
// config against it as the API server checks a custom resource, decodes
// what it accepts into this struct by the json tags, then runs
// [Config.Default] and [Config.Validate], which hold what a schema cannot
// say (defaults that depend on other fields, checks across fields, names
// and paths). A new config field is a property of the schema and a struct
// field with its json tag (schema_test.go fails on either alone), a
// default in Default if it needs one and its checks in Validate.
type Config struct {
	Ref    ObjectRef `json:"-"`
	Origin Origin    `json:"-"`

	// Inputs are files, folders and globs, relative to the config file's
	// folder (the working directory for a config that has no file), read
	// in addition to the ResourceList items.
	Inputs     []string       `json:"inputs"`
	Delivery   Delivery       `json:"delivery"`
	KeepInputs bool           `json:"keepInputs"`
	Source     SourceConfig   `json:"source"`
	Cluster    ClusterConfig  `json:"cluster"`
	Routing    RoutingConfig  `json:"routing"`
	Apps       AppsConfig     `json:"apps"`
	Releases   ReleasesConfig `json:"releases"`
	// Platform is what the management cluster serves: the function never
	// guesses it, and renders nothing the named platform does not serve.
	Platform PlatformConfig `json:"platform"`
	// Baseline is where the in-cluster baseline's chart comes from, in the
	// output that has no fleet folder (no spec.fleet).
	Baseline BaselineConfig `json:"baseline"`
	// Fleet lays the fleet folder out in Flux units and wires them to Flux;
	// nil when spec.fleet is absent.
	Fleet *FleetConfig `json:"fleet"`
	// Guard is the management-plane admission guard (guard.go).
	Guard GuardConfig `json:"guard"`

	// written holds the paths below spec that the config writes: true for
	// a value, false for null. Some defaults and checks depend on it.
	written map[string]bool
}

// SourceConfig is where the apps/kubernetes chart is re-sourced from.
type SourceConfig struct {
	Generate  bool   `json:"generate"`
	Kind      string `json:"kind"` // OCIRepository or GitRepository
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Path      string `json:"path"` // base path of the packages inside the source
}

// ClusterConfig is the operator's posture of every ComputePlane cluster.
type ClusterConfig struct {
	// Values are the operator-fixed values of apps/kubernetes; they always
	// win over the tenant's knobs.
	Values map[string]any `json:"values"`
	// Knobs is the OpenAPI v3 schema of what a tenant may set.
	Knobs map[string]any `json:"knobs"`
	// PodSecurity is the level the cluster's API server enforces.
	PodSecurity string `json:"podSecurity"`
	// Egress tunes the egress policy of the clusters' VMs (both
	// deliveries).
	Egress EgressConfig `json:"egress"`
}

// EgressConfig tunes the CiliumNetworkPolicy computeplane-egress.
type EgressConfig struct {
	// AllowAncestorIngress lifts the deny of the ingress pods
	// (cozystack.io/service: ingress) of every ancestor tenant. Off by
	// default: the management API can be published there with TLS
	// passthrough, so an open ancestor ingress is a path from the VMs to
	// the management API server.
	AllowAncestorIngress bool `json:"allowAncestorIngress"`
}

// AppsConfig says how app objects are checked against their
// ApplicationDefinition.
type AppsConfig struct {
	// Values is what a field of an app's spec that the definition's
	// openAPISchema does not declare, or a value of the wrong type, is:
	// AppValuesWarn (the default), AppValuesRefuse or AppValuesIgnore.
	Values string `json:"values"`
}

// The values of spec.apps.values.
const (
	// AppValuesWarn reports each as a warning and renders the app as
	// written, as cozystack-api accepts it.
	AppValuesWarn = "Warn"
	// AppValuesRefuse reports each as an error: nothing is rendered.
	AppValuesRefuse = "Refuse"
	// AppValuesIgnore checks nothing.
	AppValuesIgnore = "Ignore"
)

// ReleasesConfig tunes every HelmRelease the function renders in a tenant
// namespace (apps and clusters).
type ReleasesConfig struct {
	// ShardLabel says who writes a release's sharding.fluxcd.io/key:
	// tenants, the value Cozystack's ApplicationDefinitions give it.
	// Admission (the default with flux-shard-operator where the platform
	// serves MutatingAdmissionPolicy, Kubernetes 1.36): not the render, so
	// that kustomize-controller owns no value flux-shard-operator
	// rewrites; the computeplane-release-shard MutatingAdmissionPolicy
	// sets it on a release that has none. Webhook (the default with
	// flux-shard-operator below 1.36): no label in the render; the
	// MutatingWebhookConfiguration computeplane-release-shard sends the
	// create of each such release to the operator's own webhook, which
	// stamps the tenant's shard. Omitted: nobody, so the releases stay on
	// the main helm-controller. Rendered (the default without the
	// operator): the render, which nothing rewrites there
	// (docs/flux-wiring.md).
	ShardLabel string `json:"shardLabel"`
}

// The values of spec.releases.shardLabel.
const (
	ShardLabelAdmission = "Admission"
	ShardLabelWebhook   = "Webhook"
	ShardLabelOmitted   = "Omitted"
	ShardLabelRendered  = "Rendered"
)

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

// DecodeConfig reads a ComputePlaneGenerator: checked against the config's
// schema, decoded into [Config], then [Config.Default] and
// [Config.Validate]. Unknown fields are an error; every problem of the
// config is reported in one run.
//
// A v1 ConfigMap is read too, as kpt makes one of `kpt fn eval ... --
// key=value`: each data key is the path of a scalar field of the spec
// (configmap.go), and its problems name data[<key>].
func DecodeConfig(o Object) (*Config, Problems) {
	d := o.decoder()
	if isConfigMap(o) {
		spec, keys := configMapSpec(o, d)
		if len(d.problems) > 0 {
			return nil, d.problems
		}
		c, problems := decodeSpec(o, d, spec)
		nameDataKeys(problems, keys)
		return c, problems
	}
	if o.APIVersion != ConfigAPIVersion || o.Kind != ConfigKind {
		d.fail("", "the function config must be %s %s (or a v1 ConfigMap of scalar fields, as kpt fn eval -- key=value makes), not %s %s", ConfigAPIVersion, ConfigKind, o.APIVersion, o.Kind)
		return nil, d.problems
	}
	root, err := ParseConfigSchema()
	if err != nil {
		d.fail("", "%v", err)
		return nil, d.problems
	}
	obj := readObject(o.Node, "spec")
	d.keys(obj, "", root.Order...)
	d.mapping(get(obj, "metadata"), "metadata")
	return decodeSpec(o, d, d.mappingNode(get(obj, "spec"), "spec"))
}

// decodeSpec decodes spec, the spec of the config o (nil when absent),
// with the decoder d of o.
func decodeSpec(o Object, d *decoder, spec *yaml.Node) (*Config, Problems) {
	c := &Config{Ref: o.Ref(), Origin: o.Origin}
	// Defaults that an explicit value, even a zero one, overrides are set
	// before decoding; Default sets the others.
	c.Source.Generate = true
	c.Guard = newGuardConfig()
	if spec != nil {
		c.written = d.decodeSpecInto(spec, c)
	}
	c.Default()
	return c, append(d.problems, c.Validate()...)
}

// Default fills in what the config leaves out.
func (c *Config) Default() {
	if c.Delivery == "" {
		c.Delivery = Direct
	}
	if c.Source.Kind == "" {
		c.Source.Kind = "OCIRepository"
	}
	if c.Source.Name == "" {
		c.Source.Name = "cozystack-packages"
	}
	if c.Source.Namespace == "" {
		c.Source.Namespace = "cozy-system"
	}
	if _, set := c.written["source.path"]; !set && c.Source.Kind == "GitRepository" {
		c.Source.Path = "packages"
	}
	if c.Cluster.PodSecurity == "" {
		c.Cluster.PodSecurity = PodSecurityRestricted
	}
	if c.Cluster.Values == nil {
		c.Cluster.Values = DefaultClusterValues()
	}
	if c.Platform.KubernetesVersion == "" {
		c.Platform.KubernetesVersion = DefaultKubernetesVersion
	}
	if c.Platform.ShardOperator == "" {
		c.Platform.ShardOperator = ShardOperatorPresent
	}
	if c.Platform.Flux == "" {
		c.Platform.Flux = DefaultFlux
	}
	if c.Apps.Values == "" {
		c.Apps.Values = AppValuesWarn
	}
	if c.Platform.ClusterChart == "" {
		c.Platform.ClusterChart = ClusterChartCombined
	}
	if c.Releases.ShardLabel == "" {
		switch {
		case c.Platform.ShardOperator == ShardOperatorAbsent:
			c.Releases.ShardLabel = ShardLabelRendered
		case c.Platform.Serves(FeatureMutatingAdmissionPolicy):
			c.Releases.ShardLabel = ShardLabelAdmission
		default:
			c.Releases.ShardLabel = ShardLabelWebhook
		}
	}
	if c.Fleet != nil {
		c.Fleet.Default(c.Platform)
	}
	c.Baseline.Default(c)
	if c.Routing.Namespaces == "" {
		c.Routing.Namespaces = NamespacesShared
	}
	// Absent, null (reported) or not a list (reported): the fleet's account.
	if c.Guard.FluxIdentities == nil {
		c.Guard.FluxIdentities = Identities{c.FleetIdentity()}
	}
}

// FleetAccount is the namespace and name of the fleet's own service
// account: spec.fleet's wiringNamespace and serviceAccountName, or their
// defaults (flux-system, computeplane-fleet) when spec.fleet is absent.
// Every Kustomization the function renders applies as it.
func (c *Config) FleetAccount() (namespace, name string) {
	if c.Fleet == nil {
		return DefaultWiringNamespace, DefaultFleetServiceAccount
	}
	return c.Fleet.WiringNamespace, c.Fleet.ServiceAccountName
}

// FleetIdentity is the user name the API server gives the fleet's account
// (system:serviceaccount:<namespace>:<name>): guard.fluxIdentities when the
// config sets none.
func (c *Config) FleetIdentity() string {
	ns, name := c.FleetAccount()
	return ServiceAccountUser(ns, name)
}

// ServiceAccountUser is the user name of a service account.
func ServiceAccountUser(namespace, name string) string {
	return serviceAccountPrefix + namespace + ":" + name
}

// Validate returns what is wrong in a decoded and defaulted config that
// the schema cannot say: the enums, bounds, patterns and required fields
// of the schema were checked while decoding, and a value they refused was
// left out.
func (c *Config) Validate() Problems {
	d := &decoder{ref: c.Ref, origin: c.Origin}
	for i, in := range c.Inputs {
		if in == "" {
			d.fail("spec.inputs["+itoa(i)+"]", "must not be empty")
		}
	}
	if !ValidDNSLabel(c.Source.Name) {
		d.fail("spec.source.name", "%q is not a valid object name", c.Source.Name)
	}
	if !ValidDNSLabel(c.Source.Namespace) {
		d.fail("spec.source.namespace", "%q is not a valid namespace name", c.Source.Namespace)
	}
	platformKnown := c.Platform.validate(d)
	c.Platform.validateLine(d, c.Delivery)
	if c.Releases.ShardLabel == ShardLabelAdmission && platformKnown && !c.Platform.Serves(FeatureMutatingAdmissionPolicy) {
		d.fail("spec.releases.shardLabel", "Admission needs %s, which Kubernetes serves from %s on; spec.platform.kubernetesVersion says the management cluster runs %s. Use Webhook (the default there), or name the cluster's version",
			FeatureMutatingAdmissionPolicy.What, FeatureMutatingAdmissionPolicy.Since, c.Platform.KubernetesVersion)
	}
	if c.Releases.ShardLabel == ShardLabelWebhook && c.Platform.ShardOperator == ShardOperatorAbsent {
		d.fail("spec.releases.shardLabel", "Webhook sends each release's create to flux-shard-operator's webhook, and spec.platform.shardOperator says the operator is Absent: nothing would stamp a shard. Use Rendered (the default without the operator) or Omitted")
	}
	c.Baseline.validate(d, c.written)
	if c.Fleet != nil {
		c.Fleet.validate(d, c.written, c.Platform)
	}
	c.Guard.validate(d, c.written)
	c.Routing.validate(d, c.written)
	c.validateRoles(d)
	if c.Delivery == Platform {
		// The egress policy is emitted under both deliveries; the rest of
		// spec.cluster, and the source, belong to the platform's module.
		if _, set := c.written["source"]; set {
			d.fail("spec.source", "is only used with delivery: Direct; under delivery: Platform the computeplane module owns the source and the cluster")
		}
		for _, f := range []string{"values", "knobs", "podSecurity"} {
			if _, set := c.written["cluster."+f]; set {
				d.fail("spec.cluster."+f, "is only used with delivery: Direct; under delivery: Platform the computeplane module owns the cluster (only spec.cluster.egress applies)")
			}
		}
	}
	return d.problems
}
