package cluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// Cozystack's components get identities of their own: the API server
// authenticates them by token like Flux's controllers.
var cozystackIdentities = []string{harness.ShardOperatorIdentity, harness.CozystackAPIIdentity}

const (
	shardKeyLabel    = "sharding.fluxcd.io/key"
	tenantShardLabel = "internal.cozystack.io/flux-shard"
	// operatorShards is the operator's --shard-count: two, so that the
	// tenants are spread and "on the tenant's shard" means something.
	operatorShards = 2
)

// cozystackDir is ../shared/third_party/cozystack, or a skip.
func (e *env) cozystackDir(t *testing.T, bin string) string {
	t.Helper()
	if bin == "" || e.bins.thirdParty == "" {
		t.Skip("E2E_FLUX_SHARD_OPERATOR, E2E_COZYSTACK_API or E2E_THIRD_PARTY is not set: run the suite with `make e2e`")
	}
	return filepath.Join(e.bins.thirdParty, "cozystack")
}

// startShardOperator starts flux-shard-operator (again, with extra flags)
// and hands its CA to the injector, once there is one.
func (e *env) startShardOperator(t *testing.T, extra ...string) {
	t.Helper()
	proc, ca := harness.StartShardOperator(cleanupWith{TB: t, owner: e.t}, e.mgmt, e.dir, e.bins.shardOperator,
		append([]string{fmt.Sprintf("--shard-count=%d", operatorShards)}, extra...)...)
	e.procs = append(e.procs, proc)
	e.shardOperator, e.shardOperatorCA = proc, ca
	if e.caInjector != nil {
		if err := e.caInjector.SetCA(e.ctx, ca); err != nil {
			t.Fatal(err)
		}
	}
}

// caInjected: every webhook of a configuration carries a CA.
func caInjected(u *unstructured.Unstructured) (bool, string) {
	if u == nil {
		return false, "not found"
	}
	hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
	for _, h := range hooks {
		if ca, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "caBundle"); ca == "" {
			return false, "a webhook without caBundle"
		}
	}
	return len(hooks) > 0, "no webhook"
}

// ensureShardOperator runs flux-shard-operator the way Cozystack deploys it
// (packages/system/flux-shard-operator): in cozy-fluxcd, next to the `flux`
// Deployment it clones shards from, with the chart's
// MutatingWebhookConfiguration. There is no kubelet: once the operator has
// made its shard Deployments, the suite reports each one ready, which is
// what the operator waits for before it places a tenant there.
func (e *env) ensureShardOperator(t *testing.T) {
	t.Helper()
	dir := e.cozystackDir(t, e.bins.shardOperator)
	e.shardOperatorOnce.Do(func() {
		e.namespaces(harness.CozyFluxNamespace)
		if err := harness.GrantClusterAdmin(e.ctx, e.admin, harness.ShardOperatorIdentity); err != nil {
			t.Fatal(err)
		}
		// Cozystack's all-in-one Flux Deployment, reduced to what the
		// operator reads: the helm-controller container and its flags
		// (internal/fluxinstall/manifests/fluxcd.yaml).
		flux := obj("apps/v1", "Deployment", harness.CozyFluxNamespace, "flux", map[string]any{
			"spec": map[string]any{
				"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "flux"}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": "flux"}},
					"spec": map[string]any{
						"serviceAccountName": "flux",
						"containers": []any{map[string]any{
							"name": "helm-controller", "image": "ghcr.io/fluxcd/helm-controller:v1.5.0",
							"args": []any{"--watch-all-namespaces", "--concurrent=5", "--requeue-dependency=30s",
								"--watch-label-selector=!sharding.fluxcd.io/key"},
						}},
					},
				},
			},
		})
		e.applyAll(t, e.admin, []*unstructured.Unstructured{flux}, false)
		e.startShardOperator(t)
		webhooks, err := harness.ChartObjects(harness.CozyFluxNamespace,
			filepath.Join(dir, "packages", "system", "flux-shard-operator", "templates", "mutatingwebhookconfiguration.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		// The chart's Service maps its port 443 to the pod's 9443: the
		// ExternalName Service leads the API server to 127.0.0.1, where
		// a stand-in of that mapping listens on 443. cert-manager's
		// cainjector writes the operator's CA into every webhook
		// configuration that calls the operator (the chart's and the
		// fleet's computeplane-release-shard): a stand-in does.
		harness.ServicePort(cleanupWith{TB: t, owner: e.t}, "127.0.0.1:443", "127.0.0.1:"+strconv.Itoa(harness.ShardOperatorWebhookPort))
		e.caInjector = harness.StartCAInjector(e.ctx, t, e.admin, harness.CozyFluxNamespace, harness.ShardOperatorName, e.shardOperatorCA)
		e.applyAll(t, e.admin, append(webhooks, harness.ExternalNameService(harness.CozyFluxNamespace, harness.ShardOperatorName)), false)
		e.waitFor(t, e.admin, "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "", "flux-shard-operator", time.Minute, caInjected)
		for i := 0; i < operatorShards; i++ {
			name := fmt.Sprintf("helm-controller-shard%d", i)
			e.waitFor(t, e.admin, "apps/v1", "Deployment", harness.CozyFluxNamespace, name, time.Minute, harness.Exists)
			st := obj("apps/v1", "Deployment", harness.CozyFluxNamespace, name, map[string]any{
				"status": map[string]any{"replicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1), "updatedReplicas": int64(1)},
			})
			if _, _, err := e.admin.Apply(e.ctx, st, harness.ApplyOptions{Subresource: "status"}); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("flux-shard-operator runs with %d shards, their Deployments reported ready", operatorShards)
	})
}

// testShardOperator reconciles a fleet under the real flux-shard-operator,
// with its tenants placed first as Cozystack places them (each tenant's
// own Tenant release, labelled tenants, which the operator's webhook and
// placement controller give a shard): as the function renders it by
// default, every release must land on its tenant's shard and nothing may
// write to it once settled: through the MutatingAdmissionPolicy where the
// platform serves it (default Admission, Kubernetes 1.36), through the
// operator's own webhook below (default Webhook, 1.33). Then the operator
// moves a tenant (a pin), and nothing takes the move back; then the label
// rendered (spec.releases.shardLabel: Rendered) shows the drift that makes
// the fight with the operator, proven by kustomize-controller's dry run
// rather than by waiting for a flip; then back to the default, with a
// release of a placed tenant born under it and one of a tenant the
// operator has not placed yet, which stays on the main helm-controller
// until it is handed over as docs/flux-wiring.md says.
func (e *env) testShardOperator(t *testing.T) {
	e.ensureFlux(t)
	e.ensurePlatform(t)
	e.ensureShardOperator(t)
	// The config names the layout's Kubernetes (1.36 on the newest
	// platform), whose default shard label the stage proves.
	f := &fleetRepo{e: e, work: e.fleetDir(t, "shard"), repo: filepath.Join(t.TempDir(), "repo")}
	for _, ns := range []string{"tenant-kappa", "tenant-lambda", "tenant-mu"} {
		e.namespaces(ns)
		e.writeCozystackValues(t, ns)
	}
	e.placeTenants(t, "kappa", "lambda", "mu")
	// tenant-kappa's baseline applies into a stand-in ComputePlane, and its
	// routed unit waits for that.
	e.standInComputePlane(t, "tenant-kappa")
	const reconciles = 3
	var all []*unstructured.Unstructured
	defaultName := "Admission"
	if e.mode.oldest {
		defaultName = "Webhook"
		e.refusesAdmission(t, f)
	}
	quietly := func(step string, labelled func(*unstructured.Unstructured) bool) {
		t.Helper()
		f.waitReconciled(t)
		e.waitPlaced(t, f, labelled)
		// The first reconcile after a change may still hand a label
		// over; from then on nothing may write.
		e.measureReconciles(t, f, 1)
		quiet := e.measureReconciles(t, f, reconciles)
		t.Logf("%s: %s; shard label owned by %v", step, quiet, e.shardLabelOwners(f))
		if quiet.writes != 0 || quiet.flips != 0 {
			t.Errorf("%s: %s, want no write", step, quiet)
		}
		if drift := e.shardLabelDrift(t, f); len(drift) > 0 {
			t.Errorf("%s: kustomize-controller's apply would change the shard label of %s", step, strings.Join(drift, ", "))
		}
		e.checkPlacement(t, f, labelled)
	}
	always := func(*unstructured.Unstructured) bool { return true }

	// A fleet born under the default. The bootstrap (this fleet's
	// account and guard) comes before the fleet's first revision, as
	// docs/flux-wiring.md has it.
	f.render(t)
	for _, o := range f.objs {
		all = append(all, o)
	}
	e.checkShardAdmission(t, all)
	routed, management := 0, 0
	for _, hr := range f.releases() {
		if _, ok, _ := unstructured.NestedMap(hr.Object, "spec", "kubeConfig"); ok {
			routed++
		} else {
			management++
		}
	}
	if routed == 0 || management == 0 {
		t.Fatalf("the fleet renders %d routed and %d management-plane releases, want both", routed, management)
	}
	t.Logf("the fleet renders %d releases: %d routed, %d on the management plane (the cluster's included)", routed+management, routed, management)
	e.bootstrapFleet(t, all)
	f.upload(t)
	e.applyAll(t, e.admin, []*unstructured.Unstructured{e.fleetRoot()}, false)
	if e.mode.oldest {
		e.waitFor(t, e.admin, "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "", "computeplane-release-shard", 2*time.Minute, caInjected)
	}
	quietly("shardLabel "+defaultName+" (default), from the start", always)

	// The operator moves a tenant (a pin, which moves it at once, as a
	// rebalance would after its cool-down): the move stays.
	e.moveTenant(t, f, "tenant-kappa")
	quietly("shardLabel "+defaultName+", tenant-kappa moved by the operator", always)
	// The label rendered: kustomize-controller owns tenants on every
	// release and the operator writes shard<i> over it, so every
	// reconcile's dry run differs from the live object and applies
	// tenants again (the fight docs/flux-wiring.md measured). The drift
	// is shown by a dry run as kustomize-controller; the flips it causes
	// depend on timing and are only logged.
	setShardLabel(t, f, "Rendered")
	f.publish(t)
	f.waitReconciled(t)
	e.waitPlaced(t, f, always)
	if drift := e.shardLabelDrift(t, f); len(drift) != len(f.releases()) {
		t.Errorf("shardLabel Rendered: kustomize-controller's apply would change the shard label of %d of %d releases (%v), want every one: the render's tenants against the operator's shard", len(drift), len(f.releases()), drift)
	}
	churn := e.measureReconciles(t, f, reconciles)
	t.Logf("shardLabel Rendered: %s; shard label owned by %v (not asserted: when a flip shows depends on timing)", churn, e.shardLabelOwners(f))

	// Back to the default, then a release of a placed tenant (tenant-mu)
	// and the release of a tenant the operator has not placed (tenant-nu:
	// a namespace, no Tenant release). Two commits: on 1.36 the policy
	// comes back with the first and takes the API server a moment to load
	// (a release created in that moment is born without the label).
	setShardLabel(t, f, "")
	f.publish(t)
	f.waitReconciled(t)
	e.namespaces("tenant-nu")
	e.writeCozystackValues(t, "tenant-nu")
	addApps(t, f, "tenants.yaml", "apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata:\n  name: nu\n  namespace: tenant-root\nspec:\n  computeplane: false\n")
	addApps(t, f, "apps.yaml",
		"apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: fresh\n  namespace: tenant-mu\nspec:\n  replicas: 1\n",
		"apiVersion: apps.cozystack.io/v1alpha1\nkind: Redis\nmetadata:\n  name: cache\n  namespace: tenant-nu\nspec:\n  replicas: 1\n")
	f.publish(t)
	// Under the policy (1.36) the release gets tenants and the operator
	// places the tenant; the operator's webhook answers only for a tenant
	// it has placed, so below 1.36 tenant-nu's release is born without a
	// label and stays on the main helm-controller.
	unplaced := func(hr *unstructured.Unstructured) bool { return !e.mode.oldest || hr.GetNamespace() != "tenant-nu" }
	quietly("shardLabel "+defaultName+" again, plus a release and a tenant", unplaced)
	if e.mode.oldest {
		// The hand-over of docs/flux-wiring.md: the label tenants, by hand.
		patch := []byte(`{"metadata":{"labels":{"` + shardKeyLabel + `":"` + "tenants" + `"}}}`)
		if _, err := e.admin.MergePatch(e.ctx, helmV2, "HelmRelease", "tenant-nu", "redis-cache", patch); err != nil {
			t.Fatal(err)
		}
		quietly("shardLabel "+defaultName+", tenant-nu's release handed over", always)
	}
}

// placeTenants creates each tenant's own release as Cozystack does (the
// HelmRelease tenant-<name> in tenant-root, kind Tenant, labelled tenants,
// which the operator attributes to namespace tenant-<name>) and waits until
// the operator has recorded the tenant's shard on its namespace. The
// release is never installed: no helm-controller runs here.
func (e *env) placeTenants(t *testing.T, names ...string) {
	t.Helper()
	e.namespaces("tenant-root")
	for _, n := range names {
		hr := obj(helmV2, "HelmRelease", "tenant-root", "tenant-"+n, map[string]any{
			"spec": map[string]any{
				"interval": "5m",
				"chartRef": map[string]any{"kind": "ExternalArtifact", "name": "cozystack-tenant-application-default-tenant", "namespace": "cozy-system"},
			},
		})
		hr.SetLabels(map[string]string{"apps.cozystack.io/application.kind": "Tenant", shardKeyLabel: "tenants"})
		// Not applyAll: the operator's webhook stamps the shard on the
		// create, so what is read back differs from what was sent.
		if _, _, err := e.admin.Apply(e.ctx, hr, harness.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		e.waitFor(t, e.admin, "v1", "Namespace", "", "tenant-"+n, 2*time.Minute, func(u *unstructured.Unstructured) (bool, string) {
			shard := u.GetLabels()[tenantShardLabel]
			return shardValue.MatchString(shard), tenantShardLabel + "=" + strconv.Quote(shard)
		})
	}
}

// moveTenant has the operator move a tenant to the other shard: it is
// restarted with the tenant pinned there, as an operator pins one, and
// the tenant's namespace and releases follow.
func (e *env) moveTenant(t *testing.T, f *fleetRepo, tenantNS string) {
	t.Helper()
	ns, err := e.admin.Get(e.ctx, "v1", "Namespace", "", tenantNS)
	if err != nil {
		t.Fatal(err)
	}
	from := ns.GetLabels()[tenantShardLabel]
	to := "shard0"
	if from == "shard0" {
		to = "shard1"
	}
	e.shardOperator.Stop()
	e.startShardOperator(t, "--pinned-tenants="+tenantNS+"="+to)
	e.waitFor(t, e.admin, "v1", "Namespace", "", tenantNS, 2*time.Minute, func(u *unstructured.Unstructured) (bool, string) {
		got := u.GetLabels()[tenantShardLabel]
		return got == to, tenantShardLabel + "=" + strconv.Quote(got) + ", want " + to
	})
	e.waitPlaced(t, f, func(*unstructured.Unstructured) bool { return true })
	t.Logf("the operator moved %s from %s to %s", tenantNS, from, to)
}

// shardLabelDrift lists the fleet's releases whose shard label
// kustomize-controller's next apply would change: a server-side dry run of
// the rendered release as kustomize-controller (its field manager, forced,
// as it applies) comes back with another label than the live release has.
func (e *env) shardLabelDrift(t *testing.T, f *fleetRepo) []string {
	t.Helper()
	var drift []string
	for _, hr := range f.releases() {
		live, err := e.admin.Get(e.ctx, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName())
		if err != nil {
			t.Fatal(err)
		}
		dry, _, err := e.admin.Apply(e.ctx, hr, harness.ApplyOptions{DryRun: true, FieldManager: "kustomize-controller"})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := dry.GetLabels()[shardKeyLabel], live.GetLabels()[shardKeyLabel]; got != want {
			drift = append(drift, fmt.Sprintf("%s (%q, live %q)", harness.ObjectKey(hr), got, want))
		}
	}
	return drift
}

// checkShardAdmission: the default render carries the shard label's
// admission of the layout's Kubernetes, computeplane-release-shard: the
// MutatingWebhookConfiguration to the operator's webhook below 1.36, the
// MutatingAdmissionPolicy and its binding on 1.36, and not the other.
func (e *env) checkShardAdmission(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	want := map[string]int{"MutatingWebhookConfiguration": 0, "MutatingAdmissionPolicy": 1, "MutatingAdmissionPolicyBinding": 1}
	if e.mode.oldest {
		want = map[string]int{"MutatingWebhookConfiguration": 1, "MutatingAdmissionPolicy": 0, "MutatingAdmissionPolicyBinding": 0}
	}
	for kind, n := range want {
		got := ofKind(objs, kind)
		if len(got) != n || (n == 1 && got[0].GetName() != "computeplane-release-shard") {
			var names []string
			for _, o := range got {
				names = append(names, o.GetName())
			}
			t.Fatalf("the default render (oldest platform: %t) has the %ss %v, want %d named computeplane-release-shard", e.mode.oldest, kind, names, n)
		}
	}
}

// refusesAdmission: on the oldest platform the fleet's config with
// spec.releases.shardLabel: Admission is refused, naming the field and the
// version, and nothing is rendered.
func (e *env) refusesAdmission(t *testing.T, f *fleetRepo) {
	t.Helper()
	setShardLabel(t, f, "Admission")
	defer setShardLabel(t, f, "")
	cmd := exec.CommandContext(e.ctx, e.bins.fn, "config.yaml")
	cmd.Dir = f.work
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil || stdout.Len() != 0 || !strings.Contains(stderr.String(), "spec.releases.shardLabel: Admission needs admissionregistration.k8s.io/v1 MutatingAdmissionPolicy") {
		t.Errorf("shardLabel Admission on 1.33: %v, %d bytes on stdout, stderr %q; want a refusal naming the field", err, stdout.Len(), stderr.String())
	}
}

// addApps appends YAML documents to an input file of the fleet.
func addApps(t *testing.T, f *fleetRepo, file string, docs ...string) {
	t.Helper()
	path := filepath.Join(f.work, file)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		data = append(data, []byte("---\n"+d)...)
	}
	harness.WriteFile(t, path, data)
}

var fleetAccountUser = harness.ServiceAccount(harness.FluxNamespace, fleetAccount)

// fleetClient applies as the fleet's account.
func (e *env) fleetClient(t *testing.T) *harness.Client {
	return harness.MustClient(t, e.mgmt, fleetAccountUser, e.mgmt.Impersonating(fleetAccountUser,
		"system:serviceaccounts", "system:serviceaccounts:"+harness.FluxNamespace, "system:authenticated"))
}

// fleetRoot is the root Kustomization of docs/flux-wiring.md's bootstrap,
// in the mode's wiring namespace, over the fleet repo's wiring folder.
func (e *env) fleetRoot() *unstructured.Unstructured {
	return obj(kustomizeV1, "Kustomization", e.mode.fleetNamespace, fleetRoot, map[string]any{
		"spec": map[string]any{
			"interval":           "10m",
			"sourceRef":          map[string]any{"kind": "GitRepository", "name": "fleet"},
			"path":               "./fleet/_flux",
			"prune":              true,
			"deletionPolicy":     "Orphan",
			"serviceAccountName": fleetAccount,
		},
	})
}

// setShardLabel sets spec.releases.shardLabel of the config ("" removes it).
func setShardLabel(t *testing.T, f *fleetRepo, value string) {
	t.Helper()
	path := filepath.Join(f.work, "config.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	spec := cfg["spec"].(map[string]any)
	if value == "" {
		delete(spec, "releases")
	} else {
		spec["releases"] = map[string]any{"shardLabel": value}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, path, out)
}

// fleetReleases are the HelmReleases the fleet renders.
func (f *fleetRepo) releases() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range f.objs {
		if o.GetKind() == "HelmRelease" {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return harness.ObjectKey(out[i]) < harness.ObjectKey(out[j]) })
	return out
}

var shardValue = regexp.MustCompile(`^shard[0-9]+$`)

// waitPlaced waits until every release of the fleet carries the shard its
// tenant's namespace records (labelled says it must), or no shard label at
// all.
func (e *env) waitPlaced(t *testing.T, f *fleetRepo, labelled func(*unstructured.Unstructured) bool) {
	t.Helper()
	err := harness.Poll(e.ctx, 2*time.Minute, 500*time.Millisecond, func() (bool, string) {
		if bad := e.misplaced(f, labelled); len(bad) > 0 {
			return false, strings.Join(bad, "; ")
		}
		return true, ""
	})
	if err != nil {
		t.Fatalf("the fleet's releases were not placed on their tenants' shards: %v%s", err, e.logs("placement"))
	}
}

// misplaced lists the releases whose shard label is not their tenant's
// (labelled), or that carry one (not labelled: the main helm-controller's).
func (e *env) misplaced(f *fleetRepo, labelled func(*unstructured.Unstructured) bool) []string {
	var bad []string
	for _, hr := range f.releases() {
		if !labelled(hr) {
			got, err := e.admin.Get(e.ctx, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName())
			switch {
			case err != nil || got == nil:
				bad = append(bad, fmt.Sprintf("%s: not found (%v)", harness.ObjectKey(hr), err))
			case got.GetLabels()[shardKeyLabel] != "":
				bad = append(bad, fmt.Sprintf("%s: %s=%q, want none (the main helm-controller's)", harness.ObjectKey(hr), shardKeyLabel, got.GetLabels()[shardKeyLabel]))
			}
			continue
		}
		ns, err := e.admin.Get(e.ctx, "v1", "Namespace", "", hr.GetNamespace())
		if err != nil || ns == nil {
			bad = append(bad, fmt.Sprintf("namespace %s: %v", hr.GetNamespace(), err))
			continue
		}
		shard := ns.GetLabels()[tenantShardLabel]
		got, err := e.admin.Get(e.ctx, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName())
		if err != nil || got == nil {
			bad = append(bad, fmt.Sprintf("%s: not found (%v)", harness.ObjectKey(hr), err))
			continue
		}
		if label := got.GetLabels()[shardKeyLabel]; !shardValue.MatchString(shard) || label != shard {
			bad = append(bad, fmt.Sprintf("%s: %s=%q, its namespace's %s=%q", harness.ObjectKey(hr), shardKeyLabel, label, tenantShardLabel, shard))
		}
	}
	return bad
}

// checkPlacement checks that each release is on its tenant's shard and
// that the shard's helm-controller (the operator's Deployment) selects it.
func (e *env) checkPlacement(t *testing.T, f *fleetRepo, labelled func(*unstructured.Unstructured) bool) {
	t.Helper()
	if bad := e.misplaced(f, labelled); len(bad) > 0 {
		t.Errorf("releases off where they belong:\n  %s", strings.Join(bad, "\n  "))
	}
	shards := map[string]int{}
	for _, hr := range f.releases() {
		if !labelled(hr) {
			shards["main"]++
			continue
		}
		got, _ := e.admin.Get(e.ctx, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName())
		if got == nil {
			continue
		}
		shard := got.GetLabels()[shardKeyLabel]
		shards[shard]++
		dep, err := e.admin.Get(e.ctx, "apps/v1", "Deployment", harness.CozyFluxNamespace, "helm-controller-"+shard)
		if err != nil || dep == nil {
			t.Errorf("%s is on %s, which has no Deployment helm-controller-%s (%v)", harness.ObjectKey(hr), shard, shard, err)
			continue
		}
		containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		want := "--watch-label-selector=" + shardKeyLabel + "=" + shard
		found := false
		for _, c := range containers {
			args, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
			for _, a := range args {
				found = found || a == want
			}
		}
		if !found {
			t.Errorf("Deployment helm-controller-%s does not run helm-controller with %s", shard, want)
		}
	}
	t.Logf("releases per shard: %v", shards)
}

// churn is what a few reconciles wrote to the fleet's releases.
type churn struct {
	reconciles, releases int
	// writes are changes of a release's metadata or spec (status writes
	// of helm-controller left out); flips are changes of its shard label.
	writes, flips int
	// managers are who made those writes (managedFields), by count.
	managers map[string]int
}

// plus is c and d, measured one after the other.
func (c churn) plus(d churn) churn {
	sum := churn{reconciles: c.reconciles + d.reconciles, releases: c.releases,
		writes: c.writes + d.writes, flips: c.flips + d.flips, managers: map[string]int{}}
	for _, m := range []map[string]int{c.managers, d.managers} {
		for k, v := range m {
			sum.managers[k] += v
		}
	}
	return sum
}

func (c churn) String() string {
	per := 0.0
	if c.reconciles > 0 && c.releases > 0 {
		per = float64(c.writes) / float64(c.reconciles*c.releases)
	}
	return fmt.Sprintf("%d releases, %d reconciles: %d writes (%.2f per release per reconcile), %d shard-label flips, by %v",
		c.releases, c.reconciles, c.writes, per, c.flips, c.managers)
}

// measureReconciles has kustomize-controller reconcile every Kustomization
// of the wiring n times (reconcile.fluxcd.io/requestedAt, as `flux
// reconcile` does) and counts the writes to the fleet's releases meanwhile,
// from a watch: a change of labels, annotations or generation is a write;
// the manager is the managedFields entry whose time moved.
func (e *env) measureReconciles(t *testing.T, f *fleetRepo, n int) churn {
	t.Helper()
	ctx, cancel := context.WithCancel(e.ctx)
	events, err := e.admin.Watch(ctx, helmV2, "HelmRelease", "")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ours := map[string]bool{}
	for _, hr := range f.releases() {
		ours[hr.GetNamespace()+"/"+hr.GetName()] = true
	}
	c := churn{reconciles: n, releases: len(ours), managers: map[string]int{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		last := map[string]*unstructured.Unstructured{}
		for ev := range events {
			key := ev.Object.GetNamespace() + "/" + ev.Object.GetName()
			if !ours[key] || ev.Type != watch.Modified {
				last[key] = ev.Object
				continue
			}
			prev := last[key]
			last[key] = ev.Object
			if prev == nil {
				continue
			}
			if !metadataOrSpecChanged(prev, ev.Object) {
				continue
			}
			c.writes++
			if prev.GetLabels()[shardKeyLabel] != ev.Object.GetLabels()[shardKeyLabel] {
				c.flips++
			}
			for _, m := range movedManagers(prev, ev.Object) {
				c.managers[m]++
			}
		}
	}()
	// The watch starts from now: read each release once so that the
	// first change has something to compare with.
	time.Sleep(500 * time.Millisecond)
	for _, hr := range f.releases() {
		_, _ = e.admin.Get(e.ctx, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName())
	}
	names := append([]string{fleetRoot}, f.kustomizations()...)
	for i := 0; i < n; i++ {
		at := time.Now().Format(time.RFC3339Nano)
		patch := []byte(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"` + at + `"}}}`)
		for _, name := range names {
			if _, err := e.admin.MergePatch(e.ctx, kustomizeV1, "Kustomization", harness.FluxNamespace, name, patch); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range names {
			e.waitFor(t, e.admin, kustomizeV1, "Kustomization", harness.FluxNamespace, name, 2*time.Minute,
				func(u *unstructured.Unstructured) (bool, string) {
					got, _, _ := unstructured.NestedString(u.Object, "status", "lastHandledReconcileAt")
					return got == at, "lastHandledReconcileAt " + got + ", want " + at
				})
		}
		// The operator answers a relabel within milliseconds; leave it
		// time to.
		time.Sleep(3 * time.Second)
	}
	cancel()
	<-done
	return c
}

// metadataOrSpecChanged reports a write other than a status update.
func metadataOrSpecChanged(a, b *unstructured.Unstructured) bool {
	if a.GetGeneration() != b.GetGeneration() {
		return true
	}
	return !mapsEqual(a.GetLabels(), b.GetLabels()) || !mapsEqual(a.GetAnnotations(), b.GetAnnotations())
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// movedManagers are the managedFields entries (manager/operation) of b
// that are new or newer than in a, status writes left out.
func movedManagers(a, b *unstructured.Unstructured) []string {
	before := map[string]string{}
	for _, m := range a.GetManagedFields() {
		if m.Subresource == "" && m.Time != nil {
			before[m.Manager+"/"+string(m.Operation)] = m.Time.String()
		}
	}
	var out []string
	for _, m := range b.GetManagedFields() {
		if m.Subresource != "" || m.Time == nil {
			continue
		}
		k := m.Manager + "/" + string(m.Operation)
		if before[k] != m.Time.String() {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		out = []string{"(no managedFields entry moved)"}
	}
	return out
}

// shardLabelOwners counts the field managers that own the shard label of
// the fleet's releases ("nobody" when none does).
func (e *env) shardLabelOwners(f *fleetRepo) map[string]int {
	out := map[string]int{}
	for _, hr := range f.releases() {
		got, err := e.admin.Get(e.ctx, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName())
		if err != nil || got == nil {
			continue
		}
		owned := false
		for _, m := range got.GetManagedFields() {
			if m.FieldsV1 != nil && strings.Contains(string(m.FieldsV1.Raw), `"f:`+shardKeyLabel+`"`) {
				out[m.Manager+"/"+string(m.Operation)]++
				owned = true
			}
		}
		if !owned {
			out["nobody"]++
		}
	}
	return out
}
