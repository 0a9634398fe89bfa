package cluster

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// The in-cluster baseline test's names (testdata/incluster).
const (
	inClusterSource = "incluster"
	inClusterRoot   = "computeplane-incluster"
	baselineName    = "computeplane-baseline"
	platformUnit    = "computeplane-platform"
)

// inClusterScenario is one delivery of the test: its tenant namespace, the
// wiring namespace of its fleet and its cluster release.
type inClusterScenario struct {
	delivery, tenant, wiring, cluster string
}

func (s inClusterScenario) routedUnit() string { return "computeplane-routed-" + s.tenant }
func (s inClusterScenario) tenantUnit() string { return "computeplane-" + s.tenant }

// The stand-in charts that reach beyond their namespace: each also renders
// the usual ConfigMap.
var escalationCharts = map[string]string{
	"e2e-escalation-binder": `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: escalated-{{ .Release.Name }}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {kind: ServiceAccount, name: default, namespace: {{ .Release.Namespace }}}
`,
	"e2e-escalation-labeler": `apiVersion: v1
kind: Namespace
metadata:
  name: {{ .Release.Namespace }}
  labels:
    pod-security.kubernetes.io/enforce: privileged
`,
	"e2e-escalation-reader": `{{- $s := lookup "v1" "Secret" .Values.secretNamespace .Values.secretName }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-stolen
data:
  token: {{ (get (default dict $s.data) "token") | default "" | b64dec | quote }}
`,
}

// publishEscalationCharts serves the stand-in charts as the ExternalArtifacts
// testdata/incluster/escalation.yaml names.
func (e *env) publishEscalationCharts(t *testing.T) {
	t.Helper()
	for name, tmpl := range escalationCharts {
		data, err := harness.Tarball(map[string][]byte{
			name + "/Chart.yaml":               []byte("apiVersion: v2\nname: " + name + "\nversion: 0.1.0\ntype: application\n"),
			name + "/templates/configmap.yaml": []byte(standInConfigMap),
			name + "/templates/escalate.yaml":  []byte(tmpl),
		})
		if err != nil {
			t.Fatal(err)
		}
		ea := obj(sourceV1, "ExternalArtifact", cozySystem, name, map[string]any{"spec": map[string]any{}})
		e.setArtifact(t, ea, e.artifacts.Publish("externalartifact", cozySystem, name, "0.1.0", data))
	}
}

// inClusterRepo is the fleet repository of the test: its inputs and
// repo/fleet, served as GitRepository incluster-flux/incluster.
type inClusterRepo struct {
	e          *env
	s          inClusterScenario
	work, repo string
	revision   string
}

func (r *inClusterRepo) publish(t *testing.T) {
	t.Helper()
	harness.RenderFolder(t, r.e.bins.fn, r.work, filepath.Join(r.repo, "fleet"), "config.yaml")
	files, err := harness.ReadTree(r.repo, "")
	if err != nil {
		t.Fatal(err)
	}
	tar, err := harness.Tarball(files)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(tar)
	r.revision = "main@sha1:" + hex.EncodeToString(sum[:])
	src := obj(sourceV1, "GitRepository", r.s.wiring, inClusterSource, map[string]any{
		"spec": map[string]any{"url": "https://127.0.0.1/incluster.git", "interval": "10m", "ref": map[string]any{"branch": "main"}},
	})
	r.e.setArtifact(t, src, r.e.artifacts.Publish("gitrepository", r.s.wiring, inClusterSource, r.revision, tar))
}

// auditEvent is the part of an audit.k8s.io/v1 Event the test reads.
type auditEvent struct {
	Verb             string                     `json:"verb"`
	User             struct{ Username string }  `json:"user"`
	ImpersonatedUser *struct{ Username string } `json:"impersonatedUser"`
	UserAgent        string                     `json:"userAgent"`
	ObjectRef        *struct {
		Resource, Namespace, Name, Subresource string
	} `json:"objectRef"`
	ResponseStatus *struct{ Code int } `json:"responseStatus"`
}

// writers returns who created resource namespace/name according to the
// audit log: the user, or the impersonated user when there is one.
func writers(t *testing.T, log, resource, namespace, name string) []string {
	t.Helper()
	return auditWrites(t, log, resource, namespace, name, false)
}

// creators returns who created resource namespace/name according to the
// audit log: a create, or a server-side apply (a patch) answered 201
// Created, as Helm 4 creates what it installs.
func creators(t *testing.T, log, resource, namespace, name string) []string {
	t.Helper()
	return auditWrites(t, log, resource, namespace, name, true)
}

// auditWrites returns who wrote resource namespace/name (its main resource,
// not a subresource; only the writes that created it when created)
// according to the audit log.
func auditWrites(t *testing.T, log, resource, namespace, name string, created bool) []string {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.ObjectRef == nil || ev.ResponseStatus == nil {
			continue
		}
		// The API server files a namespace under its own name.
		if resource == "namespaces" && ev.ObjectRef.Namespace == name {
			ev.ObjectRef.Namespace = ""
		}
		if ev.ObjectRef.Resource != resource || ev.ObjectRef.Namespace != namespace || ev.ObjectRef.Name != name ||
			ev.ObjectRef.Subresource != "" || ev.ResponseStatus.Code >= 300 || (created && ev.ResponseStatus.Code != 201) ||
			!slices.Contains([]string{"create", "patch", "update"}, ev.Verb) {
			continue
		}
		who := ev.User.Username
		if ev.ImpersonatedUser != nil {
			who = ev.ImpersonatedUser.Username
		}
		out = append(out, who)
	}
	return out
}

// testInCluster: the fleet's in-cluster baseline lands in a ComputePlane
// through kustomize-controller's remote apply; routed releases wait for it
// (their unit depends on the baseline Kustomization) and then install as
// their own accounts, admins of their own namespaces only; charts that
// reach further fail with the API server's Forbidden until the operator
// grants their definition a ClusterRole.
func (e *env) testInCluster(t *testing.T) {
	e.ensureFlux(t)
	e.ensurePlatform(t)
	e.ensureClusterChart(t)
	e.publishEscalationCharts(t)
	t.Run("Direct", func(t *testing.T) {
		e.inCluster(t, inClusterScenario{delivery: "Direct", tenant: "tenant-zeta", wiring: "incluster-flux", cluster: "computeplane"})
	})
	t.Run("Platform", func(t *testing.T) {
		e.inCluster(t, inClusterScenario{delivery: "Platform", tenant: "tenant-eta", wiring: "incluster-flux-platform", cluster: "computeplane-cluster"})
	})
}

func (e *env) inCluster(t *testing.T, sc inClusterScenario) {
	inClusterTenant, inClusterWiring := sc.tenant, sc.wiring
	routedUnitName, tenantUnitName, platformUnitName := sc.routedUnit(), sc.tenantUnit(), platformUnit
	e.namespaces(inClusterTenant, inClusterWiring)
	e.writeCozystackValues(t, inClusterTenant)
	// This fleet's wiring keeps reconciling after the scenario, and its
	// platform unit would put its guard (which admits this fleet's account
	// only) back over the next scenario's: the stage's two scenarios share
	// its management cluster.
	t.Cleanup(func() { e.suspendKustomizations(t, inClusterWiring, inClusterTenant) })

	// The ComputePlane's stand-in: RBAC on, as every stand-in API server,
	// and an audit log that names who wrote each object.
	cp, cpc, audit := e.auditedComputePlane(t, e.serverName("computeplane-"+strings.TrimPrefix(sc.tenant, "tenant-")))

	r := &inClusterRepo{e: e, s: sc, work: fleetDir(t, "incluster"), repo: filepath.Join(t.TempDir(), "repo")}
	// testdata/incluster is written for Direct and tenant zeta.
	for _, f := range []string{"config.yaml", "tenants.yaml", "apps.yaml"} {
		p := filepath.Join(r.work, f)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.NewReplacer("tenant-zeta", sc.tenant, "name: zeta", "name: "+strings.TrimPrefix(sc.tenant, "tenant-"),
			"wiringNamespace: incluster-flux", "wiringNamespace: "+sc.wiring, "delivery: Direct", "delivery: "+sc.delivery).Replace(string(data))
		harness.WriteFile(t, p, []byte(text))
	}
	if sc.delivery == "Platform" {
		// The suite plays the platform's computeplane module.
		e.applyAll(t, e.admin, []*unstructured.Unstructured{platformClusterRelease(sc.tenant, sc.cluster)}, false)
	}
	r.publish(t)
	out := filepath.Join(r.repo, "fleet")

	// Bootstrap as a platform administrator: the fleet's account and its
	// rights (the account's unit carries them, but it is applied as that
	// account), then the root Kustomization, which applies as the fleet.
	// The suite's fleets share one management cluster and one guard: this
	// fleet's guard goes first, so that its fleet account is the one the
	// guard admits.
	// The account's unit holds the fleet's account and the guard (the
	// guard never moves with the layout: docs/flux-wiring.md).
	var bootstrap, guard []*unstructured.Unstructured
	for _, o := range folderObjects(t, filepath.Join(out, "_account")) {
		if strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
			guard = append(guard, o)
		} else {
			bootstrap = append(bootstrap, o)
		}
	}
	platformObjs := folderObjects(t, filepath.Join(out, "_platform"))
	if len(bootstrap) != 3 || len(guard) != 2 {
		t.Fatalf("the account's unit holds %d objects of the fleet's account (want its ServiceAccount, ClusterRole and ClusterRoleBinding) and %d of the guard (want 2)", len(bootstrap), len(guard))
	}
	e.applyAll(t, e.admin, guard, false)
	e.applyAll(t, e.admin, bootstrap, false)
	fleetUser := harness.ServiceAccount(inClusterWiring, fleetAccount)
	asFleet := harness.MustClient(t, e.mgmt, fleetUser, e.mgmt.Impersonating(fleetUser, "system:serviceaccounts", "system:serviceaccounts:"+inClusterWiring))
	if err := harness.Poll(e.ctx, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		for _, o := range platformObjs {
			if _, _, err := asFleet.Apply(e.ctx, o, harness.ApplyOptions{DryRun: true}); err != nil {
				return false, err.Error()
			}
		}
		return true, ""
	}); err != nil {
		t.Fatalf("the platform unit is refused as the fleet after its guard was applied: %v", err)
	}
	root := obj(kustomizeV1, "Kustomization", inClusterWiring, inClusterRoot, map[string]any{
		"spec": map[string]any{
			"interval": "10m", "sourceRef": map[string]any{"kind": "GitRepository", "name": inClusterSource},
			"path": "./fleet/_flux", "prune": true, "deletionPolicy": "Orphan", "serviceAccountName": fleetAccount,
		},
	})
	e.applyAll(t, e.admin, []*unstructured.Unstructured{root}, false)

	atRevision := func(rev string) func(*unstructured.Unstructured) (bool, string) {
		return func(u *unstructured.Unstructured) (bool, string) {
			if u == nil {
				return false, "not found"
			}
			ok, seen := harness.Ready(u)
			got, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
			return ok && got == rev, fmt.Sprintf("%s, lastAppliedRevision %s, want %s", seen, got, rev)
		}
	}
	e.waitFor(t, e.admin, kustomizeV1, "Kustomization", inClusterWiring, platformUnitName, 3*time.Minute, atRevision(r.revision))
	e.waitFor(t, e.admin, kustomizeV1, "Kustomization", inClusterWiring, tenantUnitName, 3*time.Minute, atRevision(r.revision))
	e.waitFor(t, e.admin, kustomizeV1, "Kustomization", inClusterTenant, baselineName, time.Minute, harness.Exists)

	// No kubeconfig yet: the baseline cannot apply, so the routed unit
	// waits for it and no routed release exists on the management cluster.
	routedReleases := []string{"jupyterhub-lab", "n8n-flows", "binder-crb", "labeler-psa", "reader-peek"}
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		for _, name := range routedReleases {
			if got, _ := e.admin.Get(e.ctx, helmV2, "HelmRelease", inClusterTenant, name); got != nil {
				t.Fatalf("routed release %s/%s exists before its baseline was applied", inClusterTenant, name)
			}
		}
		time.Sleep(time.Second)
	}
	unit := e.mustGet(t, e.admin, kustomizeV1, "Kustomization", inClusterWiring, routedUnitName)
	if status, reason, msg, _ := harness.Condition(unit, "Ready"); status == "True" || reason != "DependencyNotReady" || !strings.Contains(msg, baselineName) {
		t.Errorf("routed unit %s while the baseline cannot apply: Ready=%s %s: %s; want DependencyNotReady naming %s", routedUnitName, status, reason, msg, baselineName)
	}

	// Kamaji writes the admin kubeconfig: the baseline lands in the
	// ComputePlane, applied remotely by kustomize-controller with it.
	if _, _, err := e.admin.Apply(e.ctx, secret(inClusterTenant, sc.cluster+"-admin-kubeconfig",
		map[string]string{"super-admin.svc": string(cp.Kubeconfig(harness.Admin))}), harness.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, e.admin, kustomizeV1, "Kustomization", inClusterTenant, baselineName, 2*time.Minute, atRevision(r.revision))
	appNS := map[string]string{}
	for _, name := range routedReleases {
		appNS[name] = inClusterTenant + "-" + name
	}
	for _, ns := range append([]string{inClusterTenant}, appNS["jupyterhub-lab"], appNS["reader-peek"]) {
		got := e.waitFor(t, cpc, "v1", "Namespace", "", ns, 30*time.Second, harness.Exists)
		labels := got.GetLabels()
		for _, mode := range []string{"enforce", "audit", "warn"} {
			if labels["pod-security.kubernetes.io/"+mode] != "restricted" {
				t.Errorf("namespace %s in the ComputePlane: pod-security.kubernetes.io/%s = %q, want restricted", ns, mode, labels["pod-security.kubernetes.io/"+mode])
			}
		}
		if labels[kustomizeName] != baselineName {
			t.Errorf("namespace %s in the ComputePlane was applied by %q, want Kustomization %s", ns, labels[kustomizeName], baselineName)
		}
		if ns != inClusterTenant {
			if got, _ := e.admin.Get(e.ctx, "v1", "Namespace", "", ns); got != nil {
				t.Errorf("the baseline's namespace %s was created in the management cluster", ns)
			}
		}
	}
	for _, name := range routedReleases {
		account := "computeplane-app-" + name
		e.mustGet(t, cpc, "v1", "ServiceAccount", inClusterTenant, account)
		e.mustGet(t, cpc, "rbac.authorization.k8s.io/v1", "RoleBinding", appNS[name], account)
		e.mustGet(t, cpc, "networking.k8s.io/v1", "NetworkPolicy", appNS[name], "computeplane-deny-other-namespaces")
		if got, _ := e.admin.Get(e.ctx, "v1", "ServiceAccount", inClusterTenant, account); got != nil {
			t.Errorf("the baseline's ServiceAccount %s was created in the management cluster", account)
		}
	}
	if who := writers(t, audit, "namespaces", "", appNS["jupyterhub-lab"]); len(who) == 0 || who[0] != harness.Admin {
		t.Errorf("namespace %s was created by %v in the ComputePlane, want %s (the kubeconfig's user, through kustomize-controller)", appNS["jupyterhub-lab"], who, harness.Admin)
	}
	// Another app's Secret, which the reader chart will try to read.
	if _, _, err := cpc.Apply(e.ctx, secret(appNS["n8n-flows"], "flows-credentials", map[string]string{"token": "s3cr3t"}), harness.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}

	// The routed unit follows; ordinary charts install as their accounts.
	e.waitFor(t, e.admin, kustomizeV1, "Kustomization", inClusterWiring, routedUnitName, 2*time.Minute, atRevision(r.revision))
	for _, name := range []string{"jupyterhub-lab", "n8n-flows"} {
		e.waitReady(t, e.admin, helmV2, "HelmRelease", inClusterTenant, name, 3*time.Minute)
		e.waitFor(t, cpc, "v1", "ConfigMap", appNS[name], name, 30*time.Second, harness.Exists)
		want := harness.ServiceAccount(inClusterTenant, "computeplane-app-"+name)
		if who := writers(t, audit, "configmaps", appNS[name], name); len(who) == 0 || who[0] != want {
			t.Errorf("ConfigMap %s/%s was written in the ComputePlane by %v, want %s", appNS[name], name, who, want)
		} else {
			t.Logf("%s/%s installed as %s", appNS[name], name, who[0])
		}
	}

	// Charts that reach beyond their namespace fail with the API server's
	// own Forbidden, naming their account.
	escalations := []struct{ release, what string }{
		{"binder-crb", `resource "clusterrolebindings"`},
		{"labeler-psa", `resource "namespaces"`},
		{"reader-peek", `cannot get resource "secrets"`},
	}
	for _, x := range escalations {
		account := harness.ServiceAccount(inClusterTenant, "computeplane-app-"+x.release)
		e.waitFor(t, e.admin, helmV2, "HelmRelease", inClusterTenant, x.release, 3*time.Minute, func(u *unstructured.Unstructured) (bool, string) {
			if u == nil {
				return false, "not found"
			}
			status, reason, msg, _ := harness.Condition(u, "Ready")
			if status == "True" {
				t.Fatalf("%s installed without a grant", x.release)
			}
			ok := strings.Contains(msg, "forbidden") && strings.Contains(msg, account)
			return ok, fmt.Sprintf("Ready=%s %s: %s", status, reason, msg)
		})
		got := e.mustGet(t, e.admin, helmV2, "HelmRelease", inClusterTenant, x.release)
		_, _, msg, _ := harness.Condition(got, "Ready")
		if !strings.Contains(msg, x.what) {
			t.Errorf("%s failed with %q, want the API server's Forbidden saying %s", x.release, msg, x.what)
		}
		t.Logf("%s without a grant: %s", x.release, harness.FirstLine(msg))
	}
	if got, _ := cpc.Get(e.ctx, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "escalated-binder-crb"); got != nil {
		t.Error("the binder chart created its ClusterRoleBinding without a grant")
	}
	if got := e.mustGet(t, cpc, "v1", "Namespace", "", appNS["labeler-psa"]); got.GetLabels()["pod-security.kubernetes.io/enforce"] != "restricted" {
		t.Errorf("the labeler chart relabelled its namespace without a grant: %v", got.GetLabels())
	}

	// The operator grants the three definitions cluster-admin inside the
	// ComputePlane: the baseline binds it to their accounts and the same
	// charts install.
	cfgPath := filepath.Join(r.work, "config.yaml")
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	grants := "    grants:\n"
	for _, d := range []string{"binder", "labeler", "reader"} {
		grants += "    - {definition: " + d + ", clusterRole: cluster-admin}\n"
	}
	harness.WriteFile(t, cfgPath, []byte(strings.Replace(string(data), "    namespaces: PerApp\n", "    namespaces: PerApp\n"+grants, 1)))
	r.publish(t)
	e.waitFor(t, e.admin, kustomizeV1, "Kustomization", inClusterTenant, baselineName, 3*time.Minute, atRevision(r.revision))
	for _, x := range escalations {
		e.mustGet(t, cpc, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "computeplane-app-"+x.release)
		e.waitReady(t, e.admin, helmV2, "HelmRelease", inClusterTenant, x.release, 3*time.Minute)
	}
	e.mustGet(t, cpc, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "escalated-binder-crb")
	stolen := e.mustGet(t, cpc, "v1", "ConfigMap", appNS["reader-peek"], "reader-peek-stolen")
	if got, _, _ := unstructured.NestedString(stolen.Object, "data", "token"); got != "s3cr3t" {
		t.Errorf("the reader chart, granted cluster-admin, read %q from another app's Secret, want its token", got)
	}
	if who := writers(t, audit, "clusterrolebindings", "", "escalated-binder-crb"); len(who) == 0 || who[0] != harness.ServiceAccount(inClusterTenant, "computeplane-app-binder-crb") {
		t.Errorf("ClusterRoleBinding escalated-binder-crb was created by %v, want the binder's account", who)
	}
}

// auditedComputePlane starts the stand-in API server of a ComputePlane
// with RBAC, as every stand-in, and an audit log (returned) that names who
// wrote each object, the impersonated user included.
func (e *env) auditedComputePlane(t *testing.T, name string) (*harness.APIServer, *harness.Client, string) {
	t.Helper()
	audit := filepath.Join(e.dir, name+"-audit.log")
	policy := filepath.Join(e.dir, "audit-policy.yaml")
	harness.WriteFile(t, policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"))
	cp := harness.StartAPIServer(t, harness.APIServerOptions{
		Name: name, Bin: e.bins.apiserver, Etcd: e.etcd, Dir: e.dir,
		ExtraArgs: []string{"--audit-policy-file=" + policy, "--audit-log-path=" + audit, "--audit-log-format=json"},
	})
	cpc := harness.MustClient(t, cp, harness.Admin, cp.Config(harness.Admin))
	e.aggregateAdmin(t, cpc)
	return cp, cpc, audit
}

// standInComputePlane starts an API server for a tenant's ComputePlane and
// writes its admin kubeconfig as Kamaji does, so that the tenant's baseline
// and routed releases can reach it.
func (e *env) standInComputePlane(t *testing.T, ns string) *harness.APIServer {
	t.Helper()
	cp := harness.StartAPIServer(t, harness.APIServerOptions{
		Name: e.serverName("computeplane-" + strings.TrimPrefix(ns, "tenant-")), Bin: e.bins.apiserver, Etcd: e.etcd, Dir: e.dir,
	})
	e.aggregateAdmin(t, harness.MustClient(t, cp, harness.Admin, cp.Config(harness.Admin)))
	if _, _, err := e.admin.Apply(e.ctx, secret(ns, "computeplane-admin-kubeconfig",
		map[string]string{"super-admin.svc": string(cp.Kubeconfig(harness.Admin))}), harness.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	return cp
}

// aggregateAdmin does what kube-controller-manager's clusterrole-aggregation
// controller does in a real cluster, which a stand-in API server lacks: the
// aggregated ClusterRoles admin, edit and view get the rules of the
// ClusterRoles their aggregationRule selects (Kubernetes' own
// system:aggregate-to-*). Without it admin grants nothing.
func (e *env) aggregateAdmin(t *testing.T, cpc *harness.Client) {
	t.Helper()
	for _, role := range []string{"view", "edit", "admin"} { // each aggregates the one before
		parts, err := cpc.List(e.ctx, "rbac.authorization.k8s.io/v1", "ClusterRole", "", "rbac.authorization.k8s.io/aggregate-to-"+role+"=true")
		if err != nil {
			t.Fatal(err)
		}
		var rules []any
		for _, p := range parts {
			rs, _, _ := unstructured.NestedSlice(p.Object, "rules")
			rules = append(rules, rs...)
		}
		got := e.mustGet(t, cpc, "rbac.authorization.k8s.io/v1", "ClusterRole", "", role)
		if err := unstructured.SetNestedSlice(got.Object, rules, "rules"); err != nil {
			t.Fatal(err)
		}
		if _, err := cpc.Update(e.ctx, got); err != nil {
			t.Fatal(err)
		}
	}
}

// suspendKustomizations suspends every Kustomization of the namespaces, so
// that a fleet a scenario is done with stops reconciling (its objects
// stay).
func (e *env) suspendKustomizations(t *testing.T, namespaces ...string) {
	ctx := context.Background()
	for _, ns := range namespaces {
		ks, err := e.admin.List(ctx, kustomizeV1, "Kustomization", ns, "")
		if err != nil {
			t.Errorf("failed to list the Kustomizations of %s: %v", ns, err)
			continue
		}
		for _, k := range ks {
			if _, err := e.admin.MergePatch(ctx, kustomizeV1, "Kustomization", ns, k.GetName(), []byte(`{"spec":{"suspend":true}}`)); err != nil {
				t.Errorf("failed to suspend Kustomization %s/%s: %v", ns, k.GetName(), err)
			}
		}
	}
}
