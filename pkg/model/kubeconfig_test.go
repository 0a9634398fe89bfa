package model_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

func TestCheckKubeconfigReferences(t *testing.T) {
	for _, c := range []struct {
		name, object string
		want         []string // field: first words of the message
	}{
		{"a plain ConfigMap", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {kubeconfig: my-kubeconfig}", nil},
		{"a Kustomization with a kubeConfig", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: k}\nspec: {kubeConfig: {secretRef: {name: computeplane-admin-kubeconfig}}}",
			[]string{"spec.kubeConfig"}},
		{"a kubeConfig naming another Secret", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: h}\nspec: {kubeConfig: {configMapRef: {name: remote}}}",
			[]string{"spec.kubeConfig"}},
		{"a null kubeConfig", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: h}\nspec: {kubeConfig: null}", nil},
		{"a Secret named like one", "apiVersion: v1\nkind: Secret\nmetadata: {name: kubernetes-dev-admin-kubeconfig}", []string{"metadata.name"}},
		{"a volume", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, secret: {secretName: computeplane-admin-kubeconfig}}]}",
			[]string{"spec.volumes[0].secret.secretName"}},
		{"a label value", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {app.kubernetes.io/name: x-admin-kubeconfig}}",
			[]string{"metadata.labels[app.kubernetes.io/name]"}},
		{"an alias repeats one finding once", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: &s {b: c-admin-kubeconfig}\n  b: *s\n  c: *s",
			[]string{"data.a.b"}},
		{"the CAPI kubeconfig", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: h}\nspec: {valuesFrom: [{kind: Secret, name: computeplane-kubeconfig, valuesKey: value}]}",
			[]string{"spec.valuesFrom[0].name"}},
		{"the CA under Platform", "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: k}\nspec: {postBuild: {substituteFrom: [{kind: Secret, name: computeplane-cluster-ca}]}}",
			[]string{"spec.postBuild.substituteFrom[0].name"}},
		{"env and envFrom", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, envFrom: [{secretRef: {name: computeplane-talos-secrets}}], env: [{name: X, valueFrom: {secretKeyRef: {name: computeplane-datastore-config, key: k}}}]}]}",
			[]string{"spec.containers[0].envFrom[0].secretRef.name", "spec.containers[0].env[0].valueFrom.secretKeyRef.name"}},
		{"a worker's bootstrap data", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, secret: {secretName: computeplane-md0-8f7d9-x2x9k-bootstrap-data-userdata}}]}",
			[]string{"spec.volumes[0].secret.secretName"}},
		{"a post-renderer patch names it in its text", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: h}\nspec:\n  postRenderers:\n  - kustomize:\n      patches:\n      - patch: |\n          - op: add\n            path: /spec/template/spec/volumes/-\n            value: {name: k, secret: {secretName: computeplane-admin-kubeconfig}}\n",
			[]string{"spec.postRenderers[0].kustomize.patches[0].patch"}},
		{"a patch hides it behind an escape", "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: h}\nspec:\n  postRenderers:\n  - kustomize:\n      patches:\n      - patch: |\n          secretName: \"computeplane-\\x63a\"\n",
			[]string{"spec.postRenderers[0].kustomize.patches[0].patch"}},
		{"a binary scalar", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {volumes: [{name: v, secret: {secretName: !!binary Y29tcHV0ZXBsYW5lLWNh}}]}",
			[]string{"spec.volumes[0].secret.secretName"}},
		{"a script names it", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {run.sh: 'kubectl get secret computeplane-sa-certificate -o yaml'}",
			[]string{"data[run.sh]"}},
		{"words that only look alike", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: computeplane-cache}\ndata: {a: computeplane-ca.crt, b: my-computeplane-ca, c: computeplane-md0, d: computeplane-bootstrap-data, e: 'see computeplane.'}", nil},
	} {
		objs, err := input.Decode([]byte(c.object), "other.yaml")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range model.CheckKubeconfigReferences(objs[0]) {
			if p.File != "other.yaml" || p.Object.Kind == "" {
				t.Errorf("%s: problem without file or object: %+v", c.name, p)
			}
			got = append(got, p.Field)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
}
