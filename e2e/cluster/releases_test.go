package cluster

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// releaseScenario is one fleet whose releases helm-controller installs.
type releaseScenario struct {
	fleet string
	// cluster is the HelmRelease of the tenant's ComputePlane cluster;
	// platformCluster says the suite plays the platform's computeplane
	// module and creates it (delivery: Platform).
	cluster         string
	platformCluster bool
	tenant          string // the namespace with the ComputePlane
}

func (e *env) testReleases(t *testing.T) {
	e.ensureFlux(t)
	e.ensurePlatform(t)
	t.Run("Direct", func(t *testing.T) {
		e.releases(t, releaseScenario{fleet: "direct", cluster: "computeplane", tenant: "tenant-acme"})
	})
	t.Run("Platform", func(t *testing.T) {
		e.releases(t, releaseScenario{fleet: "platform", cluster: "computeplane-cluster", platformCluster: true, tenant: "tenant-beta"})
	})
}

// cozystackValues is the cozystack-values Secret of a tenant namespace, as
// the platform writes it; "users" and "replicas" are also set by apps, whose
// own values must win.
func cozystackValues(ns string) map[string]any {
	return map[string]any{
		"_cluster":   map[string]any{"root-host": "example.org"},
		"_namespace": map[string]any{"etcd": ns, "host": ns + ".example.org"},
		"users":      1,
		"replicas":   0,
	}
}

func (e *env) writeCozystackValues(t *testing.T, ns string) {
	t.Helper()
	data, err := yaml.Marshal(cozystackValues(ns))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.admin.Apply(e.ctx, secret(ns, "cozystack-values", map[string]string{"values.yaml": string(data)}), harness.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) releases(t *testing.T, s releaseScenario) {
	dir := e.fleetDir(t, s.fleet)
	if s.platformCluster && e.mode.helmController != cozystackFluxSA {
		// Under delivery: Platform the module's cluster is installed by the
		// platform's helm-controller, which guard.helmIdentities names
		// (default: Cozystack's, cozy-fluxcd/flux). Its chart's addons name
		// the cluster's Secret; a stock Flux's helm-controller passes only
		// once it is listed. The one setting off the default in the suite.
		editSpec(t, filepath.Join(dir, "config.yaml"), func(spec map[string]any) {
			spec["guard"] = map[string]any{"helmIdentities": []any{e.mode.helmController}}
		})
		t.Logf("delivery: Platform under %s: guard.helmIdentities set to [%s]", e.mode.name, e.mode.helmController)
	}
	objs := e.render(t, dir)
	nss := tenantNamespaces(objs)
	e.namespaces(nss...)
	for _, ns := range nss {
		e.writeCozystackValues(t, ns)
	}

	// The tenant's ComputePlane: a second API server, started with the Pod
	// Security admission configuration the function rendered for it (Direct).
	var admission string
	if cm := find(objs, "ConfigMap", s.tenant, "computeplane-admission"); cm != nil {
		admission = e.writeAdmissionConfig(t, cm, objs, s.cluster)
	}
	cp := harness.StartAPIServer(t, harness.APIServerOptions{
		Name: e.serverName("computeplane-" + strings.TrimPrefix(s.tenant, "tenant-")), Bin: e.bins.apiserver, Etcd: e.etcd,
		Dir: e.dir, AdmissionConfigFile: admission,
	})
	cpc := harness.MustClient(t, cp, harness.Admin, cp.Config(harness.Admin))

	e.ensureClusterChart(t)
	if s.platformCluster {
		if find(objs, "HelmRelease", s.tenant, s.cluster) != nil {
			t.Fatalf("delivery Platform rendered the cluster HelmRelease %s/%s", s.tenant, s.cluster)
		}
		e.applyAll(t, e.admin, []*unstructured.Unstructured{platformClusterRelease(s.tenant, s.cluster)}, false)
	}
	// Flux applies the render as the fleet's account (kustomize-controller
	// impersonates it): the platform objects first (the guard among them),
	// as the fleet folder's units do.
	e.bootstrapFleet(t, objs)
	if !s.platformCluster {
		// helm-controller installs the cluster as the tenant's installer,
		// whose account and RBAC the fleet applies with the rest.
		hr := find(objs, "HelmRelease", s.tenant, s.cluster)
		if hr == nil {
			t.Fatalf("delivery Direct rendered no cluster HelmRelease %s/%s", s.tenant, s.cluster)
		}
		if sa, _, _ := unstructured.NestedString(hr.Object, "spec", "serviceAccountName"); sa != installerAccount {
			t.Errorf("the cluster HelmRelease %s/%s: serviceAccountName %q, want %q", s.tenant, s.cluster, sa, installerAccount)
		}
		for _, kind := range []string{"ServiceAccount", "RoleBinding"} {
			if find(objs, kind, s.tenant, installerAccount) == nil {
				t.Errorf("delivery Direct rendered no %s %s/%s", kind, s.tenant, installerAccount)
			}
		}
	}
	e.applyGuardFirst(t, objs)

	// The cluster installs from the chart source-watcher made.
	e.waitReady(t, e.admin, helmV2, "HelmRelease", s.tenant, s.cluster, 3*time.Minute)
	cm := e.mustGet(t, e.admin, "v1", "ConfigMap", s.tenant, s.cluster)
	if got, _, _ := unstructured.NestedString(cm.Object, "data", "cozyLib"); got != cozyLibMarker {
		t.Errorf("the cluster chart did not load cozy-lib from charts/cozy-lib: data.cozyLib = %q, want %q", got, cozyLibMarker)
	}
	if rendered := find(objs, "HelmRelease", s.tenant, s.cluster); rendered != nil {
		// Helm gives the cozy-lib subchart its own (empty) values.
		e.checkValues(t, cm, rendered, s.tenant, map[string]any{"cozy-lib": map[string]any{"global": map[string]any{}}})
	}
	addon := s.cluster + "-cilium"
	e.waitFor(t, e.admin, helmV2, "HelmRelease", s.tenant, addon, time.Minute, harness.Exists)

	// Without spec.fleet the render delivers the tenant's in-cluster
	// baseline as the HelmRelease computeplane-baseline of the project's
	// chart, from the OCIRepository it renders: the suite serves the chart
	// as that source's artifact. With spec.fleet the baseline is a folder
	// unit of the fleet, which this stage does not serve.
	baseline := find(objs, "HelmRelease", s.tenant, baselineName)
	if baseline != nil {
		repo := ofKind(objs, "OCIRepository")
		if len(repo) != 1 || repo[0].GetName() != baselineName {
			t.Fatalf("fleet %s renders the baseline release but %d OCIRepositories, want one named %s", s.fleet, len(repo), baselineName)
		}
		e.publishBaselineChart(t, repo[0])
	}
	var managed, routedHRs []*unstructured.Unstructured
	for _, hr := range ofKind(objs, "HelmRelease") {
		switch {
		case isCluster(hr), hr.GetName() == baselineName:
		case routed(hr):
			routedHRs = append(routedHRs, hr)
		default:
			managed = append(managed, hr)
		}
	}
	if len(routedHRs) == 0 || len(managed) == 0 {
		t.Fatalf("fleet %s renders %d routed and %d management-plane releases; the test needs both", s.fleet, len(routedHRs), len(managed))
	}

	// Management-plane releases do not wait for any cluster.
	for _, hr := range managed {
		e.waitReady(t, e.admin, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName(), 2*time.Minute)
		cm := e.mustGet(t, e.admin, "v1", "ConfigMap", hr.GetNamespace(), hr.GetName())
		e.checkValues(t, cm, hr, hr.GetNamespace())
		if got, _ := cpc.Get(e.ctx, "v1", "ConfigMap", hr.GetNamespace(), hr.GetName()); got != nil {
			t.Errorf("management-plane release %s/%s landed in the ComputePlane", hr.GetNamespace(), hr.GetName())
		}
	}

	// The cluster release is Ready (it does not wait), but its API server
	// and kubeconfig are not there yet: routed releases wait for the
	// cluster's addons, without trying to install and without failing.
	e.waitForCluster(t, routedHRs, addon)
	if got, _ := cpc.Get(e.ctx, "v1", "Namespace", "", s.tenant); got != nil {
		t.Errorf("namespace %s exists in the ComputePlane before its API server was announced", s.tenant)
	}

	// Kamaji writes the admin kubeconfig once the tenant's API server is up.
	kubeconfigSecret := s.cluster + "-admin-kubeconfig"
	if _, _, err := e.admin.Apply(e.ctx, secret(s.tenant, kubeconfigSecret,
		map[string]string{"super-admin.svc": string(cp.Kubeconfig(harness.Admin))}), harness.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, e.admin, helmV2, "HelmRelease", s.tenant, addon, 2*time.Minute)
	e.waitFor(t, cpc, "v1", "ConfigMap", "cozy-cilium", "cilium", 30*time.Second, harness.Exists)
	// No kube-controller-manager runs here: the test aggregates the admin
	// ClusterRole that the baseline binds, as its aggregation controller
	// would.
	e.aggregateAdmin(t, cpc)
	if baseline != nil {
		e.waitReady(t, e.admin, helmV2, "HelmRelease", s.tenant, baselineName, 2*time.Minute)
		e.checkStreamBaseline(t, cpc, "", baseline)
	} else {
		// The fleet's baseline unit is not served here (the InCluster
		// stage applies the real one): the test plays its part, as it
		// plays Kamaji's, with what it gives the routed apps' account.
		e.applyAll(t, cpc, sharedBaseline(s.tenant), false)
	}

	for _, hr := range routedHRs {
		ns, name := hr.GetNamespace(), hr.GetName()
		e.waitReady(t, e.admin, helmV2, "HelmRelease", ns, name, 2*time.Minute)
		cm := e.waitFor(t, cpc, "v1", "ConfigMap", ns, name, 30*time.Second, harness.Exists)
		e.checkValues(t, cm, hr, ns)
		if got, _ := e.admin.Get(e.ctx, "v1", "ConfigMap", ns, name); got != nil {
			t.Errorf("routed release %s/%s landed in the management cluster", ns, name)
		}
		// Helm's own record: release name as rendered, stored in the
		// ComputePlane, in the release's namespace.
		e.waitFor(t, cpc, "v1", "Secret", ns, "sh.helm.release.v1."+name+".v1", 10*time.Second, harness.Exists)
	}
}

// waitForCluster checks that releases wait for their cluster's CNI addon
// while the cluster's kubeconfig is missing: for a few seconds none is Ready,
// none counts an install failure, and each ends DependencyNotReady naming
// addon.
func (e *env) waitForCluster(t *testing.T, releases []*unstructured.Unstructured, addon string) {
	t.Helper()
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		for _, hr := range releases {
			got := e.mustGet(t, e.admin, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName())
			status, reason, msg, _ := harness.Condition(got, "Ready")
			failures, _, _ := unstructured.NestedInt64(got.Object, "status", "installFailures")
			if status == "True" || failures > 0 || (reason != "" && reason != "DependencyNotReady" && reason != "Progressing") {
				t.Fatalf("release %s/%s did not wait for its cluster: Ready=%s %s: %s (installFailures %d)%s",
					hr.GetNamespace(), hr.GetName(), status, reason, msg, failures, e.logs(hr.GetName()))
			}
		}
		time.Sleep(time.Second)
	}
	for _, hr := range releases {
		got := e.mustGet(t, e.admin, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName())
		_, reason, msg, _ := harness.Condition(got, "Ready")
		if reason != "DependencyNotReady" || !strings.Contains(msg, addon) {
			t.Errorf("release %s/%s while its cluster is not up: Ready reason %q, message %q; want DependencyNotReady naming %s",
				hr.GetNamespace(), hr.GetName(), reason, msg, addon)
		}
	}
}

// platformClusterRelease is the HelmRelease the platform's computeplane
// module renders for a tenant (Cozystack's extra/computeplane chart): the
// apps/kubernetes chart, never waiting.
func platformClusterRelease(ns, name string) *unstructured.Unstructured {
	return obj(helmV2, "HelmRelease", ns, name, map[string]any{
		"spec": map[string]any{
			"chartRef":   map[string]any{"kind": "ExternalArtifact", "name": clusterArtifact, "namespace": cozySystem},
			"interval":   "5m",
			"timeout":    "30m",
			"install":    map[string]any{"disableWait": true, "remediation": map[string]any{"retries": int64(-1)}},
			"upgrade":    map[string]any{"disableWait": true, "remediation": map[string]any{"retries": int64(-1)}},
			"values":     map[string]any{"addons": map[string]any{"ingressNginx": map[string]any{"enabled": true}}},
			"valuesFrom": []any{map[string]any{"kind": "Secret", "name": "cozystack-values"}},
		},
	})
}

// ensureClusterChart applies the ArtifactGenerator of a Direct render (the
// platform ships the same one) and waits until source-watcher has made the
// cluster chart's ExternalArtifact from cozystack-packages.
func (e *env) ensureClusterChart(t *testing.T) {
	t.Helper()
	e.ensurePlatform(t)
	objs := e.render(t, e.fleetDir(t, "direct"))
	gens := ofKind(objs, "ArtifactGenerator")
	if len(gens) != 1 {
		t.Fatalf("the Direct render has %d ArtifactGenerators, want 1", len(gens))
	}
	e.bootstrapFleet(t, objs)
	e.applyAll(t, e.fleet, gens, false)
	e.waitReady(t, e.admin, generatorV1, "ArtifactGenerator", gens[0].GetNamespace(), gens[0].GetName(), 2*time.Minute)
	e.waitFor(t, e.admin, sourceV1, "ExternalArtifact", cozySystem, clusterArtifact, time.Minute,
		func(u *unstructured.Unstructured) (bool, string) {
			if u == nil {
				return false, "not found"
			}
			url, _, _ := unstructured.NestedString(u.Object, "status", "artifact", "url")
			return url != "", "no artifact yet"
		})
}

// checkValues compares the values a stand-in chart received with the
// release's spec.values over the namespace's cozystack-values.
func (e *env) checkValues(t *testing.T, cm, hr *unstructured.Unstructured, ns string, extra ...map[string]any) {
	t.Helper()
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "values")
	var got map[string]any
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Errorf("%s: values are not JSON: %v", harness.Describe(cm), err)
		return
	}
	if gotNS, _, _ := unstructured.NestedString(cm.Object, "data", "namespace"); gotNS != ns {
		t.Errorf("%s: installed into namespace %q, want %q", harness.Describe(cm), gotNS, ns)
	}
	spec, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	want := mergeValues(jsonRoundTrip(cozystackValues(hr.GetNamespace())), jsonRoundTrip(spec))
	for _, x := range extra {
		want = mergeValues(want, jsonRoundTrip(x))
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("values of %s (-want +got):\n%s", harness.Describe(hr), d)
	}
}

func jsonRoundTrip(v map[string]any) map[string]any {
	data, _ := json.Marshal(v)
	out := map[string]any{}
	_ = json.Unmarshal(data, &out)
	return out
}

// mergeValues is Helm's merge of values over a base: maps merge, the rest
// replaces.
func mergeValues(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = mergeValues(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func (e *env) mustGet(t *testing.T, c *harness.Client, apiVersion, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	got, err := c.Get(e.ctx, apiVersion, kind, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatalf("%s %s/%s not found in %s%s", kind, ns, name, c.Server.Name, e.logs(name))
	}
	return got
}

func (e *env) waitFor(t *testing.T, c *harness.Client, apiVersion, kind, ns, name string, timeout time.Duration,
	check func(*unstructured.Unstructured) (bool, string)) *unstructured.Unstructured {
	t.Helper()
	got, err := c.WaitFor(e.ctx, timeout, apiVersion, kind, ns, name, check)
	if err != nil {
		t.Fatalf("%v%s", err, e.logs(name))
	}
	return got
}

func (e *env) waitReady(t *testing.T, c *harness.Client, apiVersion, kind, ns, name string, timeout time.Duration) *unstructured.Unstructured {
	t.Helper()
	return e.waitFor(t, c, apiVersion, kind, ns, name, timeout, harness.Ready)
}

// applyGuardFirst applies the render as the fleet's account, the guard's
// policy and binding first. When the policy changes (another fleet's guard
// was there: a stage's fleets share its management cluster), the API
// server takes a moment to load it; until then it judges by the old one.
func (e *env) applyGuardFirst(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	var guard, rest []*unstructured.Unstructured
	for _, o := range objs {
		// The guard, and the shard label's policy or webhook: a release
		// applied in the moment after the mutating policy was created is
		// answered 503 ("Resource kind ... not found"), so the policy
		// goes first and is waited for (waitMutatingPolicy), as the
		// platform unit goes before the tenants' units in the fleet.
		if strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") || strings.HasPrefix(o.GetKind(), "Mutating") {
			guard = append(guard, o)
		} else {
			rest = append(rest, o)
		}
	}
	e.applyAll(t, e.fleet, guard, false)
	e.waitMutatingPolicy(t, objs)
	err := harness.Poll(e.ctx, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		for _, o := range rest {
			if _, _, err := e.fleet.Apply(e.ctx, o, harness.ApplyOptions{DryRun: true}); err != nil {
				return false, err.Error()
			}
		}
		return true, ""
	})
	if err != nil {
		t.Fatalf("the render is refused after the guard was updated: %v", err)
	}
	e.applyAll(t, e.fleet, rest, false)
}

// sharedBaseline is what the in-cluster baseline gives routed apps of a
// tenant with shared namespaces: the namespace, the account
// computeplane-apps and its RoleBinding to the admin ClusterRole.
func sharedBaseline(ns string) []*unstructured.Unstructured {
	return []*unstructured.Unstructured{
		namespace(ns),
		obj("v1", "ServiceAccount", ns, "computeplane-apps", nil),
		obj("rbac.authorization.k8s.io/v1", "RoleBinding", ns, "computeplane-apps", map[string]any{
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "computeplane-apps", "namespace": ns}},
		}),
	}
}
