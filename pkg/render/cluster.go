package render

import (
	"fmt"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

const (
	clusterInterval = 5 * time.Minute
	clusterTimeout  = 30 * time.Minute
)

// RenderClusterRelease builds the HelmRelease of a tenant's ComputePlane cluster
// (delivery: Direct): the apps/kubernetes chart from the re-sourced
// ExternalArtifact, under the fixed release name that routed apps depend on.
func RenderClusterRelease(f *model.Fleet, t *model.Tenant) (Object, error) {
	values := f.Cluster.Values(t.Knobs)
	release := wire.DirectClusterRelease
	labels := map[string]string{wire.ComputePlaneLabel: "true"}
	if f.Cluster.Split() {
		labels[wire.ClusterChartLabel] = wire.ClusterChartSplitPools
	}
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
			ServiceAccountName: model.InstallerAccount,
			PostRenderers:      clusterPostRenderers(release, t.Namespace, pinnedGroups(f, t)),
		},
	}
	n, err := TypedNode(&hr)
	if err != nil {
		return Object{}, fmt.Errorf("failed to render the cluster of %s: %w", t, err)
	}
	vn, err := yamlnode.FromValue(values)
	if err != nil {
		return Object{}, fmt.Errorf("failed to render the values of the cluster of %s: %w", t, err)
	}
	yamlnode.SetKey(yamlnode.Get(n, "spec"), "values", vn)
	return keptObject(tenantObject(t, n, hr.APIVersion, hr.Kind, hr.Name)), nil
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
//
// Under poolMigration: Pin (pinned names the node groups) the worker
// objects of each group also carry helm.sh/resource-policy: keep
// (workerPinPatches).
func clusterPostRenderers(release, namespace string, pinned []string) []helmv2.PostRenderer {
	roles, bindings := installerClusterNames(release, namespace)
	kcsi, kcsiBinding := roles[1], bindings[1]
	replace := func(ops ...[2]string) string {
		text := ""
		for _, op := range ops {
			text += fmt.Sprintf("- op: replace\n  path: %s\n  value: %s\n", op[0], op[1])
		}
		return text
	}
	patches := []kustomize.Patch{
		{
			Target: &kustomize.Selector{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Name: model.DashboardRole(release)},
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
	}
	if len(pinned) > 0 {
		patches = append(patches, workerPinPatches(release, pinned)...)
	}
	return []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Patches: patches}}}
}

// KeepAnnotation is Helm's resource policy that leaves an object in place
// when a release's new manifest no longer holds it.
const KeepAnnotation = "helm.sh/resource-policy"

// workerPinPatches annotate the worker objects of the Combined chart
// (templates/cluster.yaml at Cozystack 3c780acd) with
// helm.sh/resource-policy: keep, for the move to the split chart: every
// MachineDeployment, MachineHealthCheck and KubevirtMachineTemplate of the
// release (the chart makes them for the node groups only, the older
// KubevirtMachineTemplates a MachineSet still references among them) and
// the WorkloadMonitor <release>-<group> of each group. The split chart
// renders none of them; Helm then deletes what the previous manifest held
// unless the live object carries the annotation, and the split chart
// refuses to render while a MachineDeployment of its cluster is neither
// pinned so nor a pool release's. An annotation changes no worker's spec:
// no VM is rolled, and the KubevirtMachineTemplates keep their
// content-hash names.
func workerPinPatches(release string, groups []string) []kustomize.Patch {
	pin := func(apiVersion, kind string) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n  name: pinned\n  annotations:\n    %s: keep\n", apiVersion, kind, KeepAnnotation)
	}
	names := make([]string, len(groups))
	for i, g := range groups {
		names[i] = release + "-" + g
	}
	return []kustomize.Patch{
		{Target: &kustomize.Selector{Group: "cluster.x-k8s.io", Kind: "MachineDeployment"}, Patch: pin("cluster.x-k8s.io/v1beta1", "MachineDeployment")},
		{Target: &kustomize.Selector{Group: "cluster.x-k8s.io", Kind: "MachineHealthCheck"}, Patch: pin("cluster.x-k8s.io/v1beta1", "MachineHealthCheck")},
		{Target: &kustomize.Selector{Group: "infrastructure.cluster.x-k8s.io", Kind: "KubevirtMachineTemplate"}, Patch: pin("infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate")},
		{Target: &kustomize.Selector{Group: "cozystack.io", Kind: "WorkloadMonitor", Name: "^(" + strings.Join(names, "|") + ")$"}, Patch: pin("cozystack.io/v1alpha1", "WorkloadMonitor")},
	}
}

// pinnedGroups are the node groups whose worker objects the cluster
// release of t pins (poolMigration: Pin), nil otherwise.
func pinnedGroups(f *model.Fleet, t *model.Tenant) []string {
	if f.Cluster == nil || !f.Cluster.PinsWorkers() {
		return nil
	}
	var out []string
	for _, p := range f.Cluster.Pools(t.Knobs) {
		out = append(out, p.Name)
	}
	return out
}

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
`, model.KubeconfigSecret(release))
}

// keptObject marks o Kept: it carries wire.PruneAnnotation, as the cluster
// and its hardening do (Flux keeps a live ComputePlane).
func keptObject(o Object) Object {
	o.Kept = true
	return o
}

// tenantObject wraps an object generated for a tenant's ComputePlane: its
// cluster or the cluster's hardening (Object.Cluster).
func tenantObject(t *model.Tenant, n *yaml.Node, apiVersion, kind, name string) Object {
	o := Object{Body: NodeBody(n), APIVersion: apiVersion, Kind: kind, Namespace: t.Namespace, Name: name, Generated: true, Tenant: t.Namespace, Cluster: true}
	if t.Object != nil {
		o.From, o.Origin = t.Object.Ref, t.Object.Origin
	} else {
		o.From = api.ObjectRef{APIVersion: api.AppsAPIVersion, Kind: api.TenantKind, Namespace: model.RootNamespace, Name: "root"}
	}
	return o
}
