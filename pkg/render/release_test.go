package render_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

const definitions = `
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: kubernetes
  annotations:
    release.cozystack.io/helm-install-timeout: "20m"
    release.cozystack.io/helm-install-disable-wait: "TRUE"
spec:
  application: {kind: Kubernetes, plural: kuberneteses, singular: kubernetes, openAPISchema: "{}"}
  release:
    prefix: kubernetes-
    labels: {sharding.fluxcd.io/key: tenants, apps.cozystack.io-team: from-definition}
    chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-application-default-kubernetes, namespace: cozy-system}
---
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: tenant
  annotations:
    release.cozystack.io/helm-install-timeout: 15m
    release.cozystack.io/helm-upgrade-timeout: 1h30m
spec:
  application: {kind: Tenant, plural: tenants, singular: tenant, openAPISchema: "{}"}
  release:
    prefix: tenant-
    chartRef: {kind: ExternalArtifact, name: cozystack-tenant-application-default-tenant, namespace: cozy-system}
---
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: notebook
spec:
  application: {kind: Notebook, plural: notebooks, singular: notebook, openAPISchema: "{}"}
  release:
    prefix: nb-
    labels: {sharding.fluxcd.io/key: tenants}
    chartRef: {kind: ExternalArtifact, name: cozystack-notebook, namespace: cozy-system}
    healthCheckExprs:
    - {apiVersion: example.com/v1, kind: Lab, current: "status.ready"}
  placement: ComputePlane
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: acme, namespace: tenant-root}
spec: {computeplane: true}
`

// releaseOf renders the fleet with one extra app and returns the app's
// HelmRelease as JSON-like values.
func releaseOf(t *testing.T, delivery api.Delivery, editable bool, app string) map[string]any {
	t.Helper()
	objs, err := input.Decode([]byte(definitions+"---\n"+app), "inputs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &api.Config{Delivery: delivery, Cluster: api.ClusterConfig{Values: api.DefaultClusterValues(), PodSecurity: api.PodSecurityRestricted}}
	cfg.Routing.EditableThroughAPI = editable
	run, problems := pipeline.Run(pipeline.Options{Config: cfg, Items: objs})
	if len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	out := run.Objects
	appObj := objs[len(objs)-1]
	for _, o := range out {
		if o.Kind == "HelmRelease" && o.From == appObj.Ref() {
			v, err := yamlnode.ToValue(nodeOf(t, o), yamlnode.DefaultBudget)
			if err != nil {
				t.Fatal(err)
			}
			return v.(map[string]any)
		}
	}
	t.Fatalf("no HelmRelease for %s", appObj.Ref())
	return nil
}

func strategy() map[string]any {
	return map[string]any{"name": "RetryOnFailure", "retryInterval": "30s"}
}

// TestReleaseFieldForField states, for each case, the whole HelmRelease that
// cozystack-api v1.6 makes from the app (plus the managed-by label, less
// the definition's sharding.fluxcd.io/key: tenants, which
// spec.releases.shardLabel: Admission leaves to the admission policy), and for
// routed apps the routing, the security rule and Helm's client-side OpenAPI
// check turned off (docs/performance.md, "The helm side").
func TestReleaseFieldForField(t *testing.T) {
	tests := []struct {
		name     string
		delivery api.Delivery
		editable bool
		app      string
		want     map[string]any
	}{{
		name:     "management plane app with labels, annotations and timeouts",
		delivery: api.Direct,
		app: `apiVersion: apps.cozystack.io/v1alpha1
kind: Kubernetes
metadata:
  name: prod
  namespace: tenant-acme
  labels: {team: web, example.com/tier: gold}
  annotations: {owner: alice}
spec: {version: v1.33, nodeGroups: {md0: {minReplicas: 1}}}
`,
		want: map[string]any{
			"apiVersion": "helm.toolkit.fluxcd.io/v2",
			"kind":       "HelmRelease",
			"metadata": map[string]any{
				"name":      "kubernetes-prod",
				"namespace": "tenant-acme",
				"labels": map[string]any{
					"apps.cozystack.io-team":              "web", // the app's own label wins over the definition's
					"apps.cozystack.io-example.com/tier":  "gold",
					"apps.cozystack.io/application.kind":  "Kubernetes",
					"apps.cozystack.io/application.group": "apps.cozystack.io",
					"apps.cozystack.io/application.name":  "prod",
					"app.kubernetes.io/managed-by":        "computeplane-fn",
				},
				"annotations": map[string]any{"apps.cozystack.io-owner": "alice"},
			},
			"spec": map[string]any{
				"chartRef":   map[string]any{"kind": "ExternalArtifact", "name": "cozystack-kubernetes-application-default-kubernetes", "namespace": "cozy-system"},
				"interval":   "5m0s",
				"maxHistory": int64(5),
				"install":    map[string]any{"timeout": "20m0s", "strategy": strategy(), "disableWait": true},
				"upgrade":    map[string]any{"timeout": "20m0s", "strategy": strategy(), "disableWait": true},
				"valuesFrom": []any{map[string]any{"kind": "Secret", "name": "cozystack-values"}},
				"values":     map[string]any{"version": "v1.33", "nodeGroups": map[string]any{"md0": map[string]any{"minReplicas": int64(1)}}},
			},
		},
	}, {
		name:     "upgrade timeout overrides install timeout for upgrades only; no spec, no values",
		delivery: api.Direct,
		app:      "apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: other, namespace: tenant-root}\n",
		want:     nil, // Tenant objects are the tenant list, never converted
	}, {
		name:     "routed app, Direct delivery",
		delivery: api.Direct,
		app:      "apiVersion: apps.cozystack.io/v1alpha1\nkind: Notebook\nmetadata: {name: lab, namespace: tenant-acme, labels: {team: ml}}\nspec: {users: 3}\n",
		want: map[string]any{
			"apiVersion": "helm.toolkit.fluxcd.io/v2",
			"kind":       "HelmRelease",
			"metadata": map[string]any{
				"name":      "nb-lab",
				"namespace": "tenant-acme",
				"labels": map[string]any{
					"apps.cozystack.io-team":            "ml",
					"computeplane.dev/application.kind": "Notebook",
					"computeplane.dev/application.name": "lab",
					"app.kubernetes.io/managed-by":      "computeplane-fn",
				},
			},
			"spec": map[string]any{
				"chartRef":           map[string]any{"kind": "ExternalArtifact", "name": "cozystack-notebook", "namespace": "cozy-system"},
				"interval":           "5m0s",
				"maxHistory":         int64(5),
				"kubeConfig":         map[string]any{"secretRef": map[string]any{"name": "computeplane-admin-kubeconfig", "key": "super-admin.svc"}},
				"dependsOn":          []any{map[string]any{"name": "computeplane"}, map[string]any{"name": "computeplane-cilium"}, map[string]any{"name": "computeplane-baseline"}},
				"targetNamespace":    "tenant-acme",
				"releaseName":        "nb-lab",
				"install":            map[string]any{"timeout": "10m0s", "strategy": strategy(), "disableOpenAPIValidation": true},
				"serviceAccountName": "computeplane-apps",
				"storageNamespace":   "tenant-acme",
				"upgrade":            map[string]any{"timeout": "10m0s", "strategy": strategy(), "disableOpenAPIValidation": true},
				"healthCheckExprs":   []any{map[string]any{"apiVersion": "example.com/v1", "kind": "Lab", "current": "status.ready"}},
				"waitStrategy":       map[string]any{"name": "poller"},
				"valuesFrom":         []any{map[string]any{"kind": "Secret", "name": "cozystack-values"}},
				"values":             map[string]any{"users": int64(3)},
			},
		},
	}, {
		name:     "routed app, Platform delivery, editable through the API",
		delivery: api.Platform,
		editable: true,
		app:      "apiVersion: apps.cozystack.io/v1alpha1\nkind: Notebook\nmetadata: {name: lab, namespace: tenant-acme}\nspec: {}\n",
		want: map[string]any{
			"apiVersion": "helm.toolkit.fluxcd.io/v2",
			"kind":       "HelmRelease",
			"metadata": map[string]any{
				"name":      "nb-lab",
				"namespace": "tenant-acme",
				"labels": map[string]any{
					"apps.cozystack.io/application.kind":  "Notebook",
					"apps.cozystack.io/application.group": "apps.cozystack.io",
					"apps.cozystack.io/application.name":  "lab",
					"app.kubernetes.io/managed-by":        "computeplane-fn",
				},
			},
			"spec": map[string]any{
				"chartRef":           map[string]any{"kind": "ExternalArtifact", "name": "cozystack-notebook", "namespace": "cozy-system"},
				"interval":           "5m0s",
				"maxHistory":         int64(5),
				"kubeConfig":         map[string]any{"secretRef": map[string]any{"name": "computeplane-cluster-admin-kubeconfig", "key": "super-admin.svc"}},
				"dependsOn":          []any{map[string]any{"name": "computeplane-cluster"}, map[string]any{"name": "computeplane-cluster-cilium"}, map[string]any{"name": "computeplane-baseline"}},
				"targetNamespace":    "tenant-acme",
				"releaseName":        "nb-lab",
				"install":            map[string]any{"timeout": "10m0s", "strategy": strategy(), "disableOpenAPIValidation": true},
				"serviceAccountName": "computeplane-apps",
				"storageNamespace":   "tenant-acme",
				"upgrade":            map[string]any{"timeout": "10m0s", "strategy": strategy(), "disableOpenAPIValidation": true},
				"healthCheckExprs":   []any{map[string]any{"apiVersion": "example.com/v1", "kind": "Lab", "current": "status.ready"}},
				"waitStrategy":       map[string]any{"name": "poller"},
				"valuesFrom":         []any{map[string]any{"kind": "Secret", "name": "cozystack-values"}},
				"values":             map[string]any{},
			},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == nil {
				objs, _ := input.Decode([]byte(definitions+"---\n"+tc.app), "inputs.yaml")
				run, problems := pipeline.Run(pipeline.Options{Config: &api.Config{Delivery: tc.delivery, Cluster: api.ClusterConfig{Values: api.DefaultClusterValues()}}, Items: objs})
				if len(problems) > 0 {
					t.Fatal(problems)
				}
				out := run.Objects
				for _, o := range out {
					if o.Kind == "HelmRelease" && o.Name == "tenant-other" {
						t.Errorf("a Tenant object was converted into a HelmRelease")
					}
				}
				return
			}
			got := releaseOf(t, tc.delivery, tc.editable, tc.app)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("release differs (-want +got):\n%s", diff)
			}
		})
	}
}

// nodeOf returns an object's node tree.
func nodeOf(t testing.TB, o render.Object) *yaml.Node {
	t.Helper()
	n, err := o.Node()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
