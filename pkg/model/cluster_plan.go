package model

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/knobs"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// ClusterPlan is what every cluster of a run shares: the operator-fixed values
// with the hardening wired in, the paths they fix, the compiled knob schema
// and the Pod Security configuration. The check stage builds it once per run
// (New) and checks every tenant's knobs against it (Check); rendering then
// merges them (Values), which cannot fail.
type ClusterPlan struct {
	fixed      map[string]any
	fixedPaths [][]string
	knobs      *knobs.Schema
	// admission is nil under podSecurity: privileged.
	admission *Admission
	// split: the SplitPools line, where node groups are pool releases
	// (Pools) and the cluster's values hold none.
	split bool
	// pin: poolMigration Pin, the cluster releases keep their worker
	// objects through the platform's upgrade to the split chart.
	pin bool
	// adopt: poolMigration Adopt, the pool releases adopt them.
	adopt bool
}

// NewClusterPlan compiles the knob schema and the fixed values of cfg, refusing a knob
// schema the API server would refuse, fixed values that would switch off
// or replace the Pod Security wiring, and fixed node groups that the chart
// cannot take.
func NewClusterPlan(cfg *api.Config) (*ClusterPlan, api.Problems) {
	knobSchema := cfg.Cluster.Knobs
	field := "spec.cluster.knobs"
	if knobSchema == nil {
		def, err := api.DefaultKnobSchema()
		if err != nil {
			return nil, api.Problems{api.Internal(fmt.Errorf("failed to decode the default knob schema: %w", err))}
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
	split := cfg.Platform.ClusterChart.Split()
	if split {
		pools := poolProblems(fixed, "spec.cluster.values", wire.DirectClusterRelease)
		for _, f := range slices.Sorted(maps.Keys(pools)) {
			problems = append(problems, api.Errorf(cfg.Ref, cfg.Origin, f, "%s", pools[f]))
		}
		if len(problems) > 0 {
			return nil, problems
		}
	}
	return &ClusterPlan{fixed: fixed, fixedPaths: fixedLeafPaths(fixed, nil), knobs: s, admission: admission,
		split: split, pin: cfg.Platform.PoolMigration == api.PoolMigrationPin,
		adopt: cfg.Platform.PoolMigration == api.PoolMigrationAdopt}, nil
}

// Split reports whether the run renders for the SplitPools line: each node
// group a pool release (Pools), none in the cluster's values.
func (p *ClusterPlan) Split() bool { return p.split }

// PinsWorkers reports whether the cluster releases pin their worker
// objects (poolMigration: Pin).
func (p *ClusterPlan) PinsWorkers() bool { return p.pin }

// AdoptsWorkers reports whether the pool releases adopt the workers that
// Pin kept (poolMigration: Adopt).
func (p *ClusterPlan) AdoptsWorkers() bool { return p.adopt }

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

// Check refuses what is wrong with a tenant's knobs (nil: the tenant set
// none): a knob outside the schema, one that touches a path the operator
// fixed, a top-level key starting with '_' (the platform's own values), or
// the enabled or valuesOverride of an addon whose namespace the cluster's
// Pod Security configuration exempts (OperatorOnlyAddons, whatever the knob
// schema says), each with its path; fixed values are never silently
// overridden. Node groups a tenant gives must leave the pinned ingress
// addon a node, and the names and strings of their groups that the chart
// writes unquoted must be names of their kinds (nodeGroupProblems).
func (p *ClusterPlan) Check(k *api.Knobs) api.Problems {
	if k == nil || len(k.Values) == 0 {
		return nil
	}
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
			field := valuesPath("spec", joinPath([]string{key}))
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
			field := valuesPath("spec", joinPath(path[:min(len(path), len(fixed))]))
			if !reported[field] {
				reported[field] = true
				problems = append(problems, api.Errorf(k.Ref, k.Origin, field,
					"is fixed by the operator (%s) and cannot be set by a tenant; remove it from this ComputePlane object", joinPath(fixed)))
			}
			break
		}
	}
	roles := nodeGroupProblems(k.Values, "spec")
	if p.split {
		maps.Copy(roles, poolProblems(k.Values, "spec", wire.DirectClusterRelease))
	}
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
		return problems
	}
	if msg := ingressNodesProblem(p.merged(k)); msg != "" {
		field := "spec.nodeGroups"
		if _, set := k.Values["nodeGroups"]; !set {
			field = "spec.addons.ingressNginx.enabled"
		}
		return api.Problems{api.Errorf(k.Ref, k.Origin, field, "%s", msg)}
	}
	return nil
}

// Values returns the values of a cluster whose tenant set knobs k (nil:
// none): the fixed values merged over a copy of the knobs, without
// nodeGroups on the SplitPools line (they are the pools' there, and the
// split chart would ignore them). Knobs that Check refuses never reach
// it; it cannot fail.
func (p *ClusterPlan) Values(k *api.Knobs) map[string]any {
	v := p.merged(k)
	if p.split {
		delete(v, "nodeGroups")
	}
	return v
}

// merged is the fixed values merged over a copy of the knobs.
func (p *ClusterPlan) merged(k *api.Knobs) map[string]any {
	if k == nil || len(k.Values) == 0 {
		return yamlnode.CopyValue(p.fixed)
	}
	merged := yamlnode.CopyValue(k.Values)
	mergeInto(merged, yamlnode.CopyValue(p.fixed))
	return merged
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

func valuesPath(root, path string) string {
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
