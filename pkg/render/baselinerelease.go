package render

import (
	"encoding/json"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
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
			Values:           &apiextensionsv1.JSON{Raw: values},
		},
	}
	n, err := TypedNode(&hr)
	if err != nil {
		return Object{}, err
	}
	o := tenantObject(t, n, hr.APIVersion, hr.Kind, hr.Name)
	return o, nil
}

// baselineValues is the baseline release's values: {"objects": [...]}, each
// object as BaselineObjects built it.
func baselineValues(objs []Object) ([]byte, error) {
	list := make([]json.RawMessage, 0, len(objs))
	for _, o := range objs {
		n, err := o.Node()
		if err != nil {
			return nil, err
		}
		data, err := yaml.NewRNode(n).MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("failed to encode baseline object %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
		list = append(list, data)
	}
	return json.Marshal(map[string]any{"objects": list})
}

func intPtr(i int) *int { return &i }
