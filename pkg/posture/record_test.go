package posture_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
	renderpkg "github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

func read(t *testing.T, doc string) posture.Record {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	r, err := posture.ReadDocument(&n)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// egressPolicy is a computeplane-egress policy of namespace ns under
// delivery Platform, with extra deny rules.
func egressPolicy(ns, rules string) string {
	return `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: computeplane-egress
  namespace: ` + ns + `
spec:
  endpointSelector:
    matchLabels:
      cluster.x-k8s.io/cluster-name: computeplane-cluster
  egressDeny:
  - toEntities: [kube-apiserver]
  - toEndpoints:
    - matchLabels:
        k8s:io.kubernetes.pod.namespace: ` + ns + `
      matchExpressions:
      - {key: kamaji.clastix.io/name, operator: NotIn, values: [computeplane-cluster]}
      - {key: apps.cozystack.io/application.kind, operator: NotIn, values: [Postgres]}
    - matchLabels:
        k8s:io.kubernetes.pod.namespace: ` + ns + `
        apps.cozystack.io/application.kind: Postgres
      matchExpressions:
      - {key: apps.cozystack.io/application.name, operator: NotIn, values: [notebooks]}
` + rules
}

// The contract with the egress renderer: ancestor ingress is denied by
// egressDeny toEndpoints selectors of cozystack.io/service: ingress in each
// ancestor's namespace.
func TestReadEgress(t *testing.T) {
	ingress := func(ns string) string {
		return "  - toEndpoints:\n    - matchLabels:\n        k8s:io.kubernetes.pod.namespace: " + ns + "\n        cozystack.io/service: ingress\n"
	}
	cases := []struct {
		name, ns, rules string
		reachable       []string
		ancestorIngress string
	}{
		{"every ancestor denied", "tenant-acme-lab", ingress("tenant-root") + ingress("tenant-acme"), []string{"Postgres/notebooks"}, "denied"},
		{"one ancestor allowed", "tenant-acme-lab", ingress("tenant-root"), []string{"Postgres/notebooks"}, "allowed"},
		{"no ingress rule", "tenant-acme", "", []string{"Postgres/notebooks"}, "allowed"},
		{"the root has no ancestors", "tenant-root", "", []string{"Postgres/notebooks"}, ""},
		{"a deny of some ports only is no deny", "tenant-acme", "  - toEndpoints:\n    - matchLabels: {cozystack.io/service: ingress}\n      matchExpressions: [{key: k8s:io.kubernetes.pod.namespace, operator: In, values: [tenant-root]}]\n    toPorts: [{ports: [{port: \"443\"}]}]\n", []string{"Postgres/notebooks"}, "allowed"},
		{"an In selector denies as well", "tenant-acme", "  - toEndpoints:\n    - matchLabels: {cozystack.io/service: ingress}\n      matchExpressions: [{key: k8s:io.kubernetes.pod.namespace, operator: In, values: [tenant-root]}]\n", []string{"Postgres/notebooks"}, "denied"},
		{"a broad deny covers the cut-out", "tenant-acme", "  - toEndpoints:\n    - matchLabels: {apps.cozystack.io/application.kind: Postgres}\n", nil, "allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := read(t, egressPolicy(tc.ns, tc.rules))
			if r.Kind != posture.KindEgress || !cmp.Equal(r.Reachable, tc.reachable) || r.AncestorIngress != tc.ancestorIngress {
				t.Errorf("got %s reachable %v ancestor ingress %q, want reachable %v ancestor ingress %q", r.Kind, r.Reachable, r.AncestorIngress, tc.reachable, tc.ancestorIngress)
			}
		})
	}
}

// guard is the policy as the function renders it, its identities in the
// annotation.
func guard(flux, platform string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: computeplane-guard
  annotations:
    computeplane.dev/guard-identities: '{"fluxIdentities": ` + flux + `, "platformIdentities": ` + platform + `}'
spec: {}
`
}

// guardOfVariables is the policy as the function rendered it before the
// annotation, its identities only in spec.variables.
func guardOfVariables(flux, platform string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: computeplane-guard
spec:
  variables:
  - name: fluxIdentities
    expression: '` + flux + `'
  - name: platformIdentities
    expression: '` + platform + `'
`
}

// The contract with the guard renderer: the guard is on when its policy is
// there; its identities are JSON arrays of strings in its annotation.
func TestGuard(t *testing.T) {
	const kc, capi = "system:serviceaccount:flux-system:kustomize-controller", "system:serviceaccount:cozy-cluster-api:capi-controller-manager"
	state := func(docs ...string) *posture.State {
		var recs []posture.Record
		for _, d := range docs {
			recs = append(recs, read(t, d))
		}
		return posture.Assemble(recs)
	}
	on := guard(`["`+kc+`"]`, `["`+capi+`"]`)
	cases := []struct {
		name     string
		old, new *posture.State
		want     []posture.Change
	}{
		{"unchanged", state(on), state(on), nil},
		{"turned off", state(on), state(), []posture.Change{{Change: posture.ChangeGuard, Subject: "computeplane-guard", From: "enabled", To: "disabled", Weakens: true, Cause: "spec.guard.enabled"}}},
		{"turned on", state(), state(on), []posture.Change{{Change: posture.ChangeGuard, Subject: "computeplane-guard", From: "disabled", To: "enabled", Cause: "spec.guard.enabled"}}},
		{"identities added and removed", state(on), state(guard(`["`+kc+`", "system:serviceaccount:ci:deployer"]`, `[]`)), []posture.Change{
			{Change: posture.ChangeGuard, Subject: "system:serviceaccount:ci:deployer", From: "absent", To: "present", Weakens: true, Role: wire.GuardFluxIdentitiesVariable, Cause: "spec.guard.fluxIdentities"},
			{Change: posture.ChangeGuard, Subject: capi, From: "present", To: "absent", Role: wire.GuardPlatformIdentitiesVariable, Cause: "spec.guard.platformIdentities"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, posture.Compare(tc.old, tc.new)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for name, doc := range map[string]string{
		"metadata.annotations.computeplane.dev/guard-identities": guard(`not json`, `[]`),
		"spec.variables[0].expression":                           guardOfVariables(`not json`, `[]`),
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			t.Fatal(err)
		}
		if _, err := posture.ReadDocument(&n); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("a guard whose identities are not JSON: %v, want an error naming %s", err, name)
		}
	}
}

// TestGuardOfOlderRenders: a fleet folder rendered before the identities
// moved to the annotation compares with today's render as unchanged.
func TestGuardOfOlderRenders(t *testing.T) {
	const kc, capi = "system:serviceaccount:flux-system:kustomize-controller", "system:serviceaccount:cozy-cluster-api:capi-controller-manager"
	old := posture.Assemble([]posture.Record{read(t, guardOfVariables(`["`+kc+`"]`, `["`+capi+`"]`))})
	now := posture.Assemble([]posture.Record{read(t, guard(`["`+kc+`"]`, `["`+capi+`"]`))})
	if diff := cmp.Diff([]posture.Change(nil), posture.Compare(old, now)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := posture.Compare(posture.Assemble(nil), now); len(got) != 1 {
		t.Errorf("the guard turned on: %d changes, want 1 (the control)", len(got))
	}
}

// Under delivery Platform the function renders no cluster: the egress
// policy shows the ComputePlane, which runs without Pod Security.
func TestPlatformTenant(t *testing.T) {
	routed := `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: jupyterhub-research
  namespace: tenant-acme
  labels: {computeplane.dev/application.kind: JupyterHub, computeplane.dev/application.name: research}
spec:
  kubeConfig: {secretRef: {name: computeplane-cluster-admin-kubeconfig, key: super-admin.svc}}
`
	for name, docs := range map[string][]string{
		"egress policy":   {egressPolicy("tenant-acme", "")},
		"routed releases": {routed},
	} {
		t.Run(name, func(t *testing.T) {
			var recs []posture.Record
			for _, d := range docs {
				recs = append(recs, read(t, d))
			}
			tenant := posture.Assemble(recs).Tenants["tenant-acme"]
			if tenant == nil || !tenant.ComputePlane || tenant.PodSecurity != posture.PodSecurityNone {
				t.Errorf("got %+v, want a ComputePlane without Pod Security", tenant)
			}
		})
	}
	old := posture.Assemble([]posture.Record{read(t, routed), read(t, egressPolicy("tenant-acme", ""))})
	new := posture.Assemble([]posture.Record{read(t, routed), read(t, strings.Replace(egressPolicy("tenant-acme", ""), "values: [notebooks]", "values: [notebooks, orders]", 1))})
	want := []posture.Change{{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeExposure, Subject: "Postgres/orders", From: "denied", To: "reachable", Weakens: true,
		Cause: "Postgres tenant-acme/orders (annotation computeplane.dev/reachable-from-computeplane)"}}
	if diff := cmp.Diff(want, posture.Compare(old, new)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestCredentials: a Direct cluster release withholds the ComputePlane's
// credentials from the tenant only with the dashboard Role's patch as the
// function renders it; a hand edit that drops or loosens it makes them
// readable, a weakening change.
func TestCredentials(t *testing.T) {
	cluster := func(patch string) string {
		doc := `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: computeplane
  namespace: tenant-acme
  labels: {internal.cozystack.io/computeplane: "true"}
spec:
  values: {}
`
		if patch == "" {
			return doc
		}
		quoted, err := json.Marshal(patch)
		if err != nil {
			t.Fatal(err)
		}
		return doc + "  postRenderers:\n  - kustomize:\n      patches:\n      - target: {group: rbac.authorization.k8s.io, version: v1, kind: Role, name: computeplane-dashboard-resources}\n        patch: " + string(quoted) + "\n"
	}
	state := func(doc string) *posture.State { return posture.Assemble([]posture.Record{read(t, doc)}) }
	withheld := state(cluster(renderpkg.DashboardCredentialPatch("computeplane")))
	if got := withheld.Tenants["tenant-acme"].Credentials; got != posture.CredentialsWithheld {
		t.Fatalf("with the function's patch: credentials %q, want %q", got, posture.CredentialsWithheld)
	}
	// The worker VMs' consoles are the platform's to close, whatever the
	// render (issue 40): stated for every tenant with a ComputePlane.
	if got := withheld.Tenants["tenant-acme"].WorkerConsoles; got != posture.WorkerConsolesOpen {
		t.Errorf("worker consoles %q, want %q", got, posture.WorkerConsolesOpen)
	}
	for name, doc := range map[string]string{
		"no post-renderer":     cluster(""),
		"the test ops dropped": cluster("- op: remove\n  path: /rules/1\n"),
	} {
		want := []posture.Change{{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeCredentials, Subject: "tenant-acme",
			From: posture.CredentialsWithheld, To: posture.CredentialsReadable, Weakens: true}}
		if diff := cmp.Diff(want, posture.Compare(withheld, state(doc))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// guardRouting is a policy whose routes annotation holds routes (a JSON
// list, as render.RenderGuard writes it).
func guardRouting(routes string) string {
	return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: computeplane-guard
  annotations:
    computeplane.dev/guard-identities: '{"fluxIdentities": ["flux"]}'
    computeplane.dev/guard-routes: '` + routes + `'
spec: {}
`
}

const (
	jupyterRouteJSON = `{"kind": "JupyterHub", "definition": "jupyterhub", "chartRef": {"kind": "ExternalArtifact", "name": "cozystack-jupyterhub", "namespace": "cozy-system"}}`
	n8nRouteJSON     = `{"kind": "N8N", "definition": "n8n", "chartRef": {"kind": "ExternalArtifact", "name": "cozystack-n8n", "namespace": "cozy-system"}}`
)

// TestRoutes: what the guard routes is read from the policy alone, so a
// definition that leaves the ComputePlane weakens with or without apps of
// its kind, and so does a routed definition's new chart.
func TestRoutes(t *testing.T) {
	state := func(docs ...string) *posture.State {
		var recs []posture.Record
		for _, d := range docs {
			recs = append(recs, read(t, d))
		}
		return posture.Assemble(recs)
	}
	both := guardRouting("[" + jupyterRouteJSON + ", " + n8nRouteJSON + "]")
	for _, tc := range []struct {
		name     string
		old, new *posture.State
		want     []posture.Change
	}{
		{"unchanged", state(both), state(both), nil},
		{"a definition leaves the ComputePlane, no app of its kind anywhere", state(both), state(guardRouting("[" + jupyterRouteJSON + "]")), []posture.Change{
			{Change: posture.ChangeDefinition, Subject: "N8N", From: "ComputePlane", To: "ManagementPlane", Weakens: true, Cause: "ApplicationDefinition n8n"},
		}},
		{"a definition is placed on the ComputePlane", state(guardRouting("[" + jupyterRouteJSON + "]")), state(both), []posture.Change{
			{Change: posture.ChangeDefinition, Subject: "N8N", From: "ManagementPlane", To: "ComputePlane", Cause: "ApplicationDefinition n8n"},
		}},
		{"a routed definition's chart changes", state(both), state(guardRouting("[" + jupyterRouteJSON + ", " + strings.Replace(n8nRouteJSON, `"cozystack-n8n"`, `"n8n-fork"`, 1) + "]")), []posture.Change{
			{Change: posture.ChangeDefinition, Subject: "N8N", From: "ExternalArtifact cozy-system/cozystack-n8n", To: "ExternalArtifact cozy-system/n8n-fork", Weakens: true, Cause: "ApplicationDefinition n8n"},
		}},
		{"the last routed definition leaves", state(guardRouting("[" + n8nRouteJSON + "]")), state(guardRouting("[]")), []posture.Change{
			{Change: posture.ChangeDefinition, Subject: "N8N", From: "ComputePlane", To: "ManagementPlane", Weakens: true, Cause: "ApplicationDefinition n8n"},
		}},
		// A policy rendered before the annotation states its kinds in its
		// variables, without the definitions' names.
		{"read from the variables of an older policy", state(`apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: computeplane-guard}
spec:
  variables:
  - {name: fluxIdentities, expression: '["flux"]'}
  - {name: computePlaneKinds, expression: '["JupyterHub","N8N"]'}
  - {name: computePlaneCharts, expression: '[{"kind":"ExternalArtifact","name":"a","namespace":"cozy-system"},{"kind":"ExternalArtifact","name":"b","namespace":"cozy-system"}]'}
`), state(guardRouting("[" + jupyterRouteJSON + "]")), []posture.Change{
			{Change: posture.ChangeDefinition, Subject: "N8N", From: "ComputePlane", To: "ManagementPlane", Weakens: true},
		}},
		// An older policy with its variables inlined states no routes this
		// package reads: nothing is compared rather than everything new.
		{"unknown on one side", state(guard(`["flux"]`, `[]`)), state(both), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := posture.Compare(tc.old, tc.new)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, c := range got {
				if posture.Sentence(c) == "" || posture.Why(c) == "" {
					t.Errorf("%+v has no words", c)
				}
			}
		})
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(guardRouting("not json")), &n); err != nil {
		t.Fatal(err)
	}
	if _, err := posture.ReadDocument(&n); err == nil || !strings.Contains(err.Error(), "metadata.annotations.computeplane.dev/guard-routes") {
		t.Errorf("a guard whose routes are not JSON: %v, want an error naming the annotation", err)
	}
}

// TestPools: on the SplitPools line a tenant's node groups are its pool
// releases, read and compared as the Combined line's nodeGroups are, in
// any order of the records.
func TestPools(t *testing.T) {
	cluster := func(groups string) string {
		return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: computeplane, namespace: tenant-acme, labels: {internal.cozystack.io/computeplane: "true"}}
spec: {values: {nodeGroups: ` + groups + `}}
`
	}
	pool := func(name, values string) string {
		return `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: kubernetes-nodes-computeplane-` + name + `, namespace: tenant-acme, labels: {` + wire.PoolLabel + `: ` + name + `}}
spec: {values: ` + values + `}
`
	}
	combined := posture.Assemble([]posture.Record{read(t, cluster(`{md0: {instanceType: u1.large, minReplicas: 1, maxReplicas: 3}, gpu: {instanceType: u1.xlarge, maxReplicas: 2, gpus: [{name: a}]}}`))})
	md0 := pool("md0", `{cluster: computeplane, clusterReleaseName: computeplane, instanceType: u1.large, minReplicas: 1, maxReplicas: 3}`)
	gpu := pool("gpu", `{cluster: computeplane, clusterReleaseName: computeplane, instanceType: u1.xlarge, maxReplicas: 2, gpus: [{name: a}]}`)
	splitCluster := `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: computeplane, namespace: tenant-acme, labels: {internal.cozystack.io/computeplane: "true"}}
spec: {values: {addons: {}}}
`
	for _, order := range [][]string{{splitCluster, md0, gpu}, {md0, gpu, splitCluster}} {
		var recs []posture.Record
		for _, d := range order {
			recs = append(recs, read(t, d))
		}
		split := posture.Assemble(recs)
		want := map[string]string{"md0": "u1.large 1-3 gpus=0", "gpu": "u1.xlarge 0-2 gpus=1"}
		if diff := cmp.Diff(want, split.Tenants["tenant-acme"].NodeGroups); diff != "" {
			t.Errorf("node groups of the pools (-want +got):\n%s", diff)
		}
		// The move from one line to the other changes no node group.
		if changes := posture.Compare(combined, split); len(changes) != 0 {
			t.Errorf("Combined to SplitPools with the same groups: %v", changes)
		}
	}
	// A pool that grows is a node group change, as on the Combined line.
	grown := posture.Assemble([]posture.Record{read(t, splitCluster), read(t, strings.Replace(md0, "maxReplicas: 3", "maxReplicas: 5", 1)), read(t, gpu)})
	want := []posture.Change{{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeNodeGroups, Subject: "md0", From: "u1.large 1-3 gpus=0", To: "u1.large 1-5 gpus=0"}}
	if diff := cmp.Diff(want, posture.Compare(combined, grown)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
