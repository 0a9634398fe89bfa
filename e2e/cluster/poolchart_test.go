package cluster

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// TestPoolChartLinkage (a test of its own, no control plane): Helm's own
// engine (helm.sh/helm/v4, the library helm-controller renders with)
// renders the pool chart of cozystack#3315 (../shared/third_party/cozystack-pools)
// with the values of each pool release the function renders for
// testdata/realpools, as helm-controller would install it:
//
//   - as the snapshot holds it (SnapshotChart), every pool object names
//     the cluster kubernetes-computeplane (the chart reads no
//     clusterReleaseName), which is not the ComputePlane's: exactly what the
//     RealChartPools stage installs;
//   - with its helper that names the parent cluster reading
//     clusterReleaseName (ClusterReleaseName, what docs/platforms.md
//     requires of the chart), every pool object names computeplane;
//   - and then (SameWorkersAsCombined) the pool objects are those the
//     Combined chart (Cozystack 3c780acd, ../shared/third_party/cozystack)
//     renders for the same node groups from the function's render of
//     testdata/realchart: the same kinds and names (the
//     KubevirtMachineTemplate's content-hash name among them) and the same
//     MachineDeployment spec, which is what lets the move of
//     docs/flux-wiring.md keep every worker. A difference is reported
//     field by field.
func TestPoolChartLinkage(t *testing.T) {
	third := os.Getenv("E2E_THIRD_PARTY")
	fn := os.Getenv("E2E_COMPUTEPLANE_FN")
	if third == "" || fn == "" {
		t.Fatal("E2E_THIRD_PARTY and E2E_COMPUTEPLANE_FN are not set: run the suite with `make e2e`")
	}
	cozy := filepath.Join(third, "cozystack")
	split := filepath.Join(third, "cozystack-pools")
	lookups := instanceTypeLookups(t, cozy)
	splitObjs := harness.Generated(harness.Render(t, fn, fleetDir(t, "realpools"), "config.yaml"))
	var pools []*unstructured.Unstructured
	for _, hr := range ofKind(splitObjs, "HelmRelease") {
		if strings.HasPrefix(hr.GetName(), poolPrefix) {
			pools = append(pools, hr)
		}
	}
	if len(pools) != 2 {
		t.Fatalf("testdata/realpools renders %d pool releases, want 2", len(pools))
	}
	render := func(t *testing.T, c *chartv2.Chart, hr *unstructured.Unstructured) map[string]*unstructured.Unstructured {
		t.Helper()
		values, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
		return renderChart(t, c, mergeValues(jsonRoundTrip(cozystackValues(realTenant)), jsonRoundTrip(values)), hr.GetName(), lookups)
	}

	t.Run("SnapshotChart", func(t *testing.T) {
		c := loadPoolChart(t, split, false)
		for _, hr := range pools {
			checkPoolLinkage(t, render(t, c, hr), strings.TrimPrefix(hr.GetName(), poolPrefix), "kubernetes-"+realCluster)
		}
	})
	patched := map[string]map[string]*unstructured.Unstructured{}
	t.Run("ClusterReleaseName", func(t *testing.T) {
		c := loadPoolChart(t, split, true)
		for _, hr := range pools {
			pool := strings.TrimPrefix(hr.GetName(), poolPrefix)
			patched[pool] = render(t, c, hr)
			checkPoolLinkage(t, patched[pool], pool, realCluster)
		}
	})
	t.Run("SameWorkersAsCombined", func(t *testing.T) {
		if len(patched) != 2 {
			t.Skip("ClusterReleaseName did not render both pools")
		}
		compareWithCombined(t, fn, cozy, fleetDir(t, "realchart"), patched, lookups, 8)
	})
	// Without node groups: the pool md0 of the SplitPools render and the md0
	// the Combined chart makes of an empty nodeGroups.
	t.Run("DefaultPoolAsCombined", func(t *testing.T) {
		splitDir, combinedDir := fleetDir(t, "realpools"), fleetDir(t, "realchart")
		for _, dir := range []string{splitDir, combinedDir} {
			withoutKnobs(t, filepath.Join(dir, "tenants.yaml"))
		}
		objs := harness.Generated(harness.Render(t, fn, splitDir, "config.yaml"))
		hr := find(objs, "HelmRelease", realTenant, poolPrefix+"md0")
		if hr == nil {
			t.Fatal("no default pool md0")
		}
		compareWithCombined(t, fn, cozy, combinedDir, map[string]map[string]*unstructured.Unstructured{"md0": render(t, loadPoolChart(t, split, true), hr)}, lookups, 4)
	})
}

// withoutKnobs drops the ComputePlane objects of a tenants file.
func withoutKnobs(t *testing.T, path string) {
	t.Helper()
	docs, err := harness.DecodeFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	var text []byte
	for _, d := range docs {
		if d.GetKind() == "ComputePlane" {
			continue
		}
		data, err := yaml.Marshal(d.Object)
		if err != nil {
			t.Fatal(err)
		}
		text = append(append(text, "---\n"...), data...)
	}
	harness.WriteFile(t, path, text)
}

// compareWithCombined renders the Combined chart (Cozystack 3c780acd) with
// the cluster release the function renders for the Combined fleet in dir
// and checks that the worker objects of each pool (by pool, as the pool
// chart rendered them) are the Combined chart's, by name and spec; want is
// how many.
func compareWithCombined(t *testing.T, fn, cozy, dir string, pools map[string]map[string]*unstructured.Unstructured, lookups engine.ClientProvider, want int) {
	t.Helper()
	combinedObjs := harness.Generated(harness.Render(t, fn, dir, "config.yaml"))
	hr := find(combinedObjs, "HelmRelease", realTenant, realCluster)
	if hr == nil {
		t.Fatal("the Combined fleet renders no cluster release")
	}
	values, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	combined := renderChart(t, loadClusterChart(t, cozy), mergeValues(jsonRoundTrip(cozystackValues(realTenant)), jsonRoundTrip(values)), realCluster, lookups)
	var compared []string
	for pool, objs := range pools {
		for id, o := range objs {
			kind, _, _ := strings.Cut(id, "/")
			if _, worker := workerKinds[kind]; !worker {
				continue
			}
			c, ok := combined[id]
			if !ok {
				var same []string
				for cid := range combined {
					if strings.HasPrefix(cid, kind+"/"+realCluster+"-"+pool) {
						same = append(same, cid)
					}
				}
				t.Errorf("pool %s: the pool chart makes %s, which the Combined chart does not (it makes %v): the move would create it anew", pool, id, same)
				continue
			}
			if diff := cmp.Diff(c.Object["spec"], o.Object["spec"]); diff != "" {
				t.Errorf("pool %s: %s differs in spec from the Combined chart's (-Combined +pool):\n%s", pool, id, diff)
			}
			compared = append(compared, id)
		}
	}
	if len(compared) != want {
		t.Errorf("compared %d worker objects, want %d (four kinds a pool): %v", len(compared), want, compared)
	}
	slices.Sort(compared)
	t.Logf("the pool chart makes the Combined chart's worker objects, each with its spec: %v", compared)
}

// loadPoolChart loads apps/kubernetes-nodes of the split with cozy-lib as
// its subchart, as source-watcher packs it; with readsReleaseName its
// helper that names the parent cluster reads clusterReleaseName.
func loadPoolChart(t *testing.T, split string, readsReleaseName bool) *chartv2.Chart {
	t.Helper()
	files := splitPackagesTree(t, split, readsReleaseName)
	dir := t.TempDir()
	for p, data := range files {
		if rest, ok := strings.CutPrefix(p, "apps/kubernetes-nodes/"); ok {
			harness.WriteFile(t, filepath.Join(dir, "kubernetes-nodes", rest), data)
		}
	}
	c, err := loader.Load(filepath.Join(dir, "kubernetes-nodes"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// renderChart renders a chart as release in the tenant's namespace, as a
// first install, and returns its objects by "Kind/name".
func renderChart(t *testing.T, c *chartv2.Chart, values map[string]any, release string, lookups engine.ClientProvider) map[string]*unstructured.Unstructured {
	t.Helper()
	vals, err := chartutil.ToRenderValues(c, values, common.ReleaseOptions{Name: release, Namespace: realTenant, IsInstall: true}, common.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.RenderWithClientProvider(c, vals, lookups)
	if err != nil {
		t.Fatalf("release %s: %v", release, err)
	}
	objs := map[string]*unstructured.Unstructured{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range out {
			if !yield(k) {
				return
			}
		}
	}) {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		docs, err := harness.Decode([]byte(out[name]))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, d := range docs {
			objs[d.GetKind()+"/"+d.GetName()] = d
		}
	}
	return objs
}

// checkPoolLinkage checks what a pool chart rendered for pool against the
// cluster its objects must name: the MachineDeployment and
// MachineHealthCheck <cluster>-<pool> with spec.clusterName <cluster>, the
// KubevirtMachineTemplate <cluster>-<pool>-<hash> the MachineDeployment
// names, and the WorkloadMonitor <cluster>-<pool>.
func checkPoolLinkage(t *testing.T, objs map[string]*unstructured.Unstructured, pool, cluster string) {
	t.Helper()
	base := cluster + "-" + pool
	md, mhc, wm := objs["MachineDeployment/"+base], objs["MachineHealthCheck/"+base], objs["WorkloadMonitor/"+base]
	for what, o := range map[string]*unstructured.Unstructured{"MachineDeployment": md, "MachineHealthCheck": mhc, "WorkloadMonitor": wm} {
		if o == nil {
			var have []string
			for id := range objs {
				if strings.HasPrefix(id, what+"/") {
					have = append(have, id)
				}
			}
			t.Errorf("pool %s: no %s %s (the chart made %v)", pool, what, base, have)
		}
	}
	if md == nil || mhc == nil {
		return
	}
	for _, c := range []struct {
		o    *unstructured.Unstructured
		path []string
	}{
		{md, []string{"spec", "clusterName"}},
		{md, []string{"spec", "template", "spec", "clusterName"}},
		{mhc, []string{"spec", "clusterName"}},
	} {
		if got, _, _ := unstructured.NestedString(c.o.Object, c.path...); got != cluster {
			t.Errorf("pool %s: %s %s %s is %q, want %q", pool, c.o.GetKind(), c.o.GetName(), strings.Join(c.path, "."), got, cluster)
		}
	}
	kmt, _, _ := unstructured.NestedString(md.Object, "spec", "template", "spec", "infrastructureRef", "name")
	if !strings.HasPrefix(kmt, base+"-") || objs["KubevirtMachineTemplate/"+kmt] == nil {
		t.Errorf("pool %s: the MachineDeployment names KubevirtMachineTemplate %q, which the chart does not make as %s-<hash>", pool, kmt, base)
	}
	t.Logf("pool %s: MachineDeployment %s, KubevirtMachineTemplate %s, MachineHealthCheck and WorkloadMonitor name the cluster %s", pool, md.GetName(), kmt, cluster)
}

// TestSplitClusterChartKeepsPinnedWorkers (a test of its own, no control
// plane): the split apps/kubernetes of cozystack#3315, rendered by Helm's
// engine as the upgrade of a cluster release the Combined chart installed,
// refuses to render while that release's worker MachineDeployments are
// neither pinned nor a pool release's, and renders its control plane alone
// once the Pin render's post-renderer patches have annotated them (as
// kustomize applies them, pkg/render's TestPinPatchesAsKustomizeApplies):
// step 2 of docs/flux-wiring.md. Helm then keeps what carries
// helm.sh/resource-policy: keep (Helm's documented resource policy).
func TestSplitClusterChartKeepsPinnedWorkers(t *testing.T) {
	third := os.Getenv("E2E_THIRD_PARTY")
	fn := os.Getenv("E2E_COMPUTEPLANE_FN")
	if third == "" || fn == "" {
		t.Fatal("E2E_THIRD_PARTY and E2E_COMPUTEPLANE_FN are not set: run the suite with `make e2e`")
	}
	cozy := filepath.Join(third, "cozystack")
	split := filepath.Join(third, "cozystack-pools")
	dir := fleetDir(t, "realpools")
	editSpec(t, filepath.Join(dir, "config.yaml"), func(spec map[string]any) {
		spec["platform"] = map[string]any{"clusterChart": "Combined", "poolMigration": "Pin"}
	})
	objs := harness.Generated(harness.Render(t, fn, dir, "config.yaml"))
	hr := find(objs, "HelmRelease", realTenant, realCluster)
	if hr == nil {
		t.Fatal("the Pin render has no cluster release")
	}
	values, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	all := mergeValues(jsonRoundTrip(cozystackValues(realTenant)), jsonRoundTrip(values))
	combined := renderChart(t, loadClusterChart(t, cozy), all, realCluster, instanceTypeLookups(t, cozy))
	var mds []*unstructured.Unstructured
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for k := range combined {
			if !yield(k) {
				return
			}
		}
	}) {
		if strings.HasPrefix(id, "MachineDeployment/") {
			md := combined[id].DeepCopy()
			md.SetNamespace(realTenant)
			// What Helm stamps on what it installs.
			md.SetAnnotations(map[string]string{"meta.helm.sh/release-name": realCluster, "meta.helm.sh/release-namespace": realTenant})
			mds = append(mds, md)
		}
	}
	if len(mds) != 2 {
		t.Fatalf("the Combined chart makes %d MachineDeployments for md0 and md1, want 2", len(mds))
	}
	files := splitPackagesTree(t, split, true)
	chartDir := t.TempDir()
	for p, data := range files {
		if rest, ok := strings.CutPrefix(p, "apps/kubernetes/"); ok {
			harness.WriteFile(t, filepath.Join(chartDir, "kubernetes", rest), data)
		}
	}
	splitChart, err := loader.Load(filepath.Join(chartDir, "kubernetes"))
	if err != nil {
		t.Fatal(err)
	}
	upgrade := func(mds []*unstructured.Unstructured) (map[string]string, error) {
		objs := []runtime.Object{namespace(realTenant)}
		for _, md := range mds {
			objs = append(objs, md)
		}
		client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
			{Version: "v1", Resource: "namespaces"}:                                                               "NamespaceList",
			{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinedeployments"}:                       "MachineDeploymentList",
			{Version: "v1", Resource: "secrets"}:                                                                  "SecretList",
			{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}:                                  "StorageClassList",
			{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinesets"}:                              "MachineSetList",
			{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Resource: "kubevirtmachinetemplates"}: "KubevirtMachineTemplateList",
			instanceTypes: "VirtualMachineClusterInstancetypeList",
		}, objs...)
		vals, err := chartutil.ToRenderValues(splitChart, all, common.ReleaseOptions{Name: realCluster, Namespace: realTenant, IsUpgrade: true}, common.DefaultCapabilities)
		if err != nil {
			t.Fatal(err)
		}
		return engine.RenderWithClientProvider(splitChart, vals, namespaceLookups{lookupClient{client}})
	}
	if _, err := upgrade(mds); err == nil || !strings.Contains(err.Error(), "refusing to render cluster") {
		t.Fatalf("the split chart upgrades a cluster whose workers are unpinned: %v", err)
	} else {
		t.Logf("unpinned: %v", err)
	}
	pinned := pinAsRendered(t, hr, mds)
	out, err := upgrade(pinned)
	if err != nil {
		t.Fatalf("the split chart refuses the pinned workers: %v", err)
	}
	for name, text := range out {
		for _, kind := range []string{"MachineDeployment", "KubevirtMachineTemplate", "MachineHealthCheck"} {
			if strings.Contains(text, "kind: "+kind+"\n") {
				t.Errorf("the split chart still makes a %s (%s)", kind, name)
			}
		}
	}
	t.Logf("pinned: the split chart renders the cluster's control plane alone (%d files)", len(out))
}

// pinAsRendered sets on each MachineDeployment the annotations of the
// cluster release's post-renderer patch that targets MachineDeployments
// (an annotation-only strategic merge patch, applied here as kustomize
// applies it).
func pinAsRendered(t *testing.T, hr *unstructured.Unstructured, mds []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	renderers, _, _ := unstructured.NestedSlice(hr.Object, "spec", "postRenderers")
	var annotations map[string]any
	for _, r := range renderers {
		patches, _, _ := unstructured.NestedSlice(r.(map[string]any), "kustomize", "patches")
		for _, p := range patches {
			pm := p.(map[string]any)
			target, _ := pm["target"].(map[string]any)
			if target["kind"] != "MachineDeployment" {
				continue
			}
			var body map[string]any
			if err := yaml.Unmarshal([]byte(pm["patch"].(string)), &body); err != nil {
				t.Fatal(err)
			}
			annotations, _, _ = unstructured.NestedMap(body, "metadata", "annotations")
		}
	}
	if len(annotations) == 0 {
		t.Fatal("the Pin render's cluster release has no patch of MachineDeployments")
	}
	var out []*unstructured.Unstructured
	for _, md := range mds {
		md = md.DeepCopy()
		a := md.GetAnnotations()
		for k, v := range annotations {
			a[k] = v.(string)
		}
		md.SetAnnotations(a)
		out = append(out, md)
	}
	return out
}

// namespaceLookups serves Namespaces cluster-wide.
type namespaceLookups struct{ lookupClient }

func (c namespaceLookups) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if apiVersion == "v1" && kind == "Namespace" {
		return c.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}), false, nil
	}
	return c.lookupClient.GetClientFor(apiVersion, kind)
}
