package render

import (
	"path"
	"strings"

	swv1 "github.com/fluxcd/source-watcher/api/v2/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

// Names of the re-sourced apps/kubernetes chart.
const (
	// SourceGeneratorName is the ArtifactGenerator this function emits.
	SourceGeneratorName = "computeplane-application"
	// ClusterArtifactName is the ExternalArtifact that source-watcher writes
	// from it and that every cluster HelmRelease's chartRef names.
	ClusterArtifactName = "cozystack-computeplane-application-kubevirt-kubernetes"
	// PoolArtifactName is the ExternalArtifact of the re-sourced
	// apps/kubernetes-nodes chart that every pool release names on the
	// SplitPools line (the name Cozystack's ComputePlane module gives it).
	PoolArtifactName = "cozystack-computeplane-application-kubevirt-kubernetes-nodes"
)

// RenderSource builds the ArtifactGenerator that re-sources the
// apps/kubernetes chart, with the cozy-lib library chart, as a source-only
// ExternalArtifact, the way the Cozystack operator does for a PackageSource
// component, and on the SplitPools line the apps/kubernetes-nodes chart of
// the worker pools the same way. The ExternalArtifacts themselves are
// written by source-watcher.
func RenderSource(f *model.Fleet) (Object, error) {
	src := f.Config.Source
	alias := src.Name
	base := strings.Trim(src.Path, "/")
	from := func(p string) string {
		return "@" + alias + "/" + path.Join(base, p) + "/**"
	}
	ag := swv1.ArtifactGenerator{
		TypeMeta: metav1.TypeMeta{APIVersion: swv1.GroupVersion.String(), Kind: swv1.ArtifactGeneratorKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      SourceGeneratorName,
			Namespace: PlatformNamespace,
			Labels:    managedLabels(nil),
		},
		Spec: swv1.ArtifactGeneratorSpec{
			Sources: []swv1.SourceReference{{Alias: alias, Kind: src.Kind, Name: src.Name, Namespace: src.Namespace}},
			OutputArtifacts: []swv1.OutputArtifact{{
				Name: ClusterArtifactName,
				Copy: []swv1.CopyOperation{
					{From: from("apps/kubernetes"), To: "@artifact/kubernetes/"},
					{From: from("library/cozy-lib"), To: "@artifact/kubernetes/charts/cozy-lib/"},
				},
			}},
		},
	}
	if f.Cluster != nil && f.Cluster.Split() {
		ag.Spec.OutputArtifacts = append(ag.Spec.OutputArtifacts, swv1.OutputArtifact{
			Name: PoolArtifactName,
			Copy: []swv1.CopyOperation{
				{From: from("apps/kubernetes-nodes"), To: "@artifact/kubernetes-nodes/"},
				{From: from("library/cozy-lib"), To: "@artifact/kubernetes-nodes/charts/cozy-lib/"},
			},
		})
	}
	n, err := TypedNode(&ag)
	if err != nil {
		return Object{}, err
	}
	return Object{
		Body: NodeBody(n), APIVersion: ag.APIVersion, Kind: ag.Kind, Namespace: ag.Namespace, Name: ag.Name,
		Platform: true, Generated: true, From: f.Config.Ref, Origin: f.Config.Origin,
	}, nil
}
