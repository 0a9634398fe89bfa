package render

import (
	"slices"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// How the stream delivers the in-cluster baseline (docs/incluster.md, "In
// every mode"): the output of the kustomize generator, of the KRM function
// and of the standalone CLI has no folder for a Kustomization to read, so
// each tenant's baseline is a HelmRelease of the project's own chart,
// charts/computeplane-baseline, whose values are the objects
// (BaselineObjects) and whose template writes them as they are. The chart
// is read from an OCIRepository the render holds once per fleet
// (spec.baseline says where the chart is published).
const (
	// BaselineChartLayer is the media type of a Helm chart's content in an
	// OCI artifact: the layer source-controller hands helm-controller.
	BaselineChartLayer = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	// baselineNamespace is where the baseline release keeps its Helm
	// records inside the ComputePlane, and the namespace of the chart's
	// objects that name none (all of them name one): it exists in every
	// cluster before anything is installed.
	baselineNamespace = "kube-system"
	// baselineReleaseInterval is how often helm-controller checks the
	// baseline inside the cluster (the fleet's Kustomizations' default).
	baselineReleaseInterval = 10 * time.Minute
	// baselineSourceInterval is how often source-controller looks for a new
	// digest of the chart's tag.
	baselineSourceInterval = 1 * time.Hour
)

// RenderBaselineSource builds the OCIRepository computeplane-baseline that
// every baseline release reads the chart from: once per fleet, a platform
// object in spec.baseline.namespace, the chart's layer only.
func RenderBaselineSource(f *model.Fleet) ([]Object, error) {
	b := f.Config.Baseline
	repo := sourcev1.OCIRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.OCIRepositoryKind},
		ObjectMeta: metav1.ObjectMeta{Name: wire.BaselineRelease, Namespace: b.Namespace, Labels: managedLabels(nil)},
		Spec: sourcev1.OCIRepositorySpec{
			URL:       b.URL,
			Reference: &sourcev1.OCIRepositoryRef{Tag: b.Tag},
			LayerSelector: &sourcev1.OCILayerSelector{
				MediaType: BaselineChartLayer,
				Operation: sourcev1.OCILayerCopy,
			},
			Interval: metav1.Duration{Duration: baselineSourceInterval},
		},
	}
	return platformObjects(f, &repo)
}

// RenderBaselineRelease builds the stream's delivery of a tenant's
// in-cluster baseline: the HelmRelease computeplane-baseline in the tenant
// namespace, installed into the ComputePlane through the cluster's admin
// kubeconfig, with the objects of BaselineObjects as its values, byte for
// byte what the fleet folder's baseline applies. Like the folder's
// Kustomization it names no service account (inside a fresh cluster there
// is none to impersonate), and it waits for the cluster and its CNI addon,
// as routed releases do; routed releases wait for it (their dependsOn).
func RenderBaselineRelease(f *model.Fleet, t *model.Tenant) (Object, error) {
	objs, err := BaselineObjects(f, t)
	if err != nil {
		return Object{}, err
	}
	values, err := baselineValues(objs)
	if err != nil {
		return Object{}, err
	}
	cluster := f.ClusterRelease()
	hr := helmv2.HelmRelease{
		TypeMeta: metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      wire.BaselineRelease,
			Namespace: t.Namespace,
			Labels:    managedLabels(nil),
		},
		Spec: helmv2.HelmReleaseSpec{
			ChartRef: &helmv2.CrossNamespaceSourceReference{
				Kind: sourcev1.OCIRepositoryKind, Name: wire.BaselineRelease, Namespace: f.Config.Baseline.Namespace,
			},
			Interval: metav1.Duration{Duration: baselineReleaseInterval},
			KubeConfig: &meta.KubeConfigReference{
				SecretRef: &meta.SecretKeyReference{Name: model.KubeconfigSecret(cluster), Key: model.KubeconfigKey},
			},
			ReleaseName:      wire.BaselineRelease,
			TargetNamespace:  baselineNamespace,
			StorageNamespace: baselineNamespace,
			DependsOn:        []helmv2.DependencyReference{{Name: cluster}, {Name: model.ReadyAddonRelease(cluster)}},
			MaxHistory:       intPtr(5),
			Install:          &helmv2.Install{Remediation: &helmv2.InstallRemediation{Retries: -1}},
			Upgrade:          &helmv2.Upgrade{Remediation: &helmv2.UpgradeRemediation{Retries: -1}},
		},
	}
	n, err := TypedNode(&hr)
	if err != nil {
		return Object{}, err
	}
	// The values are set on the node, not on hr.Spec.Values: going through
	// JSON (each object's node to JSON, the list to JSON, the release to
	// JSON and back to nodes) was 0.72 s of the 5.9 s of CPU of a
	// 1,000-tenant render (500 baselines), more than writing them.
	insertSorted(yamlnode.Get(n, "spec"), "values", values)
	o := tenantObject(t, n, hr.APIVersion, hr.Kind, hr.Name)
	return o, nil
}

// baselineValues is the baseline release's values: {"objects": [...]}, each
// object's node as BaselineObjects built it (TypedNode), which is what
// a round trip of them through JSON into spec.values would give: their keys
// are sorted and their scalars tagged as FromJSON makes them already. The
// objects' nodes become part of the values; objs must not be used after.
func baselineValues(objs []Object) (*yaml.Node, error) {
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: yamlnode.TagSeq, Content: make([]*yaml.Node, 0, len(objs))}
	for _, o := range objs {
		n, err := o.Node()
		if err != nil {
			return nil, err
		}
		list.Content = append(list.Content, n)
	}
	return yamlnode.Map("objects", list), nil
}

// insertSorted adds key to mapping m, whose keys are sorted (TypedNode's),
// at its place in that order.
func insertSorted(m *yaml.Node, key string, v *yaml.Node) {
	i := 0
	for i < len(m.Content) && m.Content[i].Value < key {
		i += 2
	}
	m.Content = slices.Insert(m.Content, i, yamlnode.String(key), v)
}

func intPtr(i int) *int { return &i }
