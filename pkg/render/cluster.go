package render

import (
	"slices"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
	"github.com/computeplane-dev/computeplane-fn/pkg/schema"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Labels and annotations of the cluster HelmRelease.
const (
	ShardingLabel     = "sharding.fluxcd.io/key"
	ShardingTenants   = "tenants"
	ComputePlaneLabel = "internal.cozystack.io/computeplane"
	// PruneAnnotation with PruneDisabled keeps Flux's kustomize-controller
	// from deleting the live cluster when its HelmRelease leaves Git.
	PruneAnnotation = "kustomize.toolkit.fluxcd.io/prune"
	PruneDisabled   = "disabled"
)

const (
	clusterInterval = 5 * time.Minute
	clusterTimeout  = 30 * time.Minute
)

// ClusterPlan is what every cluster of a run shares: the operator-fixed
// values and the compiled knob schema. Build it once per run.
type ClusterPlan struct {
	fixed      map[string]any
	fixedPaths [][]string
	knobs      *schema.Schema
}

// NewClusterPlan compiles the knob schema and the fixed values of cfg.
func NewClusterPlan(cfg *api.Config) (*ClusterPlan, api.Problems) {
	knobSchema := cfg.Cluster.Knobs
	field := "spec.cluster.knobs"
	if knobSchema == nil {
		knobSchema = api.DefaultKnobSchema()
	}
	s, err := schema.CompileValue(knobSchema)
	if err != nil {
		return nil, api.Problems{api.Errorf(cfg.Ref, cfg.Origin, field, "is not a valid OpenAPI v3 schema: %v", err)}
	}
	fixed := FixedValues(cfg)
	return &ClusterPlan{fixed: fixed, fixedPaths: leafPaths(fixed, nil), knobs: s}, nil
}

// FixedValues returns the operator-fixed values of every cluster: the
// config's cluster.values (or the defaults) plus the wiring of the hardening
// this function emits.
func FixedValues(cfg *api.Config) map[string]any {
	fixed := deepCopy(cfg.Cluster.Values).(map[string]any)
	return fixed
}

// Values validates a tenant's knobs and merges the fixed values over them.
// A knob outside the schema, or one that touches a path the operator fixed,
// is refused with the path; fixed values are never silently overridden.
func (p *ClusterPlan) Values(t *fleet.Tenant) (map[string]any, api.Problems) {
	if t.Knobs == nil || len(t.Knobs.Values) == 0 {
		return deepCopy(p.fixed).(map[string]any), nil
	}
	k := t.Knobs
	var problems api.Problems
	for _, v := range p.knobs.Validate(k.Values) {
		problems = append(problems, api.Errorf(k.Ref, k.Origin, fieldPath("spec", v.Path), "%s", v.Message))
	}
	for _, path := range leafPaths(k.Values, nil) {
		for _, fixed := range p.fixedPaths {
			if overlaps(path, fixed) {
				problems = append(problems, api.Errorf(k.Ref, k.Origin, fieldPath("spec", strings.Join(path, ".")),
					"is fixed by the operator (%s) and cannot be set by a tenant; remove it from this ComputePlane object", strings.Join(fixed, ".")))
				break
			}
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	merged := deepCopy(k.Values).(map[string]any)
	mergeInto(merged, deepCopy(p.fixed).(map[string]any))
	return merged, nil
}

// RenderCluster builds the HelmRelease of a tenant's ComputePlane cluster
// (delivery: Direct): the apps/kubernetes chart from the re-sourced
// ExternalArtifact, under the fixed release name that routed apps depend on.
func RenderCluster(f *fleet.Fleet, plan *ClusterPlan, t *fleet.Tenant) (Object, api.Problems) {
	values, problems := plan.Values(t)
	if len(problems) > 0 {
		return Object{}, problems
	}
	release := fleet.DirectClusterRelease
	hr := helmv2.HelmRelease{
		TypeMeta: metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      release,
			Namespace: t.Namespace,
			Labels: managedLabels(map[string]string{
				ShardingLabel:     ShardingTenants,
				ComputePlaneLabel: "true",
			}),
			Annotations: map[string]string{PruneAnnotation: PruneDisabled},
		},
		Spec: helmv2.HelmReleaseSpec{
			ReleaseName: release,
			ChartRef: &helmv2.CrossNamespaceSourceReference{
				Kind:      "ExternalArtifact",
				Name:      ClusterArtifactName,
				Namespace: PlatformNamespace,
			},
			Interval: metav1.Duration{Duration: clusterInterval},
			Timeout:  &metav1.Duration{Duration: clusterTimeout},
			Install: &helmv2.Install{
				DisableWait: true,
				Remediation: &helmv2.InstallRemediation{Retries: -1},
			},
			Upgrade: &helmv2.Upgrade{
				DisableWait: true,
				Remediation: &helmv2.UpgradeRemediation{Retries: -1},
			},
			Values:     &apiextensionsv1.JSON{Raw: []byte("{}")},
			ValuesFrom: []helmv2.ValuesReference{{Kind: "Secret", Name: ValuesSecret}},
		},
	}
	n, err := toNode(&hr)
	if err != nil {
		return Object{}, api.Problems{problemOf(t, err)}
	}
	vn, err := yamlnode.FromValue(values)
	if err != nil {
		return Object{}, api.Problems{problemOf(t, err)}
	}
	yamlnode.SetKey(yamlnode.Get(n, "spec"), "values", vn)
	return tenantObject(t, n, hr.APIVersion, hr.Kind, hr.Name), nil
}

// tenantObject wraps an object generated for a tenant's ComputePlane.
func tenantObject(t *fleet.Tenant, n *yaml.Node, apiVersion, kind, name string) Object {
	o := Object{Node: n, APIVersion: apiVersion, Kind: kind, Namespace: t.Namespace, Name: name, Generated: true, Tenant: t.Namespace}
	if t.Object != nil {
		o.From, o.Origin = t.Object.Ref, t.Object.Origin
	} else {
		o.From = api.ObjectRef{APIVersion: api.AppsAPIVersion, Kind: api.TenantKind, Namespace: fleet.RootNamespace, Name: "root"}
	}
	return o
}

func problemOf(t *fleet.Tenant, err error) api.Problem {
	p := api.Problem{Message: err.Error()}
	if t.Object != nil {
		p.Object, p.File = t.Object.Ref, t.Object.Origin.File
	}
	return p
}

func fieldPath(root, path string) string {
	if path == "" {
		return root
	}
	if strings.HasPrefix(path, "[") {
		return root + path
	}
	return root + "." + path
}

// leafPaths lists the paths of the leaves of a values tree. Lists are leaves:
// Helm replaces lists whole, so a list is owned by whoever sets it.
func leafPaths(v map[string]any, prefix []string) [][]string {
	var out [][]string
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := append(slices.Clone(prefix), k)
		if m, ok := v[k].(map[string]any); ok && len(m) > 0 {
			out = append(out, leafPaths(m, p)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// overlaps reports whether one path is a prefix of the other: setting either
// would change what the other holds.
func overlaps(a, b []string) bool {
	n := min(len(a), len(b))
	return slices.Equal(a[:n], b[:n])
}

// mergeInto merges src over dst: maps merge key by key, anything else in src
// replaces what dst holds.
func mergeInto(dst, src map[string]any) {
	for k, sv := range src {
		if sm, ok := sv.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = sv
	}
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
