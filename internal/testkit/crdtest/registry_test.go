package crdtest_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
)

var (
	sharedOnce     sync.Once
	sharedRegistry *crdtest.Registry
	sharedErr      error
)

// shared loads ../shared/crds once for all tests; it is read-only but for
// the skipped rules, which no test here reads from it.
func shared(t *testing.T) *crdtest.Registry {
	t.Helper()
	dir := filepath.Join(crdtest.SharedDir(t), "crds")
	sharedOnce.Do(func() { sharedRegistry, sharedErr = crdtest.Load(dir) })
	if sharedErr != nil {
		t.Fatalf("Load() error = %v", sharedErr)
	}
	return sharedRegistry
}

func object(t *testing.T, text string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatalf("failed to decode object: %v", err)
	}
	return obj
}

func TestValidateSharedKinds(t *testing.T) {
	r := shared(t)
	tests := []struct {
		name string
		obj  string
		want []crdtest.Violation
	}{{
		name: "HelmRelease from an ExternalArtifact",
		obj: `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: kubernetes-tenant-a
  namespace: tenant-a
  labels: {app.kubernetes.io/managed-by: computeplane-fn}
spec:
  interval: 5m
  chartRef: {kind: ExternalArtifact, name: kubernetes, namespace: cozy-system}
  install: {remediation: {retries: -1}}
  values:
    anything: {goes: [here]}
`,
	}, {
		name: "HelmRelease with an unknown field and a numeric interval",
		obj: `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kubernetes-tenant-a, namespace: tenant-a}
spec:
  interval: 5
  chartRef: {kind: GitRepository, name: kubernetes}
  releaseNme: typo
`,
		want: []crdtest.Violation{
			{Message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{Path: "spec.chartRef.kind", Message: `Unsupported value: "GitRepository": supported values: "OCIRepository", "HelmChart", "ExternalArtifact"`},
			{Path: "spec.interval", Message: `Invalid value: "integer": spec.interval in body must be of type string: "integer"`},
			{Path: "spec.releaseNme", Message: "unknown field"},
		},
	}, {
		name: "ArtifactGenerator",
		obj: `
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: tenant-apps, namespace: flux-system}
spec:
  sources:
  - {alias: charts, kind: OCIRepository, name: cozystack-charts}
  artifacts:
  - name: kubernetes
    copy:
    - {from: "@charts/apps/kubernetes/**", to: "@artifact/"}
`,
	}, {
		name: "ArtifactGenerator with a bad source kind, artifact name and missing copy",
		obj: `
apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: tenant-apps, namespace: flux-system}
spec:
  sources:
  - {alias: charts, kind: HelmRepository, name: cozystack-charts}
  artifacts:
  - name: Kubernetes_App
`,
		want: []crdtest.Violation{
			{Path: "spec.artifacts[0].copy", Message: "Required value"},
			{Path: "spec.artifacts[0].name", Message: `Invalid value: "Kubernetes_App": spec.artifacts[0].name in body should match '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$'`},
			{Path: "spec.sources[0].kind", Message: `Unsupported value: "HelmRepository": supported values: "Bucket", "GitRepository", "OCIRepository", "HelmChart", "ExternalArtifact"`},
		},
	}, {
		name: "CiliumNetworkPolicy",
		obj: `
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-dns, namespace: tenant-a}
spec:
  endpointSelector: {matchLabels: {app.kubernetes.io/name: web}}
  egress:
  - toEndpoints:
    - matchLabels: {k8s:io.kubernetes.pod.namespace: kube-system, k8s-app: kube-dns}
    toPorts:
    - ports: [{port: "53", protocol: UDP}]
      rules: {dns: [{matchPattern: "*"}]}
  - toFQDNs: [{matchName: api.example.com}]
`,
	}, {
		name: "CiliumNetworkPolicy without a selector, with a bad protocol and an ambiguous FQDN",
		obj: `
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: allow-dns, namespace: tenant-a}
spec:
  egress:
  - toPorts:
    - ports: [{port: "53", protocol: DNS}]
  - toFQDNs: [{matchName: api.example.com, matchPattern: "*.example.com"}]
`,
		want: []crdtest.Violation{
			{Path: "spec", Message: "must validate one and only one schema (oneOf). Found none valid"},
			{Path: "spec.egress[0].toPorts[0].ports[0].protocol", Message: `Unsupported value: "DNS": supported values: "TCP", "UDP", "SCTP", "VRRP", "IGMP", "ANY"`},
			{Path: "spec.egress[1].toFQDNs[0]", Message: "must validate one and only one schema (oneOf). Found 2 valid alternatives"},
			// kube-openapi adds the errors of the oneOf branch that came closest.
			{Path: "spec.endpointSelector", Message: "Required value"},
		},
	}, {
		name: "Kustomization",
		obj: `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: tenant-a, namespace: flux-system}
spec:
  interval: 10m
  prune: true
  path: ./tenants/tenant-a
  sourceRef: {kind: ExternalArtifact, name: tenants}
  postBuild:
    substitute: {cluster_name: tenant-a}
`,
	}, {
		name: "Kustomization missing prune, with a bad source kind and timeout",
		obj: `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: tenant-a, namespace: flux-system}
spec:
  interval: 10m
  timeout: 1 hour
  sourceRef: {kind: HelmRepository, name: tenants}
  postBuild:
    substitute: {replicas: 3}
`,
		want: []crdtest.Violation{
			{Message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{Path: "spec.postBuild.substitute.replicas", Message: `Invalid value: "integer": spec.postBuild.substitute.replicas in body must be of type string: "integer"`},
			{Path: "spec.prune", Message: "Required value"},
			{Path: "spec.sourceRef.kind", Message: `Unsupported value: "HelmRepository": supported values: "OCIRepository", "GitRepository", "Bucket", "ExternalArtifact"`},
			{Path: "spec.timeout", Message: `Invalid value: "1 hour": spec.timeout in body should match '^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$'`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Validate(object(t, tt.obj))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateKindAndMetadata(t *testing.T) {
	r := shared(t)
	tests := []struct {
		name string
		obj  string
		want []crdtest.Violation
	}{{
		name: "no apiVersion or kind",
		obj:  `metadata: {name: a}`,
		want: []crdtest.Violation{
			{Path: "apiVersion", Message: "is required"},
			{Path: "kind", Message: "is required"},
		},
	}, {
		name: "a kind without a definition",
		obj:  `{apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: b}}`,
		want: []crdtest.Violation{
			{Path: "kind", Message: `no CustomResourceDefinition for kind "ConfigMap" in group ""`},
		},
	}, {
		name: "a version the definition does not have",
		obj:  `{apiVersion: helm.toolkit.fluxcd.io/v2beta9, kind: HelmRelease, metadata: {name: a, namespace: b}}`,
		want: []crdtest.Violation{
			{Path: "apiVersion", Message: `version "v2beta9" is not defined by CustomResourceDefinition helmreleases.helm.toolkit.fluxcd.io`},
		},
	}, {
		name: "bad name, no namespace, bad labels and annotations",
		obj: `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: Tenant_A
  labels:
    -bad: ok
    example.com/tier: "a value that is far too long to be a label value because it has more than 63 characters"
    ok: "bad value!"
  annotations:
    a/b/c: x
    example.com/fine: "any text at all"
  owner: me
spec: {interval: 1m, prune: true, sourceRef: {kind: OCIRepository, name: a}}
`,
		want: []crdtest.Violation{
			// ValidateObjectMeta reports a bad key or value at the map, naming
			// the key in the message.
			{Path: "metadata.annotations", Message: "Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"},
			{Path: "metadata.labels", Message: "Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
			{Path: "metadata.labels", Message: "Invalid value: \"a value that is far too long to be a label value because it has more than 63 characters\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
			{Path: "metadata.labels", Message: "Invalid value: \"a value that is far too long to be a label value because it has more than 63 characters\": must be no more than 63 bytes"},
			{Path: "metadata.labels", Message: "Invalid value: \"bad value!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
			{Path: "metadata.name", Message: "Invalid value: \"Tenant_A\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"},
			{Path: "metadata.namespace", Message: "Required value"},
			{Path: "metadata.owner", Message: "unknown field"},
		},
	}, {
		name: "a namespace on a cluster-scoped kind, and no metadata name",
		obj:  `{apiVersion: cozystack.io/v1alpha1, kind: ApplicationDefinition, metadata: {namespace: tenant-a}}`,
		want: []crdtest.Violation{
			{Path: "metadata.name", Message: "Required value: name or generateName is required"},
			{Path: "metadata.namespace", Message: "Forbidden: not allowed on this type"},
		},
	}, {
		name: "a namespace that is not a DNS label",
		obj:  `{apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, metadata: {name: a, namespace: tenant.a}, spec: {interval: 1m, prune: true, sourceRef: {kind: OCIRepository, name: a}}}`,
		want: []crdtest.Violation{
			{Path: "metadata.namespace", Message: `Invalid value: "tenant.a": must not contain dots`},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Validate(object(t, tt.obj))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// widgetCRD is a small definition with a served and an unserved version.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer}}}
  - name: v1alpha1
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
`

func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoad(t *testing.T) {
	configMap := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
	r, err := crdtest.Load(writeDir(t, map[string]string{
		"widgets.yaml": "# two documents\n" + configMap + "---\n" + widgetCRD,
		"notes.txt":    "not read",
	}))
	if err != nil {
		t.Fatalf("Load() error = %v", err)
	}
	if diff := cmp.Diff([]string{"Widget.example.com"}, r.Kinds()); diff != "" {
		t.Errorf("Kinds() mismatch (-want +got):\n%s", diff)
	}
	got := r.Validate(object(t, `{apiVersion: example.com/v1alpha1, kind: Widget, metadata: {name: a, namespace: b}}`))
	want := []crdtest.Violation{{Path: "apiVersion", Message: `version "v1alpha1" is not served by CustomResourceDefinition widgets.example.com`}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
	}
	got = r.Validate(object(t, `{apiVersion: example.com/v1, kind: Widget, metadata: {name: a, namespace: b}, spec: {size: 1}}`))
	if len(got) != 0 {
		t.Errorf("Validate() = %v, want no violations", got)
	}
}

func TestLoadErrors(t *testing.T) {
	badSchema := strings.Replace(widgetCRD, "{type: integer}", "{type: int}", 1)
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{name: "no definitions", files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\n"}, want: "no CustomResourceDefinitions found"},
		{name: "one kind twice", files: map[string]string{"a.yaml": widgetCRD, "b.yaml": widgetCRD}, want: "kind Widget.example.com is defined by both"},
		{name: "a schema that does not compile", files: map[string]string{"a.yaml": badSchema}, want: `properties[size].type: Unsupported value: "int"`},
		{name: "not YAML", files: map[string]string{"a.yaml": "kind: [x"}, want: "failed to parse YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := crdtest.Load(writeDir(t, tt.files))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load() error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestCELRules: the x-kubernetes-validations rules of the CRDs are evaluated
// as the API server evaluates them, and left out, saying so, when the
// object's structure is already wrong.
func TestCELRules(t *testing.T) {
	r := shared(t)
	notChecked := crdtest.Violation{Message: "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"}
	tests := []struct {
		name string
		obj  string
		want []crdtest.Violation
	}{{
		name: "HelmRelease with both chart and chartRef, and a retry interval without RetryOnFailure",
		obj: `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: a, namespace: b}
spec:
  interval: 5m
  chart: {spec: {chart: a, sourceRef: {kind: HelmRepository, name: a}}}
  chartRef: {kind: ExternalArtifact, name: a}
  upgrade: {strategy: {name: RemediateOnFailure, retryInterval: 1m}}
`,
		want: []crdtest.Violation{
			{Path: "spec", Message: "Invalid value: either chart or chartRef must be set"},
			{Path: "spec.upgrade.strategy", Message: "Invalid value: .retryInterval can only be set when .name is 'RetryOnFailure'"},
		},
	}, {
		name: "HelmRelease with a kubeConfig of neither kind",
		obj: `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: a, namespace: b}
spec:
  interval: 5m
  chartRef: {kind: ExternalArtifact, name: a}
  kubeConfig: {}
`,
		want: []crdtest.Violation{
			{Path: "spec.kubeConfig", Message: "Invalid value: exactly one of spec.kubeConfig.configMapRef or spec.kubeConfig.secretRef must be specified"},
		},
	}, {
		name: "rules are not evaluated over a wrong structure",
		obj: `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: a, namespace: b}
spec:
  interval: 5m
  chart: {spec: {chart: a, sourceRef: {kind: HelmRepository, name: a}}}
  chartRef: {kind: ExternalArtifact}
`,
		want: []crdtest.Violation{
			notChecked,
			{Path: "spec.chartRef.name", Message: "Required value"},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Validate(object(t, tt.obj))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Validate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
