package render_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

const baselineConfig = `
apiVersion: fn.computeplane.dev/v1alpha1
kind: ComputePlaneGenerator
metadata: {name: fleet}
spec:
  fleet:
    sourceRef: {kind: GitRepository, name: fleet}
    path: ./fleet
`

// longName makes a per-app namespace over 63 characters: tenant-acme (11)
// + "-" + nb- + 48 characters.
var longName = "l" + strings.Repeat("o", 46) + "ng"

const baselineApps = `
apiVersion: apps.cozystack.io/v1alpha1
kind: Notebook
metadata: {name: lab, namespace: tenant-acme}
spec: {}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Notebook
metadata: {name: LONG, namespace: tenant-acme}
spec: {}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Kubernetes
metadata: {name: dev, namespace: tenant-acme}
spec: {}
`

// renderBaseline renders the fleet above with spec.routing set to routing
// (YAML, indented under spec) and returns the run.
func renderBaseline(t *testing.T, routing string) *pipeline.Result {
	t.Helper()
	cfgObjs, err := input.Decode([]byte(baselineConfig+routing), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, problems := api.DecodeConfig(cfgObjs[0])
	if len(problems) > 0 {
		t.Fatalf("config refused: %v", problems)
	}
	objs, err := input.Decode([]byte(definitions+"---\n"+strings.ReplaceAll(baselineApps, "LONG", longName)), "inputs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run, problems := pipeline.Run(pipeline.Options{Config: cfg, Items: objs})
	if len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	return run
}

func findObject(t *testing.T, objs []render.Object, kind, namespace, name string) render.Object {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && o.Namespace == namespace && o.Name == name {
			return o
		}
	}
	t.Fatalf("no %s %s/%s", kind, namespace, name)
	return render.Object{}
}

func valueOf(t *testing.T, o render.Object) map[string]any {
	t.Helper()
	v, err := yamlnode.ToValue(nodeOf(t, o), yamlnode.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	return v.(map[string]any)
}

func inClusterNames(objs []render.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Kind+" "+o.Namespace+"/"+o.Name)
	}
	return out
}

// TestBaselineShared: the default places every routed app in the tenant's
// namespace as computeplane-apps; the baseline Kustomization applies with
// the cluster's kubeconfig and no account of its own.
func TestBaselineShared(t *testing.T) {
	run := renderBaseline(t, "")
	ks := findObject(t, run.Objects, "Kustomization", "tenant-acme", wire.BaselineKustomization)
	spec := valueOf(t, ks)["spec"].(map[string]any)
	want := map[string]any{
		"interval":       "10m0s",
		"retryInterval":  "30s",
		"path":           "./fleet/tenant-acme/_baseline",
		"prune":          true,
		"deletionPolicy": "Orphan",
		"sourceRef":      map[string]any{"kind": "GitRepository", "name": "fleet", "namespace": "flux-system"},
		"kubeConfig":     map[string]any{"secretRef": map[string]any{"name": "computeplane-admin-kubeconfig", "key": "super-admin.svc"}},
	}
	if d := cmp.Diff(want, spec); d != "" {
		t.Errorf("baseline Kustomization spec (-want +got):\n%s", d)
	}
	if !ks.Cluster {
		t.Error("the baseline Kustomization is not kept in the namespace's base unit with the cluster")
	}
	wantObjs := []string{
		"Namespace /tenant-acme",
		"NetworkPolicy tenant-acme/computeplane-deny-other-namespaces",
		"RoleBinding tenant-acme/computeplane-apps",
		"ServiceAccount tenant-acme/computeplane-apps",
	}
	if d := cmp.Diff(wantObjs, inClusterNames(ks.InCluster)); d != "" {
		t.Errorf("in-cluster objects (-want +got):\n%s", d)
	}
	ns := valueOf(t, ks.InCluster[0])["metadata"].(map[string]any)["labels"].(map[string]any)
	for _, mode := range []string{"enforce", "audit", "warn"} {
		if ns["pod-security.kubernetes.io/"+mode] != "restricted" {
			t.Errorf("namespace label pod-security.kubernetes.io/%s = %v, want restricted", mode, ns["pod-security.kubernetes.io/"+mode])
		}
	}
	rb := valueOf(t, ks.InCluster[2])
	if d := cmp.Diff(map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"}, rb["roleRef"]); d != "" {
		t.Errorf("RoleBinding roleRef (-want +got):\n%s", d)
	}
	hr := valueOf(t, findObject(t, run.Objects, "HelmRelease", "tenant-acme", "nb-lab"))["spec"].(map[string]any)
	if hr["serviceAccountName"] != "computeplane-apps" || hr["targetNamespace"] != "tenant-acme" {
		t.Errorf("routed release: serviceAccountName %v, targetNamespace %v", hr["serviceAccountName"], hr["targetNamespace"])
	}
	if _, ok := hr["install"].(map[string]any)["createNamespace"]; ok {
		t.Error("a routed release still asks helm-controller to create its namespace, which its account may not")
	}
	mgmt := valueOf(t, findObject(t, run.Objects, "HelmRelease", "tenant-acme", "kubernetes-dev"))["spec"].(map[string]any)
	if _, ok := mgmt["serviceAccountName"]; ok {
		t.Error("a management-plane release sets serviceAccountName")
	}
	for _, o := range run.Objects {
		if o.Kind == "Namespace" || o.Kind == "NetworkPolicy" {
			t.Errorf("in-cluster object %s %s/%s is among the management cluster's objects", o.Kind, o.Namespace, o.Name)
		}
	}
}

// TestBaselinePerApp: per-app namespaces (the 63-character rule), their
// accounts, quotas and a grant with rules.
func TestBaselinePerApp(t *testing.T) {
	run := renderBaseline(t, `  routing:
    namespaces: PerApp
    resourceQuota: {hard: {pods: "20"}}
    limitRange: {limits: [{type: Container, default: {cpu: 500m}}]}
    grants:
    - definition: notebook
      clusterRole: computeplane-crds
      rules: [{apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: ["*"]}]
`)
	long := model.PerAppNamespace("tenant-acme", "nb-"+longName)
	if len(long) != 63 || !strings.HasPrefix(long, "tenant-acme-nb-loooo") {
		t.Fatalf("per-app namespace of a long release: %q (%d characters), want 63 starting with tenant-acme-nb-", long, len(long))
	}
	ks := findObject(t, run.Objects, "Kustomization", "tenant-acme", wire.BaselineKustomization)
	wantObjs := []string{
		"ClusterRole /computeplane-crds",
		"ClusterRoleBinding /computeplane-app-nb-lab",
		"ClusterRoleBinding /computeplane-app-nb-" + longName,
		"Namespace /tenant-acme",
		"Namespace /tenant-acme-nb-lab",
		"Namespace /" + long,
		"NetworkPolicy tenant-acme/computeplane-deny-other-namespaces",
		"ServiceAccount tenant-acme/computeplane-app-nb-lab",
		"ServiceAccount tenant-acme/computeplane-app-nb-" + longName,
		"LimitRange tenant-acme-nb-lab/computeplane-apps",
		"NetworkPolicy tenant-acme-nb-lab/computeplane-deny-other-namespaces",
		"ResourceQuota tenant-acme-nb-lab/computeplane-apps",
		"RoleBinding tenant-acme-nb-lab/computeplane-app-nb-lab",
		"LimitRange " + long + "/computeplane-apps",
		"NetworkPolicy " + long + "/computeplane-deny-other-namespaces",
		"ResourceQuota " + long + "/computeplane-apps",
		"RoleBinding " + long + "/computeplane-app-nb-" + longName,
	}
	if d := cmp.Diff(wantObjs, inClusterNames(ks.InCluster)); d != "" {
		t.Errorf("in-cluster objects (-want +got):\n%s", d)
	}
	hr := valueOf(t, findObject(t, run.Objects, "HelmRelease", "tenant-acme", "nb-lab"))["spec"].(map[string]any)
	if hr["serviceAccountName"] != "computeplane-app-nb-lab" || hr["targetNamespace"] != "tenant-acme-nb-lab" || hr["storageNamespace"] != "tenant-acme-nb-lab" || hr["releaseName"] != "nb-lab" {
		t.Errorf("routed release: serviceAccountName %v, targetNamespace %v, releaseName %v", hr["serviceAccountName"], hr["targetNamespace"], hr["releaseName"])
	}
}

// TestBaselineInStream: without spec.fleet the stream delivers the
// baseline as a release of the baseline chart, whose values are the same
// objects the fleet folder applies, read from one OCIRepository; routed
// releases wait for it, and nobody is warned.
func TestBaselineInStream(t *testing.T) {
	objs, err := input.Decode([]byte(definitions+"---\n"+strings.ReplaceAll(baselineApps, "LONG", "x")), "inputs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &api.Config{Delivery: api.Direct, Cluster: api.ClusterConfig{Values: api.DefaultClusterValues(), PodSecurity: api.PodSecurityRestricted}}
	cfg.Routing.Namespaces = api.NamespacesShared
	cfg.Default()
	run, problems := pipeline.Run(pipeline.Options{Config: cfg, Items: objs})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if slices.ContainsFunc(run.Objects, func(o render.Object) bool { return o.Kind == "Kustomization" }) {
		t.Error("a baseline Kustomization without spec.fleet")
	}
	if len(run.Warnings) != 0 {
		t.Errorf("warnings %v, want none", run.Warnings)
	}
	src := valueOf(t, findObject(t, run.Objects, "OCIRepository", api.DefaultWiringNamespace, wire.BaselineRelease))["spec"].(map[string]any)
	if src["url"] != api.DefaultBaselineChartURL || src["ref"].(map[string]any)["tag"] != api.BaselineChartVersion ||
		src["layerSelector"].(map[string]any)["mediaType"] != render.BaselineChartLayer {
		t.Errorf("chart source %v", src)
	}
	hr := valueOf(t, findObject(t, run.Objects, "HelmRelease", "tenant-acme", wire.BaselineRelease))["spec"].(map[string]any)
	if hr["kubeConfig"].(map[string]any)["secretRef"].(map[string]any)["name"] != "computeplane-admin-kubeconfig" || hr["serviceAccountName"] != nil {
		t.Errorf("baseline release: kubeConfig %v, serviceAccountName %v", hr["kubeConfig"], hr["serviceAccountName"])
	}
	ref := hr["chartRef"].(map[string]any)
	if ref["kind"] != "OCIRepository" || ref["name"] != wire.BaselineRelease || ref["namespace"] != api.DefaultWiringNamespace {
		t.Errorf("chartRef %v", ref)
	}
	// The values are the folder's objects, one for one.
	fleetObjs, ferr := render.BaselineObjects(run.Fleet, run.Fleet.Tenants["tenant-acme"])
	if ferr != nil {
		t.Fatal(ferr)
	}
	var got []string
	for _, o := range hr["values"].(map[string]any)["objects"].([]any) {
		m := o.(map[string]any)["metadata"].(map[string]any)
		ns, _ := m["namespace"].(string)
		got = append(got, o.(map[string]any)["kind"].(string)+" "+ns+"/"+m["name"].(string))
	}
	if d := cmp.Diff(inClusterNames(fleetObjs), got); d != "" {
		t.Errorf("values.objects (-want +got):\n%s", d)
	}
	app := valueOf(t, findObject(t, run.Objects, "HelmRelease", "tenant-acme", "nb-lab"))["spec"].(map[string]any)
	deps := app["dependsOn"].([]any)
	if deps[len(deps)-1].(map[string]any)["name"] != wire.BaselineRelease {
		t.Errorf("routed release dependsOn %v, want %s last", deps, wire.BaselineRelease)
	}
}

// TestRoutingConfigProblems: what spec.routing refuses, by field.
func TestRoutingConfigProblems(t *testing.T) {
	for _, tc := range []struct{ routing, field string }{
		{"{namespaces: Isolated}", "spec.routing.namespaces"},
		{"{resourceQuota: {}}", "spec.routing.resourceQuota.hard"},
		{"{limitRange: {limits: []}}", "spec.routing.limitRange.limits"},
		{"{grants: [{clusterRole: x}]}", "spec.routing.grants[0].definition"},
		{"{grants: [{definition: notebook}]}", "spec.routing.grants[0].clusterRole"},
		{"{grants: [{definition: notebook, clusterRole: cluster-admin, rules: [{verbs: [get]}]}]}", "spec.routing.grants[0].rules"},
		{"{grants: [{definition: notebook, clusterRole: a}, {definition: notebook, clusterRole: b}]}", "spec.routing.grants[1].definition"},
		{"{grants: [{definition: notebook, clusterRole: Bad Name}]}", "spec.routing.grants[0].clusterRole"},
		{"{grants: [{definition: notebook, clusterRole: cluster-admin}]}", "spec.routing.grants"},
		{"{namespaces: Shared, grants: [{definition: notebook, clusterRole: cluster-admin}]}", "spec.routing.grants"},
		{"{resourceQuota: {hard: {pods: 20}, scopes: [x], surprise: 1}}", "spec.routing.resourceQuota.surprise"},
		{"{resourceQuota: {hard: {pods: lots}}}", "spec.routing.resourceQuota.hard[pods]"},
		{"{limitRange: {limits: [{default: {cpu: 1}}]}}", "spec.routing.limitRange.limits[0].type"},
		{"{limitRange: {limits: [{type: Container, max: {cpu: [1]}}]}}", "spec.routing.limitRange.limits[0].max[cpu]"},
	} {
		cfgObjs, err := input.Decode([]byte(baselineConfig+"  routing: "+tc.routing+"\n"), "config.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, problems := api.DecodeConfig(cfgObjs[0])
		var fields []string
		for _, p := range problems {
			fields = append(fields, p.Field)
		}
		if !slices.Contains(fields, tc.field) {
			t.Errorf("routing %s: problems at %v, want one at %s (%v)", tc.routing, fields, tc.field, problems)
		}
	}
	// Grants are checked against the definitions.
	for _, tc := range []struct{ grant, want string }{
		{"{definition: kubernetes, clusterRole: x}", "placed on the management plane"},
	} {
		cfgObjs, err := input.Decode([]byte(baselineConfig+"  routing: {namespaces: PerApp, grants: ["+tc.grant+"]}\n"), "config.yaml")
		if err != nil {
			t.Fatal(err)
		}
		cfg, problems := api.DecodeConfig(cfgObjs[0])
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		objs, err := input.Decode([]byte(definitions), "inputs.yaml")
		if err != nil {
			t.Fatal(err)
		}
		_, problems = pipeline.Run(pipeline.Options{Config: cfg, Items: objs})
		if len(problems) != 1 || problems[0].Field != "spec.routing.grants[0].definition" || !strings.Contains(problems[0].Message, tc.want) {
			t.Errorf("grant %s: %v, want one problem at spec.routing.grants[0].definition saying %q", tc.grant, problems, tc.want)
		}
	}
}

// TestBaselineChartVersion: the chart the project ships is the version the
// function renders releases of by default.
func TestBaselineChartVersion(t *testing.T) {
	data, err := os.ReadFile("../../charts/computeplane-baseline/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var chart struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := sigsyaml.Unmarshal(data, &chart); err != nil {
		t.Fatal(err)
	}
	if chart.Name != wire.BaselineRelease || chart.Version != api.BaselineChartVersion {
		t.Errorf("charts/computeplane-baseline is %s %s, want %s %s", chart.Name, chart.Version, wire.BaselineRelease, api.BaselineChartVersion)
	}
}

// TestBaselineReleaseValuesAsJSON: the baseline release's values are set
// on its node from the objects' nodes (a render of 1,000 tenants spent an
// eighth of its CPU time going through JSON instead); they must read as the
// JSON of the objects does, byte for byte, with every kind of baseline
// object in them (quota quantities, limits, a grant's rules, per-app
// namespaces).
func TestBaselineReleaseValuesAsJSON(t *testing.T) {
	cfgObjs, err := input.Decode([]byte(`
apiVersion: fn.computeplane.dev/v1alpha1
kind: ComputePlaneGenerator
metadata: {name: fleet}
spec:
  delivery: Direct
  routing:
    namespaces: PerApp
    resourceQuota: {hard: {pods: "20", requests.cpu: "1.5", requests.memory: 16Gi}, scopes: [NotTerminating]}
    limitRange: {limits: [{type: Container, default: {cpu: 500m, memory: 1e3}, defaultRequest: {cpu: "0.1"}}]}
    grants:
    - definition: notebook
      clusterRole: computeplane-crds
      rules: [{apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: ["*"]}]
`), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, problems := api.DecodeConfig(cfgObjs[0])
	if len(problems) > 0 {
		t.Fatalf("config refused: %v", problems)
	}
	objs, err := input.Decode([]byte(definitions+"---\n"+strings.ReplaceAll(baselineApps, "LONG", longName)), "inputs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run, problems := pipeline.Run(pipeline.Options{Config: cfg, Items: objs})
	if len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	hr := nodeOf(t, findObject(t, run.Objects, "HelmRelease", "tenant-acme", wire.BaselineRelease))
	got := yamlnode.Lookup(hr, "spec", "values")
	if got == nil {
		t.Fatal("the baseline release has no spec.values")
	}

	// The values as JSON would give them: each object to JSON, the list
	// to JSON, back to nodes.
	inCluster, berr := render.BaselineObjects(run.Fleet, run.Fleet.Tenants["tenant-acme"])
	if berr != nil {
		t.Fatal(berr)
	}
	var list []json.RawMessage
	for _, o := range inCluster {
		data, err := kyaml.NewRNode(nodeOf(t, o)).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, data)
	}
	text := func(n *kyaml.Node) string {
		s, err := kyaml.NewRNode(n).String()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	data, jerr := json.Marshal(map[string]any{"objects": list})
	if jerr != nil {
		t.Fatal(jerr)
	}
	want, jerr := yamlnode.FromJSON(data)
	if jerr != nil {
		t.Fatal(jerr)
	}
	wantText, gotText := text(want), text(got)
	if !strings.Contains(gotText, "ResourceQuota") || !strings.Contains(gotText, "LimitRange") || !strings.Contains(gotText, "computeplane-crds") {
		t.Errorf("values lack an object kind of the test:\n%s", gotText)
	}
	if d := cmp.Diff(wantText, gotText); d != "" {
		t.Errorf("values (-JSON +node):\n%s", d)
	}
}
