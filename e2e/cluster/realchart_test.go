package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// The RealChart stage installs Cozystack's own packages/apps/kubernetes
// chart (../shared/third_party/cozystack at the commit the suite's other
// Cozystack components come from), not the stand-in, from the cluster
// HelmRelease the function renders for testdata/realchart, with the real
// helm-controller impersonating the rendered computeplane-installer.
const (
	realTenant  = "tenant-sigma"
	realCluster = "computeplane"
	jobV1       = "batch/v1"
)

// realChartCRDs are the CRDs of the chart's kinds that Cozystack's system
// charts in the tree hold, by file below packages/system: Cluster API core,
// its Talos bootstrap provider, the Kamaji control-plane provider, CAPK,
// Kamaji, cert-manager (Issuer, Certificate) and cozystack-controller's
// WorkloadMonitor.
var realChartCRDs = []string{
	"capi-providers-core/files/core-components.yaml",
	"capi-providers-bootstrap/files/bootstrap-components-talos.yaml",
	"capi-providers-cpprovider/files/control-plane-components.yaml",
	"capi-providers-infraprovider/files/infrastructure-components.yaml",
	"kamaji/charts/kamaji/crds/kamaji.clastix.io_datastores.yaml",
	"kamaji/charts/kamaji/crds/kamaji.clastix.io_tenantcontrolplanes.yaml",
	"cert-manager-crds/templates/crd-cert-manager.io_issuers.yaml",
	"cert-manager-crds/templates/crd-cert-manager.io_certificates.yaml",
	"cozystack-controller/definitions/cozystack.io_workloadmonitors.yaml",
}

// The stand-ins of what virt-operator and cdi-operator create at run time
// (testdata/crds, labelled e2e.computeplane.dev/stand-in).
var kubevirtStandIns = []string{
	"testdata/crds/virtualmachines.kubevirt.io.yaml",
	"testdata/crds/datavolumes.cdi.kubevirt.io.yaml",
	"testdata/crds/virtualmachineclusterinstancetypes.instancetype.kubevirt.io.yaml",
}

func (e *env) testRealChart(t *testing.T) {
	if e.bins.thirdParty == "" {
		t.Skip("E2E_THIRD_PARTY is not set: run the suite with `make e2e`")
	}
	cozy := filepath.Join(e.bins.thirdParty, "cozystack")
	stageStart := time.Now()
	e.ensureFlux(t)
	e.ensureClusterChart(t)
	e.applyRealChartCRDs(t, cozy)

	objs := e.render(t, e.fleetDir(t, "realchart"))
	rendered := find(objs, "HelmRelease", realTenant, realCluster)
	if rendered == nil {
		t.Fatalf("testdata/realchart renders no cluster HelmRelease %s/%s", realTenant, realCluster)
	}
	e.createInstanceTypes(t, cozy, rendered)
	nss := tenantNamespaces(objs)
	e.namespaces(nss...)
	for _, ns := range nss {
		e.writeCozystackValues(t, ns)
	}
	e.serveRealChart(t, cozy)
	hooks := e.completeHookJobs(t, realTenant)

	// As in Releases: the fleet's account, then the render as that account
	// (the guard first); helm-controller installs the cluster as
	// computeplane-installer.
	e.bootstrapFleet(t, objs)
	installStart := time.Now()
	e.applyGuardFirst(t, objs)
	hr := e.waitReady(t, e.admin, helmV2, "HelmRelease", realTenant, realCluster, 3*time.Minute)
	t.Logf("helm-controller installed the real apps/kubernetes chart in %s (hook Jobs marked Complete: %v)",
		time.Since(installStart).Round(time.Millisecond), hooks.done())
	if errs := hooks.errors(); len(errs) > 0 {
		t.Errorf("marking the hook Jobs Complete: %s", strings.Join(errs, "; "))
	}
	if sa, _, _ := unstructured.NestedString(hr.Object, "spec", "serviceAccountName"); sa != installerAccount {
		t.Errorf("the live cluster HelmRelease runs as %q, want %q", sa, installerAccount)
	}

	record := e.helmRecord(t, realTenant, realCluster)
	made, err := record.Objects()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the release holds %d objects (manifest and hooks)", len(made))
	t.Run("AdmissionConfig", func(t *testing.T) { e.checkRealAdmission(t, objs, rendered) })
	t.Run("Addons", func(t *testing.T) { e.checkRealAddons(t, cozy) })
	t.Run("InstallerRBAC", func(t *testing.T) { e.checkInstallerRBAC(t, record, made) })
	t.Run("Workers", func(t *testing.T) { e.checkRealWorkers(t, objs, rendered) })
	t.Run("TenantCredentials", func(t *testing.T) { e.checkTenantCredentials(t, objs) })
	t.Logf("stage took %s", time.Since(stageStart).Round(time.Millisecond))
}

// applyRealChartCRDs applies the tree's CRDs with their conversion
// webhooks switched to None (no provider runs here; every kind the chart
// writes is served at its storage version) and the KubeVirt stand-ins.
func (e *env) applyRealChartCRDs(t *testing.T, cozy string) {
	t.Helper()
	var crds []*unstructured.Unstructured
	for _, f := range realChartCRDs {
		p := filepath.Join(cozy, "packages", "system", f)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := harness.Decode(untemplated(data))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			o.SetLabels(nil)
			o.SetAnnotations(nil)
			unstructured.RemoveNestedField(o.Object, "metadata", "labels")
			unstructured.RemoveNestedField(o.Object, "metadata", "annotations")
			_ = unstructured.SetNestedField(o.Object, map[string]any{"strategy": "None"}, "spec", "conversion")
			crds = append(crds, o)
		}
	}
	standIns, err := harness.DecodeFiles(kubevirtStandIns...)
	if err != nil {
		t.Fatal(err)
	}
	if err := harness.ApplyCRDObjects(e.ctx, e.admin, append(crds, standIns...)); err != nil {
		t.Fatal(err)
	}
	t.Logf("applied %d CRDs of Cozystack's system charts and %d stand-ins", len(crds), len(standIns))
}

// untemplated drops the lines of a chart's CRD template that hold Helm
// templating (cert-manager-crds wraps each CRD in an if and adds labels).
func untemplated(data []byte) []byte {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(l, "{{") {
			out = append(out, l)
		}
	}
	return []byte(strings.Join(out, "\n"))
}

// createInstanceTypes creates the VirtualMachineClusterInstancetypes the
// rendered node groups name, as Cozystack's kubevirt-instancetypes chart
// defines them: the chart looks each one up and fails without it.
func (e *env) createInstanceTypes(t *testing.T, cozy string, hr *unstructured.Unstructured) {
	t.Helper()
	groups, _, _ := unstructured.NestedMap(hr.Object, "spec", "values", "nodeGroups")
	want := map[string]bool{}
	for _, g := range groups {
		if m, ok := g.(map[string]any); ok {
			if it, ok := m["instanceType"].(string); ok {
				want[it] = true
			}
		}
	}
	p := filepath.Join(cozy, "packages", "system", "kubevirt-instancetypes", "templates", "instancetypes.yaml")
	all, err := harness.DecodeFiles(p)
	if err != nil {
		t.Fatal(err)
	}
	var picked []*unstructured.Unstructured
	for _, o := range all {
		if o.GetKind() == "VirtualMachineClusterInstancetype" && want[o.GetName()] {
			picked = append(picked, o)
		}
	}
	if len(picked) != len(want) {
		t.Fatalf("%s defines %d of the instance types %v", p, len(picked), slices.Sorted(maps.Keys(want)))
	}
	e.applyAll(t, e.admin, picked, false)
}

// realPackagesTree is the packages tree with the real apps/kubernetes
// chart: its charts/cozy-lib, a link to library/cozy-lib in the source tree,
// resolved into a folder, and library/cozy-lib beside it, which the
// rendered ArtifactGenerator copies to charts/cozy-lib.
func realPackagesTree(t *testing.T, cozy string) map[string][]byte {
	t.Helper()
	files, err := harness.ReadChartTree(filepath.Join(cozy, "packages", "apps", "kubernetes"), "apps/kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files["apps/kubernetes/charts/cozy-lib/Chart.yaml"]; !ok {
		t.Fatal("apps/kubernetes/charts/cozy-lib did not resolve to the cozy-lib chart")
	}
	lib, err := harness.ReadTree(filepath.Join(cozy, "packages", "library", "cozy-lib"), "library/cozy-lib")
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range lib {
		files[k] = v
	}
	return files
}

// serveRealChart publishes the real packages tree as cozystack-packages in
// place of the stand-in one and waits until source-watcher has rebuilt the
// cluster chart's ExternalArtifact from it. The stage's management cluster
// is its own: the real tree stays until the stage ends.
func (e *env) serveRealChart(t *testing.T, cozy string) {
	t.Helper()
	e.servePackages(t, realPackagesTree(t, cozy), clusterArtifact)
}

// hookJobs marks the Helm hook Jobs of a namespace Complete as they appear:
// nothing runs their pods (no kubelet, no job controller), and Helm waits
// for a hook Job to complete.
type hookJobs struct {
	mu         sync.Mutex
	completed  []string
	failedWith []string
}

func (h *hookJobs) done() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.completed)
}

func (h *hookJobs) errors() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.failedWith)
}

func (e *env) completeHookJobs(t *testing.T, ns string) *hookJobs {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	events, err := e.admin.Watch(ctx, jobV1, "Job", ns)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	h := &hookJobs{}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for ev := range events {
			if ev.Type != watch.Added || ev.Object.GetAnnotations()["helm.sh/hook"] == "" {
				continue
			}
			err := e.completeJob(ctx, ev.Object)
			h.mu.Lock()
			if err != nil {
				h.failedWith = append(h.failedWith, err.Error())
			} else {
				h.completed = append(h.completed, ev.Object.GetName())
			}
			h.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-stopped })
	return h
}

// completeJob writes the status the job controller writes for a Job whose
// one pod succeeded; Kubernetes 1.36 accepts Complete only after
// SuccessCriteriaMet, with a start and a completion time.
func (e *env) completeJob(ctx context.Context, job *unstructured.Unstructured) error {
	now := time.Now().UTC().Format(time.RFC3339)
	cond := func(typ string) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": "CompletionsReached",
			"message": "Reached expected number of succeeded pods", "lastProbeTime": now, "lastTransitionTime": now}
	}
	st := obj(jobV1, "Job", job.GetNamespace(), job.GetName(), map[string]any{"status": map[string]any{
		"startTime": now, "completionTime": now, "succeeded": int64(1), "ready": int64(0),
		"conditions": []any{cond("SuccessCriteriaMet"), cond("Complete")},
	}})
	_, _, err := e.admin.Apply(ctx, st, harness.ApplyOptions{Subresource: "status"})
	return err
}

// helmRecord reads Helm's record of the release's first version, which
// the rendered storageNamespace (by default the release's) keeps.
func (e *env) helmRecord(t *testing.T, ns, release string) *harness.HelmRecord {
	t.Helper()
	s := e.mustGet(t, e.admin, "v1", "Secret", ns, "sh.helm.release.v1."+release+".v1")
	rec, err := harness.ReadHelmRecord(s)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// checkRealAdmission: the rendered Pod Security admission configuration
// reaches the tenant's API server through the chart: the argument and the
// mount on the KamajiControlPlane's apiServer, the ConfigMap volume on its
// deployment, each as rendered, the file the argument names in the
// rendered ConfigMap.
func (e *env) checkRealAdmission(t *testing.T, objs []*unstructured.Unstructured, hr *unstructured.Unstructured) {
	kcp := e.mustGet(t, e.admin, "controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane", realTenant, realCluster)
	for _, c := range []struct{ values, live []string }{
		{[]string{"extraArgs"}, []string{"spec", "apiServer", "extraArgs"}},
		{[]string{"extraVolumeMounts"}, []string{"spec", "apiServer", "extraVolumeMounts"}},
		{[]string{"extraVolumes"}, []string{"spec", "deployment", "extraVolumes"}},
	} {
		want, found, _ := unstructured.NestedSlice(hr.Object, append([]string{"spec", "values", "controlPlane", "apiServer"}, c.values...)...)
		if !found || len(want) == 0 {
			t.Errorf("the rendered cluster release sets no controlPlane.apiServer.%s", c.values[0])
			continue
		}
		got, _, _ := unstructured.NestedSlice(kcp.Object, c.live...)
		for _, w := range want {
			if !slices.ContainsFunc(got, func(g any) bool { return cmp.Equal(jsonAny(w), jsonAny(g)) }) {
				t.Errorf("KamajiControlPlane %s/%s: %s lacks %v (has %v)", realTenant, realCluster, strings.Join(c.live, "."), w, got)
			}
		}
		t.Logf("KamajiControlPlane %s: %v", strings.Join(c.live, "."), got)
	}
	cm := find(objs, "ConfigMap", realTenant, "computeplane-admission")
	if cm == nil {
		t.Fatal("the render has no ConfigMap computeplane-admission")
	}
	args, _, _ := unstructured.NestedStringSlice(kcp.Object, "spec", "apiServer", "extraArgs")
	const flag = "--admission-control-config-file="
	var file string
	for _, a := range args {
		if strings.HasPrefix(a, flag) {
			file = strings.TrimPrefix(a, flag)
		}
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if _, ok := data[path.Base(file)]; file == "" || !ok {
		t.Errorf("the KamajiControlPlane's %s%q names no key of ConfigMap computeplane-admission (keys %v)", flag, file, slices.Sorted(maps.Keys(data)))
	}
	mounts, _, _ := unstructured.NestedSlice(kcp.Object, "spec", "apiServer", "extraVolumeMounts")
	mounted := false
	for _, m := range mounts {
		if mm, ok := m.(map[string]any); ok && mm["mountPath"] == path.Dir(file) && mm["name"] == "computeplane-admission" {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("no extraVolumeMount of computeplane-admission at %s on the KamajiControlPlane", path.Dir(file))
	}
}

func jsonAny(v any) any {
	return jsonRoundTrip(map[string]any{"v": v})["v"]
}

// checkRealAddons: the chart's addon HelmReleases, <cluster>-<addon> in
// the tenant namespace, each installing into the cluster through its admin
// kubeconfig, <cluster>-cilium among them; with every addon on (the
// fleet's operator values), their names are the chart's templates' and the
// function's reserved ones (pkg/model.ClusterAddonReleases).
func (e *env) checkRealAddons(t *testing.T, cozy string) {
	hrs, err := e.admin.List(e.ctx, helmV2, "HelmRelease", realTenant, "")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, hr := range hrs {
		name := hr.GetName()
		addon, ok := strings.CutPrefix(name, realCluster+"-")
		// The function's own releases (computeplane-baseline, which shares
		// the cluster's prefix) are not the chart's.
		if !ok || hr.GetLabels()[harness.ManagedBy] == "computeplane-fn" {
			continue
		}
		live = append(live, addon)
		ref, _, _ := unstructured.NestedString(hr.Object, "spec", "kubeConfig", "secretRef", "name")
		key, _, _ := unstructured.NestedString(hr.Object, "spec", "kubeConfig", "secretRef", "key")
		if ref != realCluster+"-admin-kubeconfig" || key != "super-admin.svc" {
			t.Errorf("addon HelmRelease %s/%s: kubeConfig.secretRef %s/%s, want %s-admin-kubeconfig/super-admin.svc", realTenant, name, ref, key, realCluster)
		}
		if got := hr.GetLabels()["cozystack.io/target-cluster-name"]; got != realCluster {
			t.Errorf("addon HelmRelease %s/%s: label cozystack.io/target-cluster-name %q, want %q", realTenant, name, got, realCluster)
		}
	}
	sort.Strings(live)
	t.Logf("the chart created %d addon HelmReleases: %v", len(live), live)
	if !slices.Contains(live, "cilium") {
		t.Errorf("no addon HelmRelease %s/%s-cilium", realTenant, realCluster)
	}
	templates := chartAddonNames(t, filepath.Join(cozy, "packages", "apps", "kubernetes", "templates", "helmreleases"))
	if d := cmp.Diff(templates, live); d != "" {
		t.Errorf("addon HelmReleases: the chart's templates (-) against what it created with every addon on (+):\n%s", d)
	}
	reserved := reservedAddonReleases(t)
	if d := cmp.Diff(reserved, live); d != "" {
		t.Errorf("addon release names: the function's reserved ones (pkg/model.ClusterAddonReleases, -) against the real chart's (+):\n%s", d)
	}
}

// chartAddonNames are the <addon> of the metadata.name
// {{ .Release.Name }}-<addon> of every HelmRelease in the chart's
// templates/helmreleases.
func chartAddonNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates in %s: %v", dir, err)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs := strings.Split(string(data), "\n---")
		for _, d := range docs {
			if !strings.Contains(d, "kind: HelmRelease") {
				continue
			}
			for _, l := range strings.Split(d, "\n") {
				if rest, ok := strings.CutPrefix(l, "  name: {{ .Release.Name }}-"); ok {
					out = append(out, strings.TrimSpace(rest))
					break
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// reservedAddonReleases reads the function's list of the chart's addon
// releases, pkg/model.ClusterAddonReleases, from its source (the suite is a
// module of its own and does not import the function's packages).
func reservedAddonReleases(t *testing.T) []string {
	t.Helper()
	p := filepath.Join("..", "..", "pkg", "model", "reserved.go")
	f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "ClusterAddonReleases" || len(vs.Values) != 1 {
			return true
		}
		if lit, ok := vs.Values[0].(*ast.CompositeLit); ok {
			for _, el := range lit.Elts {
				if bl, ok := el.(*ast.BasicLit); ok {
					if s, err := strconv.Unquote(bl.Value); err == nil {
						out = append(out, s)
					}
				}
			}
		}
		return false
	})
	if len(out) == 0 {
		t.Fatalf("found no ClusterAddonReleases in %s", p)
	}
	sort.Strings(out)
	return out
}

// checkInstallerRBAC: every object of the release (manifest and hooks,
// pre-delete ones included) is one the rendered installer's RBAC lets it
// create, update and patch, asked of the management API server
// (SubjectAccessReview) for that account, after two controls it must be
// refused; and every object the install created was created as that
// account, by the API server's audit log (helm-controller impersonates it;
// the install also passed RBAC's escalation checks of the Roles and
// bindings, which a review does not ask).
func (e *env) checkInstallerRBAC(t *testing.T, record *harness.HelmRecord, made []*unstructured.Unstructured) {
	user := harness.ServiceAccount(realTenant, installerAccount)
	groups := []any{"system:serviceaccounts", "system:serviceaccounts:" + realTenant, "system:authenticated"}
	review := func(attrs map[string]any) (bool, string) {
		t.Helper()
		sar := obj("authorization.k8s.io/v1", "SubjectAccessReview", "", "", map[string]any{"spec": map[string]any{
			"user": user, "groups": groups, "resourceAttributes": attrs,
		}})
		got, err := e.admin.Create(e.ctx, sar)
		if err != nil {
			t.Fatal(err)
		}
		ok, _, _ := unstructured.NestedBool(got.Object, "status", "allowed")
		reason, _, _ := unstructured.NestedString(got.Object, "status", "reason")
		return ok, reason
	}
	// The control: the account may not create what the chart does not
	// make (a namespace, a Secret elsewhere).
	for _, attrs := range []map[string]any{
		{"group": "", "version": "v1", "resource": "namespaces", "verb": "create"},
		{"group": "", "version": "v1", "resource": "secrets", "verb": "create", "namespace": "tenant-root"},
	} {
		if ok, _ := review(attrs); ok {
			t.Fatalf("the review allows %s the control %v: it proves nothing", user, attrs)
		}
	}
	checked := 0
	kinds := map[string]int{}
	for _, o := range made {
		gvr, ns, err := e.resourceOf(o)
		if err != nil {
			t.Errorf("%s: %v", harness.Describe(o), err)
			continue
		}
		kinds[o.GetKind()]++
		for _, verb := range []string{"create", "update", "patch"} {
			attrs := map[string]any{"group": gvr.Group, "version": gvr.Version, "resource": gvr.Resource, "verb": verb, "namespace": ns}
			if verb != "create" {
				attrs["name"] = o.GetName()
			}
			if ok, reason := review(attrs); !ok {
				t.Errorf("%s cannot %s %s %s/%s (%s): %s", user, verb, gvr.Resource, ns, o.GetName(), harness.Describe(o), reason)
			}
			checked++
		}
	}
	t.Logf("%d reviews of %d objects as %s, by kind: %v", checked, len(made), user, kinds)
	// Who made them: the audit log of the management API server names the
	// user helm-controller impersonated for each object the install
	// created (the manifest and the install hooks); the objects themselves
	// record only its field manager.
	createdBy := map[string]int{}
	installed, err := record.Objects("pre-install", "post-install")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range installed {
		gvr, ns, err := e.resourceOf(o)
		if err != nil {
			continue
		}
		who := creators(t, e.auditLog(), gvr.Resource, ns, o.GetName())
		if len(who) == 0 {
			t.Errorf("the audit log names no creator of %s %s/%s", gvr.Resource, ns, o.GetName())
		}
		for _, w := range who {
			createdBy[w]++
			if w != user {
				t.Errorf("%s %s/%s was created by %s, not the installer", gvr.Resource, ns, o.GetName(), w)
			}
		}
	}
	t.Logf("creators of the %d objects the install made (audit log): %v", len(installed), createdBy)
	managers := map[string]bool{}
	for _, o := range made {
		ns := o.GetNamespace()
		if ns == "" {
			ns = realTenant
		}
		got, _ := e.admin.Get(e.ctx, o.GetAPIVersion(), o.GetKind(), ns, o.GetName())
		if got == nil {
			got, _ = e.admin.Get(e.ctx, o.GetAPIVersion(), o.GetKind(), "", o.GetName())
		}
		if got == nil {
			continue
		}
		for _, mf := range got.GetManagedFields() {
			managers[fmt.Sprintf("%s (%s)", mf.Manager, mf.Operation)] = true
		}
	}
	t.Logf("field managers of the release's objects: %v", slices.Sorted(maps.Keys(managers)))
}

// checkRealWorkers: what the chart itself puts on the workers. Its
// KubevirtMachineTemplates label the VM's pods (the VMI template) with
// cluster.x-k8s.io/deployment-name and the app labels, not with
// cluster.x-k8s.io/cluster-name, which the egress policy and the guard
// select on: CAPK sets that one when it creates the VirtualMachine.
func (e *env) checkRealWorkers(t *testing.T, objs []*unstructured.Unstructured, hr *unstructured.Unstructured) {
	kmts, err := e.admin.List(e.ctx, "infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachineTemplate", realTenant, "")
	if err != nil {
		t.Fatal(err)
	}
	groups, _, _ := unstructured.NestedMap(hr.Object, "spec", "values", "nodeGroups")
	if len(kmts) != len(groups) {
		t.Errorf("%d KubevirtMachineTemplates for %d node groups", len(kmts), len(groups))
	}
	for _, k := range kmts {
		vm, _, _ := unstructured.NestedStringMap(k.Object, "spec", "template", "spec", "virtualMachineTemplate", "metadata", "labels")
		pod, _, _ := unstructured.NestedStringMap(k.Object, "spec", "template", "spec", "virtualMachineTemplate", "spec", "template", "metadata", "labels")
		t.Logf("KubevirtMachineTemplate %s: VM labels %v; VMI (pod) labels %v", k.GetName(), vm, pod)
		group := ""
		for g := range groups {
			if strings.HasPrefix(k.GetName(), realCluster+"-"+g+"-") {
				group = g
			}
		}
		if want := realCluster + "-" + group; pod["cluster.x-k8s.io/deployment-name"] != want {
			t.Errorf("KubevirtMachineTemplate %s: pod label cluster.x-k8s.io/deployment-name %q, want %q", k.GetName(), pod["cluster.x-k8s.io/deployment-name"], want)
		}
		if pod["apps.cozystack.io/application.kind"] != "Kubernetes" || pod["apps.cozystack.io/application.name"] != realCluster {
			t.Errorf("KubevirtMachineTemplate %s: pod app labels %v, want kind Kubernetes, name %s", k.GetName(), pod, realCluster)
		}
		if _, ok := pod["cluster.x-k8s.io/cluster-name"]; ok {
			t.Errorf("KubevirtMachineTemplate %s: the chart sets cluster.x-k8s.io/cluster-name itself now; docs/guard.md says CAPK does", k.GetName())
		}
		if _, ok := vm["cluster.x-k8s.io/cluster-name"]; ok {
			t.Errorf("KubevirtMachineTemplate %s: the chart sets the VM's cluster.x-k8s.io/cluster-name itself now; docs/guard.md says CAPK does", k.GetName())
		}
	}
	// CAPK's value: the name of the CAPI Cluster, which the chart names
	// after the release.
	e.mustGet(t, e.admin, "cluster.x-k8s.io/v1beta1", "Cluster", realTenant, realCluster)
	pol := find(objs, "CiliumNetworkPolicy", realTenant, "computeplane-egress")
	if pol == nil {
		t.Fatal("the render has no CiliumNetworkPolicy computeplane-egress")
	}
	sel, _, _ := unstructured.NestedStringMap(pol.Object, "spec", "endpointSelector", "matchLabels")
	if d := cmp.Diff(map[string]string{"cluster.x-k8s.io/cluster-name": realCluster}, sel); d != "" {
		t.Errorf("computeplane-egress selects (-want +got):\n%s", d)
	}
}

// resourceOf is the resource of an object the chart made and the namespace
// Helm put it in: the release's (realTenant) where the manifest names none;
// empty for a cluster-scoped one.
func (e *env) resourceOf(o *unstructured.Unstructured) (schema.GroupVersionResource, string, error) {
	gvr, namespaced, err := e.admin.Resource(o.GetAPIVersion(), o.GetKind())
	if err != nil || !namespaced {
		return gvr, "", err
	}
	if ns := o.GetNamespace(); ns != "" {
		return gvr, ns, nil
	}
	return gvr, realTenant, nil
}

// checkTenantCredentials: no subject the chart grants a tenant's access to
// (cozy-lib's subjectsForTenantAndAccessLevel: the service account and the
// use, admin and super-admin groups of the tenant and of each ancestor) may
// read any of the cluster's credentials, asked of the management API server
// (SubjectAccessReview) with the live RBAC objects the real chart installed
// through the function's post-renderers. The chart's dashboard Role, bound
// to those subjects, grants the admin kubeconfig; the post-renderer takes
// that rule out. The control: the same subjects still read the objects the
// Role's other rules name (the release's Service), so the review sees the
// Role. Cozystack's own tenant roles (cozy:tenant:*) are not installed in
// this suite; they are the platform's.
func (e *env) checkTenantCredentials(t *testing.T, objs []*unstructured.Unstructured) {
	credentials := e.guardCredentials(t, objs)
	type subject struct {
		user   string
		groups []any
	}
	var subjects []subject
	for _, tenant := range []string{realTenant, "tenant-root"} {
		subjects = append(subjects, subject{harness.ServiceAccount(tenant, tenant), []any{"system:serviceaccounts", "system:serviceaccounts:" + tenant, "system:authenticated"}})
		for _, level := range []string{"use", "admin", "super-admin"} {
			subjects = append(subjects, subject{"alice", []any{tenant + "-" + level, "system:authenticated"}})
		}
	}
	review := func(s subject, attrs map[string]any) bool {
		t.Helper()
		sar := obj("authorization.k8s.io/v1", "SubjectAccessReview", "", "", map[string]any{"spec": map[string]any{
			"user": s.user, "groups": s.groups, "resourceAttributes": attrs,
		}})
		got, err := e.admin.Create(e.ctx, sar)
		if err != nil {
			t.Fatal(err)
		}
		ok, _, _ := unstructured.NestedBool(got.Object, "status", "allowed")
		return ok
	}
	role := e.mustGet(t, e.admin, "rbac.authorization.k8s.io/v1", "Role", realTenant, realCluster+"-dashboard-resources")
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	t.Logf("the chart's dashboard Role, as installed, has %d rules", len(rules))
	reviews := 0
	for _, s := range subjects {
		if !review(s, map[string]any{"group": "", "version": "v1", "resource": "services", "verb": "get", "namespace": realTenant, "name": realCluster}) {
			t.Errorf("control: %s %v cannot get Service %s/%s, which the chart's dashboard Role grants: the review does not see the Role", s.user, s.groups, realTenant, realCluster)
		}
		for _, name := range credentials {
			for _, verb := range []string{"get", "list", "watch"} {
				reviews++
				if review(s, map[string]any{"group": "", "version": "v1", "resource": "secrets", "verb": verb, "namespace": realTenant, "name": name}) {
					t.Errorf("%s %v may %s Secret %s/%s, one of the cluster's credentials", s.user, s.groups, verb, realTenant, name)
				}
			}
		}
	}
	t.Logf("%d reviews: %d tenant subjects, %d credential Secrets, get/list/watch; none allowed", reviews, len(subjects), len(credentials))
}

// guardCredentials are the names of the cluster's credential Secrets
// that the rendered guard knows: the variable credentials of the fleet's
// guard as rendered for Kubernetes 1.36, each of which the guard of objs
// names too (where the variables are inlined, below 1.36, as a string of
// its expressions).
func (e *env) guardCredentials(t *testing.T, objs []*unstructured.Unstructured) []string {
	t.Helper()
	dir := fleetDir(t, "realchart")
	editSpec(t, filepath.Join(dir, "config.yaml"), func(spec map[string]any) {
		spec["platform"] = map[string]any{"kubernetesVersion": newestKubernetes}
	})
	var names []string
	for _, p := range ofKind(e.render(t, dir), "ValidatingAdmissionPolicy") {
		vars, _, _ := unstructured.NestedSlice(p.Object, "spec", "variables")
		for _, v := range vars {
			if m, _ := v.(map[string]any); m["name"] == "credentials" {
				if err := json.Unmarshal([]byte(m["expression"].(string)), &names); err != nil {
					t.Fatalf("the guard's credentials: %v", err)
				}
			}
		}
	}
	if !slices.Contains(names, realCluster+"-admin-kubeconfig") {
		t.Fatalf("the guard's credentials %v lack %s-admin-kubeconfig", names, realCluster)
	}
	policies := ofKind(objs, "ValidatingAdmissionPolicy")
	if len(policies) == 0 {
		t.Fatal("the render has no guard")
	}
	var text strings.Builder
	for _, field := range []string{"variables", "validations"} {
		list, _, _ := unstructured.NestedSlice(policies[0].Object, "spec", field)
		for _, e := range list {
			m, _ := e.(map[string]any)
			expr, _ := m["expression"].(string)
			text.WriteString(expr)
		}
	}
	for _, n := range names {
		if !strings.Contains(text.String(), `"`+n+`"`) {
			t.Errorf("the guard's rules do not name the credential %s", n)
		}
	}
	return names
}
