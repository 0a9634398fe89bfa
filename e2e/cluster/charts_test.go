package cluster

import (
	"testing"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// The stand-in charts. The real Cozystack charts need KubeVirt, Kamaji and
// the platform's operators, which cannot run here; each stand-in renders one
// ConfigMap named after the release in the release's namespace, holding the
// namespace and the values Helm merged (toJson .Values), which is what the
// tests read to know where a release landed and with what.

const standInConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
data:
  namespace: {{ .Release.Namespace | quote }}
  values: {{ toJson .Values | quote }}
`

// appChart is the stand-in of an app's chart, packed as source-controller
// packs a chart artifact: one top folder named after the chart.
func appChart(t *testing.T, name string) []byte {
	t.Helper()
	data, err := harness.Tarball(map[string][]byte{
		name + "/Chart.yaml":               []byte("apiVersion: v2\nname: " + name + "\nversion: 0.1.0\ntype: application\n"),
		name + "/templates/configmap.yaml": []byte(standInConfigMap),
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The stand-in of apps/kubernetes. Like the real chart it creates, in the
// cluster release's namespace, the in-cluster addon HelmRelease
// <release>-cilium, remote-applied through the <release>-admin-kubeconfig
// Secret that Kamaji writes once the tenant's API server is up, and only
// when the tenant has its etcd (_namespace.etcd of cozystack-values). Its
// ConfigMap also carries a string from cozy-lib, which only renders when
// source-watcher copied the library to charts/cozy-lib.
const standInClusterCilium = `{{- if .Values._namespace.etcd }}
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: {{ .Release.Name }}-cilium
  labels:
    cozystack.io/target-cluster-name: {{ .Release.Name }}
    sharding.fluxcd.io/key: tenants
spec:
  releaseName: cilium
  chartRef:
    kind: ExternalArtifact
    name: cozystack-kubernetes-application-kubevirt-kubernetes-cilium
    namespace: cozy-system
  kubeConfig:
    secretRef:
      name: {{ .Release.Name }}-admin-kubeconfig
      key: super-admin.svc
  targetNamespace: cozy-cilium
  storageNamespace: cozy-cilium
  interval: 5m
  timeout: 10m
  install:
    createNamespace: true
    strategy:
      name: RetryOnFailure
      retryInterval: 30s
    remediation:
      retries: -1
  upgrade:
    strategy:
      name: RetryOnFailure
      retryInterval: 30s
    remediation:
      retries: -1
{{- end }}
`

const standInClusterConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
data:
  namespace: {{ .Release.Namespace | quote }}
  values: {{ toJson .Values | quote }}
  cozyLib: {{ include "cozy-lib.standin" . | quote }}
`

// cozyLibMarker is what the stand-in cozy-lib's template renders.
const cozyLibMarker = "rendered by cozy-lib"

// packagesTree is the stand-in of the cozystack-packages OCI artifact: the
// apps/kubernetes and library/cozy-lib trees, and another app the copy rules
// must leave out.
func packagesTree() map[string][]byte {
	return map[string][]byte{
		"apps/kubernetes/Chart.yaml":               []byte("apiVersion: v2\nname: kubernetes\nversion: 0.0.0\ntype: application\n"),
		"apps/kubernetes/templates/configmap.yaml": []byte(standInClusterConfigMap),
		"apps/kubernetes/templates/cilium.yaml":    []byte(standInClusterCilium),
		"library/cozy-lib/Chart.yaml":              []byte("apiVersion: v2\nname: cozy-lib\nversion: 0.0.0\ntype: library\n"),
		"library/cozy-lib/templates/_standin.tpl":  []byte(`{{- define "cozy-lib.standin" -}}` + cozyLibMarker + `{{- end -}}` + "\n"),
		"apps/postgres/Chart.yaml":                 []byte("apiVersion: v2\nname: postgres\nversion: 0.0.0\n"),
		"apps/postgres/templates/configmap.yaml":   []byte(standInConfigMap),
	}
}
