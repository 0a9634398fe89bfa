package cluster

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// The RealChartPools stage installs the SplitPools render of
// testdata/realpools (tenant sigma, node groups md0 and md1) with Cozystack's
// split charts at cozystack#3315's merge (../shared/third_party/cozystack-pools):
// the cluster release from its apps/kubernetes, each pool release from its
// apps/kubernetes-nodes, with the real helm-controller impersonating the
// rendered computeplane-installer, as RealChart installs the Combined line.
//
// That chart attaches a pool to the CAPI cluster kubernetes-<cluster> and
// reads no clusterReleaseName, so with the function's values (cluster and
// clusterReleaseName computeplane) its pool objects name the cluster
// kubernetes-computeplane, which does not exist: the stage shows exactly
// that (SnapshotChart). It then serves the same chart with its one helper
// that names the parent cluster reading clusterReleaseName when it is set
// (changed at test time, in memory: what docs/platforms.md requires of the
// chart), and shows every pool object of the same releases naming the
// ComputePlane's cluster (ClusterReleaseName). Last, a KubernetesNodes
// release made through Cozystack's API (as cozystack-api) that would be a
// pool of the ComputePlane is refused by the guard (G6).
const (
	poolArtifact = "cozystack-computeplane-application-kubevirt-kubernetes-nodes"
	poolPrefix   = "kubernetes-nodes-" + realCluster + "-"
)

// poolsHelper is the line of apps/kubernetes-nodes' _helpers.tpl (at
// cozystack#3315's merge) that names the parent cluster, and the line a
// chart that reads clusterReleaseName would have instead.
const (
	poolsHelper        = `{{- printf "kubernetes-%s" .Values.cluster -}}`
	poolsHelperRelease = `{{- default (printf "kubernetes-%s" .Values.cluster) .Values.clusterReleaseName -}}`
)

func (e *env) testRealChartPools(t *testing.T) {
	if e.bins.thirdParty == "" {
		t.Skip("E2E_THIRD_PARTY is not set: run the suite with `make e2e`")
	}
	cozy := filepath.Join(e.bins.thirdParty, "cozystack")
	split := filepath.Join(e.bins.thirdParty, "cozystack-pools")
	stageStart := time.Now()
	e.ensureFlux(t)
	e.ensureClusterChart(t)
	e.applyRealChartCRDs(t, cozy)

	objs := e.render(t, e.fleetDir(t, "realpools"))
	var pools []*unstructured.Unstructured
	for _, hr := range ofKind(objs, "HelmRelease") {
		if strings.HasPrefix(hr.GetName(), poolPrefix) {
			pools = append(pools, hr)
		}
	}
	if len(pools) != 2 {
		t.Fatalf("testdata/realpools renders %d pool releases, want 2 (md0, md1)", len(pools))
	}
	cluster := find(objs, "HelmRelease", realTenant, realCluster)
	if cluster == nil {
		t.Fatalf("testdata/realpools renders no cluster HelmRelease %s/%s", realTenant, realCluster)
	}
	if _, found, _ := unstructured.NestedMap(cluster.Object, "spec", "values", "nodeGroups"); found {
		t.Errorf("the cluster release holds nodeGroups on the SplitPools line")
	}
	e.createPoolInstanceTypes(t, cozy, pools)
	nss := tenantNamespaces(objs)
	e.namespaces(nss...)
	for _, ns := range nss {
		e.writeCozystackValues(t, ns)
	}
	e.servePackages(t, splitPackagesTree(t, split, false), clusterArtifact)
	hooks := e.completeHookJobs(t, realTenant)

	e.bootstrapFleet(t, objs)
	installStart := time.Now()
	e.applyGuardFirst(t, objs)
	e.waitFor(t, e.admin, sourceV1, "ExternalArtifact", cozySystem, poolArtifact, time.Minute, func(u *unstructured.Unstructured) (bool, string) {
		if u == nil {
			return false, "not found"
		}
		url, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "url")
		return url != "", "no artifact yet"
	})
	e.waitReady(t, e.admin, helmV2, "HelmRelease", realTenant, realCluster, 3*time.Minute)
	for _, p := range pools {
		hr := e.waitReady(t, e.admin, helmV2, "HelmRelease", realTenant, p.GetName(), 3*time.Minute)
		if sa, _, _ := unstructured.NestedString(hr.Object, "spec", "serviceAccountName"); sa != installerAccount {
			t.Errorf("pool release %s runs as %q, want %q", p.GetName(), sa, installerAccount)
		}
	}
	t.Logf("helm-controller installed the split apps/kubernetes and %d apps/kubernetes-nodes releases in %s (hook Jobs marked Complete: %v)",
		len(pools), time.Since(installStart).Round(time.Millisecond), hooks.done())
	if errs := hooks.errors(); len(errs) > 0 {
		t.Errorf("marking the hook Jobs Complete: %s", strings.Join(errs, "; "))
	}
	// The cluster chart's CAPI Cluster, named after its release: what a
	// pool must attach to.
	e.mustGet(t, e.admin, "cluster.x-k8s.io/v1beta1", "Cluster", realTenant, realCluster)

	t.Run("SnapshotChart", func(t *testing.T) {
		for _, p := range pools {
			e.checkPoolObjects(t, p, 1, "kubernetes-"+realCluster)
		}
		if c, _ := e.admin.Get(e.ctx, "cluster.x-k8s.io/v1beta1", "Cluster", realTenant, "kubernetes-"+realCluster); c != nil {
			t.Errorf("a CAPI Cluster kubernetes-%s exists", realCluster)
		}
		t.Logf("apps/kubernetes-nodes at cozystack#3315 reads no clusterReleaseName: its pools name the cluster kubernetes-%s, not the ComputePlane's %s, and no worker of theirs would join it", realCluster, realCluster)
	})
	t.Run("ClusterReleaseName", func(t *testing.T) {
		e.servePackages(t, splitPackagesTree(t, split, true), poolArtifact)
		for _, p := range pools {
			e.requestReconcile(t, p)
		}
		for _, p := range pools {
			e.waitFor(t, e.admin, "v1", "Secret", realTenant, "sh.helm.release.v1."+p.GetName()+".v2", 3*time.Minute,
				func(u *unstructured.Unstructured) (bool, string) { return u != nil, "no second version of the release" })
			e.waitReady(t, e.admin, helmV2, "HelmRelease", realTenant, p.GetName(), 3*time.Minute)
			e.checkPoolObjects(t, p, 2, realCluster)
		}
	})
	t.Run("TenantPoolRefused", func(t *testing.T) { e.checkTenantPoolRefused(t) })
	t.Logf("stage took %s", time.Since(stageStart).Round(time.Millisecond))
}

// createPoolInstanceTypes creates the VirtualMachineClusterInstancetypes
// the pool releases name, as Cozystack's kubevirt-instancetypes chart
// defines them: the pool chart looks each one up and fails without it.
func (e *env) createPoolInstanceTypes(t *testing.T, cozy string, pools []*unstructured.Unstructured) {
	t.Helper()
	want := map[string]bool{}
	for _, p := range pools {
		if it, _, _ := unstructured.NestedString(p.Object, "spec", "values", "instanceType"); it != "" {
			want[it] = true
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

// splitPackagesTree is the packages tree of the split: apps/kubernetes and
// apps/kubernetes-nodes at cozystack#3315, their charts/cozy-lib links
// resolved, and library/cozy-lib beside them, which the rendered
// ArtifactGenerator copies into each. With readsReleaseName the pool
// chart's helper that names the parent cluster reads clusterReleaseName.
func splitPackagesTree(t *testing.T, split string, readsReleaseName bool) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, chart := range []string{"kubernetes", "kubernetes-nodes"} {
		tree, err := harness.ReadChartTree(filepath.Join(split, "packages", "apps", chart), "apps/"+chart)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(files, tree)
	}
	lib, err := harness.ReadTree(filepath.Join(split, "packages", "library", "cozy-lib"), "library/cozy-lib")
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(files, lib)
	if readsReleaseName {
		const helpers = "apps/kubernetes-nodes/templates/_helpers.tpl"
		text := string(files[helpers])
		if strings.Count(text, poolsHelper) != 1 {
			t.Fatalf("%s: the helper line %q is not there once; the snapshot changed", helpers, poolsHelper)
		}
		files[helpers] = []byte(strings.Replace(text, poolsHelper, poolsHelperRelease, 1))
	}
	return files
}

// servePackages publishes files as cozystack-packages and waits until
// source-watcher has rebuilt each of the named ExternalArtifacts (in
// cozy-system) from them. Name only the charts whose files change: an
// artifact's revision is its content's digest, so an unchanged chart keeps
// its revision.
func (e *env) servePackages(t *testing.T, files map[string][]byte, artifacts ...string) {
	t.Helper()
	revision := func(name string) string {
		ea, _ := e.admin.Get(e.ctx, sourceV1, "ExternalArtifact", cozySystem, name)
		if ea == nil {
			return ""
		}
		r, _, _ := unstructured.NestedString(ea.Object, "status", "artifact", "revision")
		return r
	}
	before := map[string]string{}
	for _, a := range artifacts {
		before[a] = revision(a)
	}
	e.publishPackages(t, files)
	for _, a := range artifacts {
		var now string
		err := harness.Poll(e.ctx, time.Minute, 250*time.Millisecond, func() (bool, string) {
			now = revision(a)
			return now != "" && now != before[a], "revision still " + before[a]
		})
		if err != nil {
			t.Fatalf("ExternalArtifact %s/%s: %v%s", cozySystem, a, err, e.logs(a))
		}
		t.Logf("source-watcher rebuilt the ExternalArtifact %s (%s)", a, now)
	}
}

// requestReconcile asks helm-controller to reconcile a release now, as
// `flux reconcile helmrelease` does: a merge patch of the annotation. (A
// server-side apply of the annotation alone, as the suite's field manager
// that applied the release, would drop the spec fields it owns.)
func (e *env) requestReconcile(t *testing.T, hr *unstructured.Unstructured) {
	t.Helper()
	patch := []byte(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"}}}`)
	if _, err := e.admin.MergePatch(e.ctx, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName(), patch); err != nil {
		t.Fatal(err)
	}
}

// checkPoolObjects checks what version version of a pool release holds
// against the cluster its objects name: the MachineDeployment and the
// MachineHealthCheck <cluster>-<pool> with spec.clusterName <cluster> (and
// the MachineDeployment's machines too), the KubevirtMachineTemplate
// <cluster>-<pool>-<hash> that the MachineDeployment names and the
// WorkloadMonitor <cluster>-<pool>, each in the API server as the release
// made it.
func (e *env) checkPoolObjects(t *testing.T, hr *unstructured.Unstructured, version int, cluster string) {
	t.Helper()
	pool := strings.TrimPrefix(hr.GetName(), poolPrefix)
	s := e.mustGet(t, e.admin, "v1", "Secret", realTenant, fmt.Sprintf("sh.helm.release.v1.%s.v%d", hr.GetName(), version))
	rec, err := harness.ReadHelmRecord(s)
	if err != nil {
		t.Fatal(err)
	}
	made, err := rec.Objects()
	if err != nil {
		t.Fatal(err)
	}
	base := cluster + "-" + pool
	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range made {
		switch o.GetKind() {
		case "MachineDeployment", "MachineHealthCheck", "KubevirtMachineTemplate", "WorkloadMonitor":
			if kinds[o.GetKind()] != nil {
				t.Errorf("release %s v%d: two %ss", hr.GetName(), version, o.GetKind())
			}
			kinds[o.GetKind()] = o
		}
	}
	for _, k := range []string{"MachineDeployment", "MachineHealthCheck", "KubevirtMachineTemplate", "WorkloadMonitor"} {
		o := kinds[k]
		if o == nil {
			t.Errorf("release %s v%d makes no %s", hr.GetName(), version, k)
			continue
		}
		name := o.GetName()
		if k == "KubevirtMachineTemplate" {
			if !strings.HasPrefix(name, base+"-") {
				t.Errorf("release %s v%d: KubevirtMachineTemplate %s, want %s-<hash>", hr.GetName(), version, name, base)
			}
		} else if name != base {
			t.Errorf("release %s v%d: %s %s, want %s", hr.GetName(), version, k, name, base)
		}
		live := e.mustGet(t, e.admin, o.GetAPIVersion(), k, realTenant, name)
		switch k {
		case "MachineDeployment":
			for _, path := range [][]string{{"spec", "clusterName"}, {"spec", "template", "spec", "clusterName"}} {
				if got, _, _ := unstructured.NestedString(live.Object, path...); got != cluster {
					t.Errorf("MachineDeployment %s: %s is %q, want %q", name, strings.Join(path, "."), got, cluster)
				}
			}
			if kmt := kinds["KubevirtMachineTemplate"]; kmt != nil {
				if got, _, _ := unstructured.NestedString(live.Object, "spec", "template", "spec", "infrastructureRef", "name"); got != kmt.GetName() {
					t.Errorf("MachineDeployment %s names KubevirtMachineTemplate %q, the release made %q", name, got, kmt.GetName())
				}
			}
		case "MachineHealthCheck":
			if got, _, _ := unstructured.NestedString(live.Object, "spec", "clusterName"); got != cluster {
				t.Errorf("MachineHealthCheck %s: spec.clusterName %q, want %q", name, got, cluster)
			}
		}
		if owner := live.GetAnnotations()["meta.helm.sh/release-name"]; owner != hr.GetName() {
			t.Errorf("%s %s is Helm's release %q, want %q", k, name, owner, hr.GetName())
		}
	}
	t.Logf("release %s v%d: its MachineDeployment, MachineHealthCheck, KubevirtMachineTemplate and WorkloadMonitor name the cluster %s", hr.GetName(), version, cluster)
}

// checkTenantPoolRefused: on the real API server, with the rendered guard,
// a KubernetesNodes release that cozystack-api would make for a tenant is
// refused when it would be a pool of the ComputePlane (named as its pools,
// or valued to join its cluster), and admitted when it is a pool of a
// cluster of the tenant's own.
func (e *env) checkTenantPoolRefused(t *testing.T) {
	// cozystack-api's rights on Cozystack: it makes every app's release,
	// so RBAC admits it and only the guard can refuse.
	if err := harness.GrantClusterAdmin(e.ctx, e.admin, cozystackAPI); err != nil {
		t.Fatal(err)
	}
	api := harness.MustClient(t, e.mgmt, cozystackAPI, e.mgmt.Impersonating(cozystackAPI))
	pool := func(name string, values map[string]any) *unstructured.Unstructured {
		return obj(helmV2, "HelmRelease", realTenant, name, map[string]any{
			"metadata": map[string]any{"name": name, "namespace": realTenant, "labels": map[string]any{
				"apps.cozystack.io/application.kind":  "KubernetesNodes",
				"apps.cozystack.io/application.group": "apps.cozystack.io",
				"apps.cozystack.io/application.name":  strings.TrimPrefix(name, "kubernetes-nodes-"),
			}},
			"spec": map[string]any{"interval": "5m", "values": values,
				"chartRef": map[string]any{"kind": "ExternalArtifact", "name": "cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes", "namespace": cozySystem}},
		})
	}
	for _, c := range []struct {
		name    string
		obj     *unstructured.Unstructured
		refused bool
	}{
		{"named as the ComputePlane's pools", pool(poolPrefix+"md9", map[string]any{"cluster": realCluster, "minReplicas": int64(1)}), true},
		{"attached by clusterReleaseName", pool("kubernetes-nodes-mine-md0", map[string]any{"cluster": "mine", "clusterReleaseName": realCluster}), true},
		{"a pool of the tenant's own cluster", pool("kubernetes-nodes-mine-md0", map[string]any{"cluster": "mine"}), false},
	} {
		_, _, err := api.Apply(e.ctx, c.obj, harness.ApplyOptions{DryRun: true})
		switch {
		case c.refused && err == nil:
			t.Errorf("%s: admitted, want refused", c.name)
		case c.refused && !strings.Contains(err.Error(), "is a worker pool of the tenant's ComputePlane"):
			t.Errorf("%s: refused for another reason: %v", c.name, err)
		case !c.refused && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.refused:
			t.Logf("%s: %v", c.name, err)
		}
	}
}

// The RealChartPoolsMove stage moves tenant sigma's ComputePlane from the
// Combined line to SplitPools with the real charts, in the steps of
// docs/flux-wiring.md ("Moving to split worker pools"): the render with
// poolMigration: Pin installs Cozystack's Combined apps/kubernetes
// (3c780acd); the platform's upgrade serves the split charts of
// cozystack#3315 (its apps/kubernetes-nodes reading clusterReleaseName, as
// the function requires: see RealChartPools), under which the cluster
// release upgrades to its control plane alone; the render with
// clusterChart: SplitPools, poolMigration: Adopt installs the pool
// releases. Every worker object the Combined chart made (the
// MachineDeployments, MachineHealthChecks, KubevirtMachineTemplates and
// WorkloadMonitors of md0 and md1) must keep its UID through both steps,
// and end owned by its pool release with the spec it had: no
// MachineDeployment template changes, so no machine is replaced. No CAPI
// or KubeVirt controller runs here, so there are no Machines and no VMs to
// watch: their MachineDeployments and templates are what makes them.
func (e *env) testRealChartPoolsMove(t *testing.T) {
	if e.bins.thirdParty == "" {
		t.Skip("E2E_THIRD_PARTY is not set: run the suite with `make e2e`")
	}
	cozy := filepath.Join(e.bins.thirdParty, "cozystack")
	split := filepath.Join(e.bins.thirdParty, "cozystack-pools")
	stageStart := time.Now()
	e.ensureFlux(t)
	e.ensureClusterChart(t)
	e.applyRealChartCRDs(t, cozy)

	step := func(chart, migration string) []*unstructured.Unstructured {
		dir := e.fleetDir(t, "realpools")
		editSpec(t, filepath.Join(dir, "config.yaml"), func(spec map[string]any) {
			platform, _ := spec["platform"].(map[string]any)
			platform["clusterChart"], platform["poolMigration"] = chart, migration
		})
		return e.render(t, dir)
	}

	// 1. Pin, on the Combined chart.
	pinned := step("Combined", "Pin")
	cluster := find(pinned, "HelmRelease", realTenant, realCluster)
	if cluster == nil {
		t.Fatal("the Pin render has no cluster release")
	}
	e.createInstanceTypes(t, cozy, cluster)
	nss := tenantNamespaces(pinned)
	e.namespaces(nss...)
	for _, ns := range nss {
		e.writeCozystackValues(t, ns)
	}
	e.serveRealChart(t, cozy)
	hooks := e.completeHookJobs(t, realTenant)
	e.bootstrapFleet(t, pinned)
	e.applyGuardFirst(t, pinned)
	e.waitReady(t, e.admin, helmV2, "HelmRelease", realTenant, realCluster, 3*time.Minute)
	before := e.workerObjects(t)
	if len(before) < 8 {
		t.Fatalf("the Combined chart made %d worker objects for md0 and md1, want at least 8: %v", len(before), slices.Sorted(maps.Keys(before)))
	}
	for id, w := range before {
		if w.keep != "keep" {
			t.Errorf("%s is not pinned after the Pin render (helm.sh/resource-policy %q)", id, w.keep)
		}
	}
	t.Logf("Pin: the Combined chart's %d worker objects carry helm.sh/resource-policy: keep: %v", len(before), slices.Sorted(maps.Keys(before)))

	// 2. The platform upgrades: the split charts replace the Combined one.
	e.servePackages(t, splitPackagesTree(t, split, true), clusterArtifact)
	e.requestReconcile(t, cluster)
	e.waitFor(t, e.admin, "v1", "Secret", realTenant, "sh.helm.release.v1."+realCluster+".v2", 3*time.Minute,
		func(u *unstructured.Unstructured) (bool, string) {
			return u != nil, "the cluster release has no second version"
		})
	e.waitReady(t, e.admin, helmV2, "HelmRelease", realTenant, realCluster, 3*time.Minute)
	rec := e.helmRecordVersion(t, realTenant, realCluster, 2)
	made, err := rec.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range made {
		if _, ok := workerKinds[o.GetKind()]; ok && strings.HasPrefix(o.GetName(), realCluster+"-md") {
			t.Errorf("the split cluster chart still makes %s %s", o.GetKind(), o.GetName())
		}
	}
	e.compareWorkers(t, "after the platform's upgrade", before, e.workerObjects(t), "")

	// 3. Adopt, on the split charts.
	adopted := step("SplitPools", "Adopt")
	e.bootstrapFleet(t, adopted)
	e.applyGuardFirst(t, adopted)
	var pools []string
	for _, hr := range ofKind(adopted, "HelmRelease") {
		if strings.HasPrefix(hr.GetName(), poolPrefix) {
			pools = append(pools, hr.GetName())
		}
	}
	if len(pools) != 2 {
		t.Fatalf("the Adopt render has %d pool releases, want 2", len(pools))
	}
	for _, p := range pools {
		e.waitReady(t, e.admin, helmV2, "HelmRelease", realTenant, p, 3*time.Minute)
	}
	after := e.workerObjects(t)
	e.compareWorkers(t, "after Adopt", before, after, "pool")
	if errs := hooks.errors(); len(errs) > 0 {
		t.Errorf("marking the hook Jobs Complete: %s", strings.Join(errs, "; "))
	}
	t.Logf("stage took %s", time.Since(stageStart).Round(time.Millisecond))
}

// workerKinds are the kinds of a node group's worker objects, by their
// API version.
var workerKinds = map[string]string{
	"MachineDeployment":       "cluster.x-k8s.io/v1beta1",
	"MachineHealthCheck":      "cluster.x-k8s.io/v1beta1",
	"KubevirtMachineTemplate": "infrastructure.cluster.x-k8s.io/v1alpha1",
	"WorkloadMonitor":         "cozystack.io/v1alpha1",
}

// worker is what the move must keep of a worker object.
type worker struct {
	uid, owner, keep string
	// template is the spec.template of a MachineDeployment or a
	// KubevirtMachineTemplate, printed without its nulls (withoutNulls).
	template string
}

// workerObjects are the worker objects of the tenant's cluster in the API
// server, by "Kind/name": those of its node groups (the cluster's own
// WorkloadMonitor, named like the cluster, is not a worker's).
func (e *env) workerObjects(t *testing.T) map[string]worker {
	t.Helper()
	out := map[string]worker{}
	for kind, apiVersion := range workerKinds {
		objs, err := e.admin.List(e.ctx, apiVersion, kind, realTenant, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if !strings.HasPrefix(o.GetName(), realCluster+"-md") {
				continue
			}
			w := worker{uid: string(o.GetUID()), owner: o.GetAnnotations()["meta.helm.sh/release-name"], keep: o.GetAnnotations()["helm.sh/resource-policy"]}
			if tmpl, ok, _ := unstructured.NestedMap(o.Object, "spec", "template"); ok {
				w.template = fmt.Sprint(withoutNulls(tmpl))
			}
			out[kind+"/"+o.GetName()] = w
		}
	}
	return out
}

// withoutNulls is v without the map entries whose value is null: what a
// controller decoding the object into its Go types reads (a null and an
// absent field both decode to the zero value). apps/kubernetes-nodes
// writes virtualMachineTemplate.metadata.labels empty (null) for a pool
// without node labels, where the Combined chart wrote none; CAPK's CRD
// keeps unknown fields of that metadata as written, so the stored object
// differs by that null alone, and the VMs CAPK makes from it do not.
func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if x != nil {
				out[k] = withoutNulls(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutNulls(x)
		}
		return out
	}
	return v
}

// compareWorkers checks that every worker object of before is there with
// its UID and its MachineDeployment template, owned by the cluster release
// (owner "") or by its pool release (owner "pool").
func (e *env) compareWorkers(t *testing.T, when string, before, now map[string]worker, owner string) {
	t.Helper()
	for id, b := range before {
		n, ok := now[id]
		switch {
		case !ok:
			t.Errorf("%s: %s is gone", when, id)
			continue
		case n.uid != b.uid:
			t.Errorf("%s: %s was recreated (UID %s, was %s)", when, id, n.uid, b.uid)
		case n.template != b.template:
			t.Errorf("%s: %s's template changed, which changes the machines it makes:\n was %s\n now %s", when, id, b.template, n.template)
		}
		want := realCluster
		if owner == "pool" {
			_, name, _ := strings.Cut(id, "/")
			group := strings.TrimPrefix(name, realCluster+"-")
			group, _, _ = strings.Cut(group, "-")
			want = poolPrefix + group
		}
		if n.owner != want {
			t.Errorf("%s: %s is release %q's, want %q", when, id, n.owner, want)
		}
	}
	for id := range now {
		if _, ok := before[id]; !ok {
			t.Errorf("%s: %s is new (the pool chart renders it under a name the Combined chart did not)", when, id)
		}
	}
	t.Logf("%s: %d worker objects, each with its UID", when, len(before))
}

// helmRecordVersion reads Helm's record of a version of a release.
func (e *env) helmRecordVersion(t *testing.T, ns, release string, version int) *harness.HelmRecord {
	t.Helper()
	s := e.mustGet(t, e.admin, "v1", "Secret", ns, fmt.Sprintf("sh.helm.release.v1.%s.v%d", release, version))
	rec, err := harness.ReadHelmRecord(s)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}
