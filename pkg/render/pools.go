package render

import (
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// PoolLabel names, on a pool release, the node group it makes: the posture
// review reads a tenant's node groups from the releases that carry it.
const PoolLabel = wire.PoolLabel

// As Cozystack's ComputePlane module releases a pool (and cozystack-api a
// KubernetesNodes app): a retry every 30 s for 15 min, without waiting.
const (
	poolActionTimeout = 15 * time.Minute
	poolRetryInterval = 30 * time.Second
	poolMaxHistory    = 5
)

// RenderPoolReleases builds the worker pools of a tenant's ComputePlane on
// the SplitPools line: one HelmRelease of apps/kubernetes-nodes per node
// group (model.ClusterPlan.Pools), in the tenant namespace, named and
// released as kubernetes-nodes-<cluster release>-<pool> (the chart derives
// the pool's name from its release name), from the re-sourced
// ExternalArtifact PoolArtifactName. Its values attach it to the cluster:
// cluster (which the chart's release name check reads) and
// clusterReleaseName (the cluster's release, computeplane, which is not
// kubernetes-<cluster>), then the pool's own fields. Like the cluster,
// a pool is installed by the tenant's installer and kept when it leaves
// Git (deleting a release would delete its workers); it waits for the
// cluster's release.
//
// A pool carries no apps.cozystack.io/application.* label: cozystack-api
// would show it to the tenant as a KubernetesNodes app and rebuild it from
// the tenant's edits, dropping clusterReleaseName.
func RenderPoolReleases(f *model.Fleet, t *model.Tenant) ([]Object, error) {
	cluster := wire.DirectClusterRelease
	var out []Object
	for _, pool := range f.Cluster.Pools(t.Knobs) {
		// Not wire.ComputePlaneLabel: that one marks the cluster's release.
		labels := map[string]string{PoolLabel: pool.Name}
		if shardLabelRendered(f, wire.ShardingTenants) {
			labels[wire.ShardingLabel] = wire.ShardingTenants
		}
		hr := helmv2.HelmRelease{
			TypeMeta: metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
			ObjectMeta: metav1.ObjectMeta{
				Name:        pool.Release,
				Namespace:   t.Namespace,
				Labels:      managedLabels(labels),
				Annotations: map[string]string{wire.PruneAnnotation: wire.PruneDisabled},
			},
			Spec: helmv2.HelmReleaseSpec{
				ReleaseName: pool.Release,
				ChartRef: &helmv2.CrossNamespaceSourceReference{
					Kind:      "ExternalArtifact",
					Name:      PoolArtifactName,
					Namespace: PlatformNamespace,
				},
				Interval:   metav1.Duration{Duration: clusterInterval},
				MaxHistory: ptr(poolMaxHistory),
				DependsOn:  []helmv2.DependencyReference{{Name: cluster}},
				Install: &helmv2.Install{
					Timeout:     &metav1.Duration{Duration: poolActionTimeout},
					DisableWait: true,
					Strategy:    &helmv2.InstallStrategy{Name: string(helmv2.ActionStrategyRetryOnFailure), RetryInterval: &metav1.Duration{Duration: poolRetryInterval}},
				},
				Upgrade: &helmv2.Upgrade{
					Timeout:     &metav1.Duration{Duration: poolActionTimeout},
					DisableWait: true,
					Strategy:    &helmv2.UpgradeStrategy{Name: string(helmv2.ActionStrategyRetryOnFailure), RetryInterval: &metav1.Duration{Duration: poolRetryInterval}},
				},
				Values:             &apiextensionsv1.JSON{Raw: []byte("{}")},
				ValuesFrom:         []helmv2.ValuesReference{{Kind: "Secret", Name: wire.ValuesSecret}},
				ServiceAccountName: model.InstallerAccount,
			},
		}
		n, err := TypedNode(&hr)
		if err != nil {
			return nil, fmt.Errorf("failed to render pool %s of the cluster of %s: %w", pool.Name, t, err)
		}
		values := map[string]any{"cluster": cluster, "clusterReleaseName": cluster}
		for k, v := range pool.Values {
			values[k] = v
		}
		vn, err := yamlnode.FromValue(values)
		if err != nil {
			return nil, fmt.Errorf("failed to render the values of pool %s of the cluster of %s: %w", pool.Name, t, err)
		}
		yamlnode.SetKey(yamlnode.Get(n, "spec"), "values", vn)
		out = append(out, keptObject(tenantObject(t, n, hr.APIVersion, hr.Kind, hr.Name)))
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

// Helm's ownership annotations and the Flux annotation of the adoption
// objects.
const (
	helmReleaseNameAnnotation      = "meta.helm.sh/release-name"
	helmReleaseNamespaceAnnotation = "meta.helm.sh/release-namespace"
	ssaAnnotation                  = "kustomize.toolkit.fluxcd.io/ssa"
	ssaMerge                       = "Merge"
	// machineDeploymentAPIVersion is the version apps/kubernetes and
	// apps/kubernetes-nodes write MachineDeployments in.
	machineDeploymentAPIVersion = "cluster.x-k8s.io/v1beta1"
)

// RenderPoolAdoptions builds, under poolMigration: Adopt, the hand-over of
// each pool's kept MachineDeployment to its pool release: the object
// <cluster>-<pool> with Helm's ownership annotations naming the pool
// release, and nothing else of it. apps/kubernetes-nodes refuses to render
// while its MachineDeployment is another release's (the Combined cluster
// release's, computeplane, whose annotation the platform's upgrade left
// in place), and helm-controller then takes over the pool's other objects
// itself (spec.install.disableTakeOwnership is off). The fleet applies it
// server-side and merges it (kustomize.toolkit.fluxcd.io/ssa: Merge: Flux
// takes over no field another manager owns, so it never removes the
// MachineDeployment's spec), keeps the resource policy of Pin, and never
// prunes it: the object is the platform's, the fleet only annotates it.
// A MachineDeployment that does not exist cannot be made of this (the API
// server refuses it without its spec): Adopt is for pools that Pin kept.
func RenderPoolAdoptions(f *model.Fleet, t *model.Tenant) ([]Object, error) {
	cluster := wire.DirectClusterRelease
	var out []Object
	for _, pool := range f.Cluster.Pools(t.Knobs) {
		name := cluster + "-" + pool.Name
		md := map[string]any{
			"apiVersion": machineDeploymentAPIVersion,
			"kind":       "MachineDeployment",
			"metadata": map[string]any{
				"name":      name,
				"namespace": t.Namespace,
				"labels":    toAny(managedLabels(nil)),
				"annotations": map[string]any{
					helmReleaseNameAnnotation:      pool.Release,
					helmReleaseNamespaceAnnotation: t.Namespace,
					KeepAnnotation:                 "keep",
					wire.PruneAnnotation:           wire.PruneDisabled,
					ssaAnnotation:                  ssaMerge,
				},
			},
		}
		n, err := yamlnode.FromValue(md)
		if err != nil {
			return nil, fmt.Errorf("failed to render the adoption of pool %s of the cluster of %s: %w", pool.Name, t, err)
		}
		out = append(out, keptObject(tenantObject(t, n, machineDeploymentAPIVersion, "MachineDeployment", name)))
	}
	return out, nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
