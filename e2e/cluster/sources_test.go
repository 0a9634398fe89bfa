package cluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

const (
	sourceV1        = "source.toolkit.fluxcd.io/v1"
	helmV2          = "helm.toolkit.fluxcd.io/v2"
	kustomizeV1     = "kustomize.toolkit.fluxcd.io/v1"
	generatorV1     = "source.extensions.fluxcd.io/v1beta1"
	cozySystem      = "cozy-system"
	clusterArtifact = "cozystack-computeplane-application-kubevirt-kubernetes"
	ciliumArtifact  = "cozystack-kubernetes-application-kubevirt-kubernetes-cilium"
)

// appCharts are the ExternalArtifacts of testdata/definitions.yaml.
var appCharts = map[string]string{
	"cozystack-jupyterhub-application-default-jupyterhub": "jupyterhub",
	"cozystack-n8n-application-default-n8n":               "n8n",
	"cozystack-postgres-application-default-postgres":     "postgres",
	"cozystack-redis-application-default-redis":           "redis",
	ciliumArtifact: "cilium",
}

// ensurePlatform plays what source-controller and the Cozystack platform
// provide: the OCIRepository cozystack-packages with its artifact (the
// stand-in apps/kubernetes and cozy-lib), and the apps' charts (and the
// cilium addon's) as ExternalArtifacts. Once per management cluster.
func (e *env) ensurePlatform(t *testing.T) {
	t.Helper()
	e.platform.Do(func() {
		e.publishPackages(t, packagesTree())
		for name, chart := range appCharts {
			ea := obj(sourceV1, "ExternalArtifact", cozySystem, name, map[string]any{"spec": map[string]any{}})
			e.setArtifact(t, ea, e.artifacts.Publish("externalartifact", cozySystem, name, "0.1.0", appChart(t, chart)))
		}
	})
}

// publishPackages serves files as the artifact of the OCIRepository
// cozystack-packages (the packages tree Cozystack publishes), which the
// ArtifactGenerator the function renders copies the cluster chart from.
func (e *env) publishPackages(t *testing.T, files map[string][]byte) {
	t.Helper()
	tar, err := harness.Tarball(files)
	if err != nil {
		t.Fatal(err)
	}
	repo := obj(sourceV1, "OCIRepository", cozySystem, "cozystack-packages", map[string]any{
		"spec": map[string]any{"url": "oci://127.0.0.1/cozystack/packages", "interval": "5m", "ref": map[string]any{"tag": "latest"}},
	})
	e.setArtifact(t, repo, e.artifacts.Publish("ocirepository", cozySystem, "cozystack-packages", "", tar))
}

// setArtifact applies a source object and writes its status as
// source-controller would.
func (e *env) setArtifact(t *testing.T, o *unstructured.Unstructured, art harness.Artifact) {
	t.Helper()
	got, _, err := e.admin.Apply(e.ctx, o, harness.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := obj(o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName(), map[string]any{"status": art.Status(got)})
	if _, _, err := e.admin.Apply(e.ctx, st, harness.ApplyOptions{Subresource: "status"}); err != nil {
		t.Fatal(err)
	}
}
