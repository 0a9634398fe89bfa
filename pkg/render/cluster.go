package render

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
	"github.com/computeplane-dev/computeplane-fn/pkg/knobs"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

const (
	clusterInterval = 5 * time.Minute
	clusterTimeout  = 30 * time.Minute
)

// ClusterPlan is what every cluster of a run shares: the operator-fixed
// values with the hardening wired in, the paths they fix, the compiled knob
// schema and the Pod Security configuration. Build it once per run.
type ClusterPlan struct {
	fixed      map[string]any
	fixedPaths [][]string
	knobs      *knobs.Schema
	// admission is nil under podSecurity: privileged.
	admission *Admission
}

// NewClusterPlan compiles the knob schema and the fixed values of cfg.
func NewClusterPlan(cfg *api.Config) (*ClusterPlan, api.Problems) {
	knobSchema := cfg.Cluster.Knobs
	field := "spec.cluster.knobs"
	if knobSchema == nil {
		def, err := api.DefaultKnobSchema()
		if err != nil {
			return nil, api.Problems{{Message: "internal error (a bug): " + err.Error()}}
		}
		knobSchema = def
	}
	s, err := knobs.Compile(knobSchema)
	if err != nil {
		return nil, api.Problems{api.Errorf(cfg.Ref, cfg.Origin, field, "is not a valid knob schema: %v", err)}
	}
	fixed, admission, problems := fixedValues(cfg)
	if len(problems) > 0 {
		return nil, problems
	}
	if roles := nodeGroupProblems(fixed, "spec.cluster.values"); len(roles) > 0 {
		for _, f := range slices.Sorted(maps.Keys(roles)) {
			problems = append(problems, api.Errorf(cfg.Ref, cfg.Origin, f, "%s", roles[f]))
		}
		return nil, problems
	}
	if msg := ingressNodesProblem(fixed); msg != "" && valueAt(fixed, "nodeGroups") != nil {
		return nil, api.Problems{api.Errorf(cfg.Ref, cfg.Origin, "spec.cluster.values.nodeGroups", "%s", msg)}
	}
	return &ClusterPlan{fixed: fixed, fixedPaths: fixedLeafPaths(fixed, nil), knobs: s, admission: admission}, nil
}

// Admission returns the Pod Security configuration of the run's clusters,
// nil under podSecurity: privileged.
func (p *ClusterPlan) Admission() *Admission { return p.admission }

// FixedValues returns the operator-fixed values of every cluster: the
// config's cluster.values (or the defaults) plus the wiring of the hardening
// this function emits. Under podSecurity restricted or baseline that is the
// API server flag, volume and mount that load the computeplane-admission
// ConfigMap, appended to what the operator set in
// controlPlane.apiServer.extraArgs, extraVolumes and extraVolumeMounts.
// Being fixed values, a tenant's knobs can never touch them.
func FixedValues(cfg *api.Config) (map[string]any, api.Problems) {
	fixed, _, problems := fixedValues(cfg)
	return fixed, problems
}

func fixedValues(cfg *api.Config) (map[string]any, *Admission, api.Problems) {
	fixed := yamlnode.CopyValue(cfg.Cluster.Values)
	admission, err := NewAdmission(cfg.Cluster.PodSecurity, fixed)
	if err != nil {
		return nil, nil, api.Problems{api.Errorf(cfg.Ref, cfg.Origin, "spec.cluster.podSecurity", "%v", err)}
	}
	if admission != nil {
		if problems := wireAdmission(cfg, admission, fixed); len(problems) > 0 {
			return nil, nil, problems
		}
	}
	return fixed, admission, nil
}

// Values validates a tenant's knobs and merges the fixed values over them.
// A knob outside the schema, one that touches a path the operator fixed, a
// top-level key starting with '_' (the platform's own values), or the
// enabled or valuesOverride of an addon whose namespace the cluster's Pod
// Security configuration exempts (OperatorOnlyAddons, whatever the knob
// schema says) is refused with the path; fixed values are never silently
// overridden.
// Node groups a tenant gives must leave the pinned ingress addon a node, and
// the names and strings of their groups that the chart writes unquoted must
// be names of their kinds (nodeGroupProblems).
func (p *ClusterPlan) Values(t *fleet.Tenant) (map[string]any, api.Problems) {
	if t.Knobs == nil || len(t.Knobs.Values) == 0 {
		return yamlnode.CopyValue(p.fixed), nil
	}
	k := t.Knobs
	var problems api.Problems
	// One problem a field: the schema's first, the checks below only
	// where it found none.
	reported := map[string]bool{}
	for _, v := range p.knobs.Validate(k.Values) {
		reported[v.Field] = true
		problems = append(problems, api.Errorf(k.Ref, k.Origin, v.Field, "%s", v.Message))
	}
	for _, key := range slices.Sorted(maps.Keys(k.Values)) {
		// The platform's cozystack-values Secret sets these (_namespace.etcd
		// names the datastore), and spec.values would win over it.
		if strings.HasPrefix(key, "_") {
			field := fieldPath("spec", joinPath([]string{key}))
			reported[field] = true
			problems = append(problems, api.Errorf(k.Ref, k.Origin, field,
				"values key %q is reserved: Cozystack sets top-level keys starting with '_' for the platform, and a tenant must not override them", key))
		}
	}
	for _, path := range leafPaths(k.Values, nil) {
		for _, fixed := range p.fixedPaths {
			if !overlaps(path, fixed) {
				continue
			}
			// Report the shorter of the two paths, once: below a path the
			// operator owns whole, every leaf is the same mistake.
			field := fieldPath("spec", joinPath(path[:min(len(path), len(fixed))]))
			if !reported[field] {
				reported[field] = true
				problems = append(problems, api.Errorf(k.Ref, k.Origin, field,
					"is fixed by the operator (%s) and cannot be set by a tenant; remove it from this ComputePlane object", joinPath(fixed)))
			}
			break
		}
	}
	roles := nodeGroupProblems(k.Values, "spec")
	for _, f := range slices.Sorted(maps.Keys(roles)) {
		if !reportedAt(reported, f) {
			reported[f] = true
			problems = append(problems, api.Errorf(k.Ref, k.Origin, f, "%s", roles[f]))
		}
	}
	// Operator-only whatever the schema; a path the operator fixed is
	// reported as such above, once.
	for _, op := range operatorOnlyProblems(p.admission, k) {
		if !reportedAt(reported, op.Field) {
			reported[op.Field] = true
			problems = append(problems, op)
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	merged := yamlnode.CopyValue(k.Values)
	mergeInto(merged, yamlnode.CopyValue(p.fixed))
	if msg := ingressNodesProblem(merged); msg != "" {
		field := "spec.nodeGroups"
		if _, set := k.Values["nodeGroups"]; !set {
			field = "spec.addons.ingressNginx.enabled"
		}
		return nil, api.Problems{api.Errorf(k.Ref, k.Origin, field, "%s", msg)}
	}
	return merged, nil
}

// reportedAt reports whether field, or a field above it, was reported.
func reportedAt(reported map[string]bool, field string) bool {
	for f := field; ; {
		if reported[f] {
			return true
		}
		i := strings.LastIndexAny(f, ".[")
		if i <= 0 {
			return false
		}
		f = f[:i]
	}
}

// IngressRole is the node role that apps/kubernetes schedules the
// ingress-nginx controller onto.
const IngressRole = "ingress-nginx"

// ingressNodesProblem checks merged values: where node groups are given and
// the ingress addon is on, one group must carry the ingress-nginx role and
// be allowed at least one node, or the controller never schedules. Node
// groups replace the chart's default group (which has the role), so an empty
// or absent nodeGroups is fine. An absent maxReplicas is the chart's default,
// 10.
func ingressNodesProblem(values map[string]any) string {
	groups, _ := valueAt(values, "nodeGroups").(map[string]any)
	if len(groups) == 0 || valueAt(values, "addons", "ingressNginx", "enabled") != true {
		return ""
	}
	names := make([]string, 0, len(groups))
	for name, g := range groups {
		names = append(names, name)
		group, _ := g.(map[string]any)
		roles, _ := group["roles"].([]any)
		if !slices.Contains(roles, any(IngressRole)) {
			continue
		}
		switch n := group["maxReplicas"].(type) {
		case nil:
			return ""
		case int:
			if n >= 1 {
				return ""
			}
		case int64:
			if n >= 1 {
				return ""
			}
		case uint64:
			return ""
		case float64:
			if n >= 1 {
				return ""
			}
		}
	}
	slices.Sort(names)
	return fmt.Sprintf("the ingress-nginx addon is on and its controller runs only on nodes with the %s role, but no node group (%s) has roles: [%s] with maxReplicas of at least 1; add the role to a group that can have nodes",
		IngressRole, strings.Join(names, ", "), IngressRole)
}

// RenderClusterRelease builds the HelmRelease of a tenant's ComputePlane cluster
// (delivery: Direct): the apps/kubernetes chart from the re-sourced
// ExternalArtifact, under the fixed release name that routed apps depend on.
func RenderClusterRelease(f *fleet.Fleet, plan *ClusterPlan, t *fleet.Tenant) (Object, api.Problems) {
	values, problems := plan.Values(t)
	if len(problems) > 0 {
		return Object{}, problems
	}
	release := wire.DirectClusterRelease
	labels := map[string]string{wire.ComputePlaneLabel: "true"}
	if shardLabelRendered(f, wire.ShardingTenants) {
		labels[wire.ShardingLabel] = wire.ShardingTenants
	}
	hr := helmv2.HelmRelease{
		TypeMeta: metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        release,
			Namespace:   t.Namespace,
			Labels:      managedLabels(labels),
			Annotations: map[string]string{wire.PruneAnnotation: wire.PruneDisabled},
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
			ValuesFrom: []helmv2.ValuesReference{{Kind: "Secret", Name: wire.ValuesSecret}},
			// helm-controller impersonates the tenant's installer for the
			// whole install, hooks included (RenderInstaller).
			ServiceAccountName: fleet.InstallerAccount,
			PostRenderers:      clusterPostRenderers(release, t.Namespace),
		},
	}
	n, err := TypedNode(&hr)
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

// clusterPostRenderers remove the chart's grant of the cluster's
// super-admin kubeconfig to the tenant's users (DashboardCredentialPatch),
// and give the chart's two cluster-scoped objects that it
// names by the release alone (ClusterRole <release>-kcsi and
// ClusterRoleBinding <release>-kcsi-binding, templates/csi at Cozystack
// 3c780acd) the namespace too, as its other cluster-scoped objects have:
// every tenant's cluster is released as computeplane, and Helm refuses to
// take over an object another namespace's release owns, so without this
// only the first tenant's cluster would install.
func clusterPostRenderers(release, namespace string) []helmv2.PostRenderer {
	roles, bindings := installerClusterNames(release, namespace)
	kcsi, kcsiBinding := roles[1], bindings[1]
	replace := func(ops ...[2]string) string {
		text := ""
		for _, op := range ops {
			text += fmt.Sprintf("- op: replace\n  path: %s\n  value: %s\n", op[0], op[1])
		}
		return text
	}
	return []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Patches: []kustomize.Patch{
		{
			Target: &kustomize.Selector{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Name: DashboardRole(release)},
			Patch:  DashboardCredentialPatch(release),
		},
		{
			Target: &kustomize.Selector{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole", Name: release + "-kcsi"},
			Patch:  replace([2]string{"/metadata/name", kcsi}),
		},
		{
			Target: &kustomize.Selector{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding", Name: release + "-kcsi-binding"},
			Patch:  replace([2]string{"/metadata/name", kcsiBinding}, [2]string{"/roleRef/name", kcsi}),
		},
	}}}}
}

// DashboardRole is the chart's Role <release>-dashboard-resources
// (templates/dashboard-resourcemap.yaml at Cozystack 3c780acd), bound to
// the tenant's use, admin and super-admin groups and their ancestors'. It
// lets the dashboard show the cluster's objects; its second rule reads the
// cluster's super-admin kubeconfig.
func DashboardRole(release string) string { return release + "-dashboard-resources" }

// DashboardCredentialPatch removes the dashboard Role's rule on the
// Secret <release>-admin-kubeconfig: with it every user of the tenant
// could read the super-admin kubeconfig of the cluster that the design
// keeps from the tenant. The patch tests the rule before removing it, so a
// chart that moves or changes the rule fails to install (the patch fails,
// and helm-controller says so) instead of leaking it again. The posture
// review reads a cluster release whose post-renderers carry it, to the
// letter, as one whose credentials are withheld from the tenant.
func DashboardCredentialPatch(release string) string {
	return fmt.Sprintf(`- op: test
  path: /rules/1/resources
  value: [secrets]
- op: test
  path: /rules/1/resourceNames
  value: [%s]
- op: remove
  path: /rules/1
`, fleet.KubeconfigSecret(release))
}

// tenantObject wraps an object generated for a tenant's ComputePlane: its
// cluster or the cluster's hardening (Object.Cluster).
func tenantObject(t *fleet.Tenant, n *yaml.Node, apiVersion, kind, name string) Object {
	o := Object{Body: NodeBody(n), APIVersion: apiVersion, Kind: kind, Namespace: t.Namespace, Name: name, Generated: true, Tenant: t.Namespace, Cluster: true}
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
	return walkLeaves(v, prefix, func([]string) bool { return false })
}

// fixedLeafPaths lists the paths the fixed values own. Besides lists, two
// kinds of mappings are owned whole: nodeGroups, whose groups the chart takes
// as the complete set (a tenant adding a group to the operator's would change
// the cluster's shape), and an addon's valuesOverride, a free-form values
// tree of another chart in which any added key can change the addon's
// posture.
func fixedLeafPaths(v map[string]any, prefix []string) [][]string {
	return walkLeaves(v, prefix, func(p []string) bool {
		return (len(p) == 1 && p[0] == "nodeGroups") || p[len(p)-1] == "valuesOverride"
	})
}

func walkLeaves(v map[string]any, prefix []string, whole func([]string) bool) [][]string {
	var out [][]string
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := append(slices.Clone(prefix), k)
		if m, ok := v[k].(map[string]any); ok && len(m) > 0 && !whole(p) {
			out = append(out, walkLeaves(m, p, whole)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// joinPath writes a values path: dotted, with a key that would make the
// dotted form ambiguous or hard to read (empty, or holding '.', '/', '[',
// ']', a quote or white space) in brackets, as in a[app.kubernetes.io/name].
func joinPath(path []string) string {
	out := ""
	for _, k := range path {
		switch {
		case k == "" || strings.ContainsAny(k, "./[]\"' \t\r\n"):
			out += "[" + k + "]"
		case out == "":
			out = k
		default:
			out += "." + k
		}
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
