package model

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// PoolFields are the fields of a node group that reach its pool release on
// the SplitPools line: the pool's own shape, as Cozystack's ComputePlane
// module passes them to apps/kubernetes-nodes (its allowlist at 6a645043,
// the per-pool parameters of the chart's values schema). Everything else of
// the pool chart (cluster, clusterReleaseName, version, talos, images,
// osImage, _cluster, nameOverride) is the operator's or the platform's: a
// node group that sets another key is refused, never silently dropped.
var PoolFields = []string{
	"diskSize",
	"gpus",
	"instanceType",
	"kubelet",
	"logSerialConsole",
	"maxNodeProvisionTime",
	"maxReplicas",
	"maxUnhealthy",
	"minReplicas",
	"nodeStartupTimeout",
	"podCpuLimit",
	"podCpuRequest",
	"readyFalseTimeout",
	"readyUnknownTimeout",
	"resources",
	"roles",
	"storageClass",
}

// DefaultPool is the node group a ComputePlane gets on the SplitPools line
// when neither the operator nor the tenant names one: the pool the Combined
// chart made of an empty nodeGroups (md0, scaled from zero, with the
// ingress role, so that the pinned ingress addon has a node to run on).
const DefaultPool = "md0"

// defaultPoolValues are the fields of DefaultPool, those the Combined
// chart gives the md0 it makes of an empty nodeGroups (its
// kubernetes.nodeGroups helper at Cozystack 3c780acd) but its empty
// storageClass, which there falls back to the cluster's and here is left
// to the same fallback (poolValues).
func defaultPoolValues() map[string]any {
	return map[string]any{"minReplicas": 0, "maxReplicas": 10, "instanceType": "u1.medium", "diskSize": "20Gi", "roles": []any{IngressRole}}
}

// Pool is one worker pool of a ComputePlane on the SplitPools line: a
// release of apps/kubernetes-nodes.
type Pool struct {
	// Name is the node group's name, the pool's.
	Name string
	// Release is the pool's HelmRelease and Helm release name,
	// kubernetes-nodes-<cluster release>-<pool>.
	Release string
	// Values are the pool's fields (PoolFields) as the node group sets
	// them, with what it takes from the cluster's values (poolValues).
	Values map[string]any
}

// PoolRelease is the release name of pool name of the cluster released as
// cluster.
func PoolRelease(cluster, name string) string { return api.PoolReleasePrefix(cluster) + name }

// MaxPoolName is the longest node group name whose pool release, under the
// cluster release cluster, stays within Helm's release name limit.
func MaxPoolName(cluster string) int { return MaxReleaseName - len(api.PoolReleasePrefix(cluster)) }

// poolProblems returns, by field path below root, what keeps the node
// groups in values from being pool releases: a field that is not a pool's
// (PoolFields), and a name whose release would be longer than Helm allows.
// Helm caps a release name at 53 characters; the API server takes a longer
// HelmRelease name, which Flux then never installs.
func poolProblems(values map[string]any, root, cluster string) map[string]string {
	groups, _ := valueAt(values, "nodeGroups").(map[string]any)
	out := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		group := valuesPath(root, joinPath([]string{"nodeGroups", name}))
		if release := PoolRelease(cluster, name); len(release) > MaxReleaseName {
			out[group] = fmt.Sprintf("node group %q would be the pool release %q (%d characters), and Helm allows at most %d: name the group with at most %d characters",
				name, release, len(release), MaxReleaseName, MaxPoolName(cluster))
			continue
		}
		g, _ := groups[name].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(g)) {
			if !slices.Contains(PoolFields, key) {
				out[group+"."+joinPath([]string{key})] = fmt.Sprintf("%q is not a field of a worker pool: on the SplitPools line each node group is an apps/kubernetes-nodes release that takes only %s (the rest of that chart is the operator's or the platform's)",
					key, strings.Join(PoolFields, ", "))
			}
		}
	}
	return out
}

// Pools returns the worker pools of a cluster whose tenant set knobs k
// (nil: none) on the SplitPools line, sorted by name: one per node group
// of the merged values, or DefaultPool when there is none. Knobs that
// Check refuses never reach it; it cannot fail.
func (p *ClusterPlan) Pools(k *api.Knobs) []Pool {
	merged := p.merged(k)
	groups, _ := valueAt(merged, "nodeGroups").(map[string]any)
	if len(groups) == 0 {
		groups = map[string]any{DefaultPool: defaultPoolValues()}
	}
	out := make([]Pool, 0, len(groups))
	for _, name := range slices.Sorted(maps.Keys(groups)) {
		g, _ := groups[name].(map[string]any)
		out = append(out, Pool{Name: name, Release: PoolRelease(wire.DirectClusterRelease, name), Values: poolValues(merged, g)})
	}
	return out
}

// poolValues are the values of the pool of node group g of a cluster with
// the given values: the group's pool fields, and what the Combined chart
// took from the cluster's values for every group (as Cozystack's migration
// 56 carries it into a pool): the cluster's storageClass where the group
// sets none (or ""), nodeHealthCheck's maxUnhealthy and nodeStartupTimeout
// and its readyUnknownTimeout and readyFalseTimeout (which the Combined
// chart took for every group) where the group sets none,
// maxNodeProvisionTime, and the Kubernetes version, the Talos settings and
// the kubectl image, which the pool chart would otherwise take from its own
// defaults. So the pool chart renders the workers the Combined chart
// rendered (KubevirtMachineTemplates are named by a hash of their content:
// any difference would replace every worker of the group).
func poolValues(cluster, g map[string]any) map[string]any {
	values := map[string]any{}
	for _, f := range PoolFields {
		if v, ok := g[f]; ok {
			values[f] = yamlnode.CopyValue(v)
		}
	}
	if sc, _ := values["storageClass"].(string); sc == "" {
		delete(values, "storageClass")
		if sc, ok := cluster["storageClass"].(string); ok && sc != "" {
			values["storageClass"] = sc
		}
	}
	health, _ := cluster["nodeHealthCheck"].(map[string]any)
	for _, f := range []string{"maxUnhealthy", "nodeStartupTimeout", "readyUnknownTimeout", "readyFalseTimeout"} {
		if _, set := values[f]; !set && health[f] != nil {
			values[f] = yamlnode.CopyValue(health[f])
		}
	}
	for _, f := range []string{"maxNodeProvisionTime", "version", "talos"} {
		if _, set := values[f]; !set && cluster[f] != nil {
			values[f] = yamlnode.CopyValue(cluster[f])
		}
	}
	if kubectl := valueAt(cluster, "images", "kubectl"); kubectl != nil {
		values["images"] = map[string]any{"kubectl": yamlnode.CopyValue(kubectl)}
	}
	return values
}
