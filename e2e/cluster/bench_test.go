package cluster

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// TestFleetCost measures the GitOps side of a generated fleet (issue 20 §4,
// docs/performance.md "The GitOps side"): the fleet of `make bench`
// (internal/testkit/fleetgen) at each size of E2E_BENCH_TENANTS, rendered as a fleet
// folder, reconciled by the real kustomize-controller from one root
// Kustomization, as Cozystack runs Flux (cozy-fluxcd:flux, --concurrent=5,
// the fleet's wiring in flux-system). It reports how long the root takes to
// bring every Kustomization Ready, then forces reconciles of the settled
// fleet and counts the writes the API servers saw meanwhile, from their own
// apiserver_request_total. Not a timed test: only writes to the applied
// objects after settling fail it.
//
// helm-controller does not run: the releases would need the 30 charts of
// the generated definitions, and what is measured is kustomize-controller
// applying units. source-watcher runs, for the platform unit's
// ArtifactGenerator (the platform unit waits for it, and every unit for the
// platform). One stand-in API server plays every tenant's ComputePlane (each
// baseline has its own namespaces there), so that the baselines, and the
// routed units after them, get Ready.
//
// It runs only with E2E_BENCH=1 (make e2e-bench), never in make e2e.
func TestFleetCost(t *testing.T) {
	if os.Getenv("E2E_BENCH") == "" {
		t.Skip("the GitOps cost of a generated fleet runs with `make e2e-bench` (E2E_BENCH=1)")
	}
	b := binsFromEnv(t)
	gen := os.Getenv("E2E_FLEETGEN")
	if gen == "" {
		t.Skip("E2E_FLEETGEN is not set: run it with `make e2e-bench`, which builds the fleet generator")
	}
	var sizes []int
	for _, s := range strings.FieldsFunc(envOr("E2E_BENCH_TENANTS", "100"), func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("E2E_BENCH_TENANTS: %q is not a number of tenants", s)
		}
		sizes = append(sizes, n)
	}
	var results []fleetCost
	for _, n := range sizes {
		t.Run(fmt.Sprintf("Tenants%d", n), func(t *testing.T) {
			results = append(results, measureFleetCost(t, b, gen, n))
		})
	}
	report := costTables(results)
	t.Logf("the GitOps side:\n%s", report)
	out := filepath.Join("..", "..", ".work", "e2e", "bench", "fleet-cost.md")
	harness.WriteFile(t, out, []byte(report))
	t.Logf("the tables are in %s", out)
}

// tmpfsDir is a folder on /dev/shm, removed when the test ends, or "" (a
// folder on disk) where there is none.
func tmpfsDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "e2e-bench-")
	if err != nil {
		t.Logf("no tmpfs for kustomize-controller (%v): its TMPDIR stays on disk", err)
		return ""
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// benchMode is the Flux layout of the bench, E2E_BENCH_LAYOUT: Cozystack's
// (the default: its controllers as cozy-fluxcd:flux, the fleet's wiring in
// flux-system) or FluxInstall (stock Flux: each controller as its own
// account in flux-system), in a management cluster named after the size,
// on the platform E2E_BENCH_PLATFORM names: "oldest" (the default:
// kube-apiserver v1.33.5 and the controllers Cozystack ships, which are
// Flux v2.8's, the stock layout's oldest row too) or "newest"
// (kube-apiserver v1.36.3 and current Flux, kustomize-controller v1.9.6).
func benchMode(t *testing.T, tenants int) fluxMode {
	layout := envOr("E2E_BENCH_LAYOUT", "Cozystack")
	if layout != "Cozystack" && layout != "FluxInstall" {
		t.Fatalf("E2E_BENCH_LAYOUT: %q is neither Cozystack nor FluxInstall", layout)
	}
	for _, m := range fluxModes {
		if m.name == layout {
			t.Logf("layout %s: kustomize-controller as %s, in %s", layout, m.kustomizeController, m.namespace)
			m.name = fmt.Sprintf("Bench%d", tenants)
			switch p := envOr("E2E_BENCH_PLATFORM", "oldest"); p {
			case "oldest":
				m.oldest, m.cozystackFlux = true, true
			case "newest":
				m.oldest, m.cozystackFlux = false, false
			default:
				t.Fatalf("E2E_BENCH_PLATFORM: %q is neither oldest nor newest", p)
			}
			return m
		}
	}
	panic("no " + layout + " layout")
}

// fleetCost is what one size of fleet cost.
type fleetCost struct {
	tenants, objects, kustomizations int
	// unitSource is spec.fleet.unitSource (E2E_BENCH_UNIT_SOURCE).
	unitSource string
	// shards is spec.fleet.shards (E2E_BENCH_SHARDS), and selected the
	// Kustomizations each kustomize-controller's selector takes, in the
	// order of kustomizeControllers.
	shards   int
	selected []int
	// changes are the one-tenant commits after the forced reconciles.
	changes []tenantChange
	// render is the wall time of computeplane-fn --output-dir.
	render time.Duration
	// ready is the wall time from creating the root to every
	// Kustomization Ready at the published revision; the CPU times are of
	// the components over the same span.
	ready                time.Duration
	readyCPU             cpuTimes
	reconciles           []reconcileCost
	readyAt50, readyAt90 time.Duration
	readyWork            kustomizeWork
	// readyRetries are the reconciles kustomize-controller put off for a
	// dependency not Ready yet (requeued after --requeue-dependency).
	readyRetries int
	// helm is the helm side (E2E_BENCH_HELM), nil when it did not run.
	helm *helmCost
}

// cpuTimes are the CPU times of the components that do the work.
type cpuTimes struct{ kustomizeController, apiserver, etcd, sourceWatcher time.Duration }

func (c cpuTimes) sub(o cpuTimes) cpuTimes {
	return cpuTimes{c.kustomizeController - o.kustomizeController, c.apiserver - o.apiserver, c.etcd - o.etcd, c.sourceWatcher - o.sourceWatcher}
}

// reconcileCost is one forced reconcile of every Kustomization of the
// settled fleet, and the write requests it caused.
type reconcileCost struct {
	wall time.Duration
	// annotated is when the test had requested the last reconcile; at50
	// and at90 when half and nine tenths of the Kustomizations were
	// handled (as seen by the test's polling).
	annotated, at50, at90 time.Duration
	// busy is the share of the machine's cores in use meanwhile; standIn
	// and self the CPU of the ComputePlane stand-in's API server and of
	// the test itself (its requests and its polling).
	busy          float64
	standIn, self time.Duration
	cpu           cpuTimes
	// Management cluster, requests that are no dry-run:
	annotate float64 // the test's own reconcile.fluxcd.io/requestedAt patches
	status   float64 // status subresources (kustomizations/status)
	events   float64
	applied  float64 // any write to a kind the fleet applies: the goal is 0
	other    float64 // anything else (the API server's own leases...)
	dryRuns  float64 // kustomize-controller's dry-run applies (never stored)
	// The ComputePlane stand-in (the baselines' remote apply).
	cpApplied, cpDryRuns float64
	// retries are reconciles put off for a dependency not Ready (one
	// that is itself reconciling reports Ready Unknown meanwhile).
	retries int
	work    kustomizeWork
	// changed are the applied objects whose resourceVersion (for
	// Kustomizations: generation or labels) moved.
	changed []string
	// writes and cpWrites are every write request, for the log.
	writes, cpWrites harness.RequestCounts
}

func measureFleetCost(t *testing.T, b bins, gen string, tenants int) fleetCost {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Hour)
	t.Cleanup(cancel)
	cost := fleetCost{tenants: tenants}
	etcd := harness.StartEtcd(t, b.etcd, t.TempDir())
	e := startEnv(t, ctx, b, etcd, benchMode(t, tenants), "")

	// Cozystack's kustomize-controller (fluxcd.yaml at 3c780acd), and
	// with E2E_BENCH_SHARDS > 1 one shard controller per shard.
	sw := harness.StartSourceWatcher(t, e.mgmt, e.dir, b.sourceWatcher, e.mode.sourceWatcher, e.mode.namespace)
	cost.unitSource = envOr("E2E_BENCH_UNIT_SOURCE", "FleetSource")
	byArtifact := cost.unitSource == "ExternalArtifact"
	shards, err := strconv.Atoi(envOr("E2E_BENCH_SHARDS", "1"))
	if err != nil || shards < 1 || shards > 100 {
		t.Fatalf("E2E_BENCH_SHARDS: %q is not a number of shards from 1 to 100 (spec.fleet.shards)", os.Getenv("E2E_BENCH_SHARDS"))
	}
	cost.shards = shards
	kc := e.startBenchKustomizeControllers(t, shards, byArtifact)
	e.procs = append(append(e.procs, sw), kc...)
	e.ensurePlatform(t)
	helm := helmBenchOn()
	if helm {
		// flux-shard-operator as Cozystack deploys it, before any tenant
		// exists; the stand-in cluster chart with a cilium namespace per
		// tenant (benchPackagesTree).
		waitPortsFree(t, 10*time.Minute, "127.0.0.1:"+strconv.Itoa(harness.ShardOperatorWebhookPort), "127.0.0.1:443")
		e.ensureShardOperator(t)
		e.publishPackages(t, benchPackagesTree())
	}

	// The fleet: generated, with the wiring of the fleet folder.
	work := filepath.Join(t.TempDir(), "fleet")
	if out, err := exec.Command(gen, "-tenants", strconv.Itoa(tenants), "-out", work).CombinedOutput(); err != nil {
		t.Fatalf("fleetgen -tenants %d: %v\n%s", tenants, err, out)
	}
	editSpec(t, filepath.Join(work, "config.yaml"), func(spec map[string]any) {
		spec["fleet"] = map[string]any{
			"sourceRef":  map[string]any{"kind": "GitRepository", "name": "fleet", "namespace": e.mode.fleetNamespace},
			"path":       "./fleet",
			"interval":   "10m",
			"unitSource": cost.unitSource,
		}
		if shards > 1 {
			spec["fleet"].(map[string]any)["shards"] = shards
		}
		// Rendered for the platform's Kubernetes, as the suite's fleets
		// are (fleetDir): on the newest, the guard's 1.36 form and the
		// shard label's default there (Admission).
		if !e.mode.oldest {
			platform, _ := spec["platform"].(map[string]any)
			if platform == nil {
				platform = map[string]any{}
			}
			platform["kubernetesVersion"] = newestKubernetes
			spec["platform"] = platform
		}
	})
	f := &fleetRepo{e: e, work: work, repo: filepath.Join(t.TempDir(), "repo")}
	start := time.Now()
	f.publish(t)
	cost.render = time.Since(start)
	cost.objects = len(f.objs)
	names := allKustomizations(f)
	cost.kustomizations = len(names)
	t.Logf("%d tenants: %d objects, %d Kustomizations (and the root), rendered and published in %s",
		tenants, cost.objects, len(names)-1, cost.render.Round(time.Millisecond))
	cost.selected = kc.selected(t, f)
	t.Logf("Kustomizations each kustomize-controller selects: %s", shareList(kc.shards(), intsToFloats(cost.selected), "%g"))

	// The namespaces the fleet's objects live in (Cozystack's tenants
	// make them), and one ComputePlane stand-in behind every baseline's
	// kubeconfig Secret.
	var missing []string
	for _, ns := range tenantNamespaces(f.all()) {
		if ns != "kube-system" && ns != e.mode.fleetNamespace && ns != e.mode.namespace {
			missing = append(missing, ns)
		}
	}
	e.namespaces(missing...)
	if helm {
		e.placeFleetTenants(t, f)
	}
	cp := e.sharedComputePlane(t, f, helm)
	t.Logf("one ComputePlane stand-in for the %d baselines (an address of its own for each: %v)", len(f.baselines()), helm)

	// The bootstrap (docs/flux-wiring.md): the fleet's account as admin,
	// then the root.
	e.bootstrapFleet(t, f.all())
	root := e.fleetRoot()
	cpu0 := e.cpuTimes(t, kc, sw)
	work0 := e.kustomizeWork(t, kc)
	retries0 := dependencyRetries(kc)
	start = time.Now()
	e.applyAll(t, e.admin, []*unstructured.Unstructured{root}, false)
	var readyAt milestones
	e.waitKustomizations(t, names, tenantsTimeout(tenants, 10*time.Minute, 3*time.Second), readyAt.track(start, len(names)), func(u *unstructured.Unstructured) bool {
		ok, _ := harness.Ready(u)
		rev, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
		if kind, _, _ := unstructured.NestedString(u.Object, "spec", "sourceRef", "kind"); kind == "ExternalArtifact" {
			// An artifact's revision is its content's digest; every
			// artifact is cut from the one revision published so far.
			return ok && rev != ""
		}
		return ok && rev == f.revision
	})
	cost.ready = time.Since(start)
	at50, at90 := readyAt.at50, readyAt.at90
	cost.readyAt50, cost.readyAt90 = at50, at90
	cost.readyCPU = e.cpuTimes(t, kc, sw).sub(cpu0)
	cost.readyRetries = dependencyRetries(kc) - retries0
	cost.readyWork = e.kustomizeWork(t, kc).sub(work0)
	t.Logf("every Kustomization Ready at %s %s after the root (50%% at %s, 90%% at %s); CPU: %s; %d dependency retries; reconciles: %s",
		f.revision, cost.ready.Round(time.Second), at50.Round(time.Second), at90.Round(time.Second), cost.readyCPU, cost.readyRetries, cost.readyWork)
	e.checkApplied(t, f)

	// Settled: nothing is pending. Then every Kustomization reconciles
	// again, E2E_BENCH_RECONCILES times (2; 0 skips them), each time on
	// request.
	time.Sleep(10 * time.Second)
	reconciles, err := strconv.Atoi(envOr("E2E_BENCH_RECONCILES", "2"))
	if err != nil || reconciles < 0 {
		t.Fatalf("E2E_BENCH_RECONCILES: %q is not a number of reconciles", os.Getenv("E2E_BENCH_RECONCILES"))
	}
	for i := 1; i <= reconciles; i++ {
		rc := e.measureForcedReconcile(t, f, cp, kc, sw, names)
		cost.reconciles = append(cost.reconciles, rc)
		t.Logf("forced reconcile %d of %d Kustomizations: all handled in %s (requested by %s, 50%% at %s, 90%% at %s; CPU %s; the ComputePlane stand-in %s, the test %s; the machine's cores %.0f%% busy), %d dependency retries; reconciles: %s\n  management cluster, writes:\n    %s\n  ComputePlane stand-in, writes:\n    %s",
			i, len(names), rc.wall.Round(time.Millisecond), rc.annotated.Round(time.Second), rc.at50.Round(time.Second), rc.at90.Round(time.Second), rc.cpu, rc.standIn.Round(100*time.Millisecond), rc.self.Round(100*time.Millisecond), 100*rc.busy, rc.retries, rc.work,
			strings.ReplaceAll(rc.writes.String(), "\n", "\n    "), strings.ReplaceAll(rc.cpWrites.String(), "\n", "\n    "))
		if rc.applied != 0 || rc.cpApplied != 0 || len(rc.changed) > 0 {
			t.Errorf("forced reconcile %d of the settled fleet wrote to the applied objects: %g requests on the management cluster, %g on the ComputePlane, %d objects changed:\n  %s",
				i, rc.applied, rc.cpApplied, len(rc.changed), strings.Join(first(rc.changed, 20), "\n  "))
		}
	}
	if envOr("E2E_BENCH_TENANT_CHANGE", "1") != "0" {
		cost.changes = e.measureTenantChanges(t, f, kc, sw)
	}
	if helm {
		cost.helm = e.helmSide(t, f, cp, tenants, kc)
	}
	return cost
}

// benchTenant is the tenant the bench adds to, then removes from, a settled
// fleet: the one-tenant change, and the case that once broke a fleet cut
// into artifacts (a group's artifact rebuilt with stale copy rules).
const benchTenant = "benchadded"

// tenantChange is one commit that changes one tenant, and what the fleet
// did for it.
type tenantChange struct {
	what string
	// applied is the wall time from publishing the revision until the
	// tenant's units are Ready with its objects in the cluster (added), or
	// its Kustomizations and objects are gone (removed).
	applied time.Duration
	// settled is the wall time until every Kustomization has applied its
	// source's current revision, cpu the components' CPU until then.
	settled time.Duration
	cpu     cpuTimes
	work    kustomizeWork
	// selected are the Kustomizations each kustomize-controller selects
	// in the fleet of the commit.
	selected []int
	// reconciled are the Kustomizations that applied a new revision
	// meanwhile (or came or went), namespace/name.
	reconciled []string
	// artifacts are the ExternalArtifacts whose revision changed
	// (spec.fleet.unitSource: ExternalArtifact).
	artifacts []string
}

// measureTenantChanges adds a tenant to the settled fleet (a copy of one
// without a ComputePlane, and one of its apps), then removes it, each in a
// commit of its own, and measures each (tenantChange).
func (e *env) measureTenantChanges(t *testing.T, f *fleetRepo, kc kustomizeControllers, sw *harness.Process) []tenantChange {
	t.Helper()
	tenantsFile := filepath.Join(f.work, "tenants.yaml")
	original, err := os.ReadFile(tenantsFile)
	if err != nil {
		t.Fatal(err)
	}
	ns := addBenchTenant(t, f.work, original)
	e.namespaces(ns)
	added := e.measureTenantChange(t, f, kc, sw, "add tenant "+ns, ns, true)
	var objs []string
	for key, o := range f.objs {
		if o.GetNamespace() == ns {
			objs = append(objs, key)
		}
	}
	harness.WriteFile(t, tenantsFile, original)
	if err := os.Remove(filepath.Join(f.work, "apps", ns+".yaml")); err != nil {
		t.Fatal(err)
	}
	removed := e.measureTenantChange(t, f, kc, sw, "remove tenant "+ns, ns, false)
	t.Logf("%s: %d objects", ns, len(objs))
	return []tenantChange{added, removed}
}

// addBenchTenant writes benchTenant into the generated fleet's inputs: a
// copy of the first tenant without a ComputePlane that has apps, under
// tenant-root, and a copy of that tenant's first app. It returns the new
// tenant's namespace.
func addBenchTenant(t *testing.T, work string, tenants []byte) string {
	t.Helper()
	ns := "tenant-" + benchTenant
	for _, doc := range strings.Split(string(tenants), "\n---\n") {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil || m["kind"] != "Tenant" {
			continue
		}
		spec, _ := m["spec"].(map[string]any)
		if cp, _ := spec["computeplane"].(bool); cp {
			continue
		}
		md := m["metadata"].(map[string]any)
		donor := "tenant-" + md["name"].(string)
		if parent := md["namespace"].(string); parent != "tenant-root" {
			donor = parent + "-" + md["name"].(string)
		}
		apps, err := os.ReadFile(filepath.Join(work, "apps", donor+".yaml"))
		if err != nil {
			continue
		}
		md["name"], md["namespace"] = benchTenant, "tenant-root"
		if _, ok := spec["host"]; ok {
			spec["host"] = benchTenant + ".example.org"
		}
		tenant, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		harness.WriteFile(t, filepath.Join(work, "tenants.yaml"), append(append(append([]byte{}, tenants...), "\n---\n"...), tenant...))
		var app map[string]any
		first, _, _ := strings.Cut(strings.TrimPrefix(string(apps), "---\n"), "\n---\n")
		if err := yaml.Unmarshal([]byte(first), &app); err != nil {
			t.Fatal(err)
		}
		app["metadata"].(map[string]any)["namespace"] = ns
		data, err := yaml.Marshal(app)
		if err != nil {
			t.Fatal(err)
		}
		harness.WriteFile(t, filepath.Join(work, "apps", ns+".yaml"), data)
		t.Logf("%s: a copy of %s and of its %s %s", ns, donor, app["kind"], app["metadata"].(map[string]any)["name"])
		return ns
	}
	t.Fatal("the generated fleet has no tenant without a ComputePlane with apps to copy")
	return ""
}

// measureTenantChange renders and publishes the work folder as it is now,
// in which tenant namespace ns was added (add) or removed, and measures
// what the fleet did for it (tenantChange).
func (e *env) measureTenantChange(t *testing.T, f *fleetRepo, kc kustomizeControllers, sw *harness.Process, what, ns string, add bool) tenantChange {
	t.Helper()
	var before []string // the tenant's objects and Kustomizations before
	for key, o := range f.objs {
		if o.GetNamespace() == ns || (o.GetKind() == "Kustomization" && strings.Contains(o.GetName(), ns)) {
			before = append(before, key)
		}
	}
	beforeObjs := f.objs
	f.render(t)
	eaBefore := e.artifactRevisions(t)
	revs0 := e.appliedRevisions(t)
	cpu0 := e.cpuTimes(t, kc, sw)
	work0 := e.kustomizeWork(t, kc)
	start := time.Now()
	f.upload(t)
	c := tenantChange{what: what, selected: kc.selected(t, f)}
	timeout := tenantsTimeout(len(f.objs)/10, 5*time.Minute, time.Second)
	err := harness.Poll(e.ctx, timeout, time.Second, func() (bool, string) {
		if add {
			var missing []string
			for key, o := range f.objs {
				if o.GetNamespace() != ns && !(o.GetKind() == "Kustomization" && strings.Contains(o.GetName(), ns)) {
					continue
				}
				got, err := e.admin.Get(e.ctx, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
				if err != nil || got == nil {
					missing = append(missing, key+": not yet")
					continue
				}
				if p := f.wrongOwner(key, got); p != "" {
					missing = append(missing, p)
					continue
				}
				if o.GetKind() == "Kustomization" {
					if ok, seen := harness.Ready(got); !ok {
						missing = append(missing, key+": "+seen)
					}
				}
			}
			return len(missing) == 0, fmt.Sprint(first(missing, 5))
		}
		var left []string
		for _, key := range before {
			o := beforeObjs[key]
			got, err := e.admin.Get(e.ctx, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
			if err != nil || got != nil {
				left = append(left, key)
			}
		}
		return len(left) == 0, fmt.Sprintf("still there: %v", first(left, 5))
	})
	if err != nil {
		t.Fatalf("%s: %v%s", what, err, e.logs("error"))
	}
	c.applied = time.Since(start)
	// Settled: every Kustomization has applied its source's current
	// revision (an artifact's, or the published one for the fleet source),
	// every ArtifactGenerator is Ready. The periodic reconciles
	// of a large fleet never leave kustomize-controller idle, so its log
	// cannot say when the commit is done; they apply no new revision.
	err = harness.Poll(e.ctx, timeout, 2*time.Second, func() (bool, string) {
		return e.atCurrentRevisions(t, f)
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	c.settled = time.Since(start)
	c.cpu = e.cpuTimes(t, kc, sw).sub(cpu0)
	c.work = e.kustomizeWork(t, kc).sub(work0)
	// Did work for it: applied a revision it had not applied before (a new
	// Kustomization too, or one that went).
	revs1 := e.appliedRevisions(t)
	for key, rev := range revs1 {
		if prev, ok := revs0[key]; !ok || prev != rev {
			c.reconciled = append(c.reconciled, key)
		}
	}
	for key := range revs0 {
		if _, ok := revs1[key]; !ok {
			c.reconciled = append(c.reconciled, key+" (deleted)")
		}
	}
	sort.Strings(c.reconciled)
	eaAfter := e.artifactRevisions(t)
	for name, rev := range eaAfter {
		if eaBefore[name] != rev {
			c.artifacts = append(c.artifacts, name)
		}
	}
	for name := range eaBefore {
		if _, ok := eaAfter[name]; !ok {
			c.artifacts = append(c.artifacts, name+" (deleted)")
		}
	}
	sort.Strings(c.artifacts)
	t.Logf("%s: applied in %s, every Kustomization applied its source's revision in %s; CPU %s; reconciles: %s; %d applied a new revision:\n  %s\n%d ExternalArtifacts changed: %v",
		what, c.applied.Round(100*time.Millisecond), c.settled.Round(100*time.Millisecond), c.cpu, c.work, len(c.reconciled),
		strings.Join(first(c.reconciled, 30), "\n  "), len(c.artifacts), first(c.artifacts, 30))
	return c
}

// appliedRevisions are the last applied revisions of the Kustomizations the
// fleet's account applies, by namespace/name.
func (e *env) appliedRevisions(t *testing.T) map[string]string {
	t.Helper()
	list, err := e.admin.List(e.ctx, kustomizeV1, "Kustomization", "", "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i := range list {
		rev, _, _ := unstructured.NestedString(list[i].Object, "status", "lastAppliedRevision")
		out[list[i].GetNamespace()+"/"+list[i].GetName()] = rev
	}
	return out
}

// atCurrentRevisions reports whether every Kustomization has applied its
// source's current revision and every ArtifactGenerator of the fleet is
// Ready, and if not, a few that are not.
func (e *env) atCurrentRevisions(t *testing.T, f *fleetRepo) (bool, string) {
	t.Helper()
	arts := e.artifactRevisions(t)
	list, err := e.admin.List(e.ctx, kustomizeV1, "Kustomization", "", "")
	if err != nil {
		return false, err.Error()
	}
	var behind []string
	for i := range list {
		u := &list[i]
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "sourceRef", "kind")
		name, _, _ := unstructured.NestedString(u.Object, "spec", "sourceRef", "name")
		want := f.revision
		if kind == "ExternalArtifact" {
			want = arts[name]
		}
		// Applied, not Ready: at 1,000 tenants the periodic reconciles
		// always hold a few Kustomizations Ready=Unknown (reconciling) or
		// waiting for a dependency that is.
		rev, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
		if rev != want {
			behind = append(behind, fmt.Sprintf("%s/%s at %q, want %q", u.GetNamespace(), u.GetName(), rev, want))
		}
	}
	gens, err := e.admin.List(e.ctx, "source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator", e.mode.fleetNamespace, "")
	if err != nil {
		return false, err.Error()
	}
	for i := range gens {
		if ok, seen := harness.Ready(&gens[i]); !ok {
			behind = append(behind, "ArtifactGenerator "+gens[i].GetName()+": "+seen)
		}
	}
	return len(behind) == 0, fmt.Sprintf("%d behind: %v", len(behind), first(behind, 3))
}

// artifactRevisions are the revisions of the ExternalArtifacts in the
// fleet's namespace, by name.
func (e *env) artifactRevisions(t *testing.T) map[string]string {
	t.Helper()
	list, err := e.admin.List(e.ctx, sourceV1, "ExternalArtifact", e.mode.fleetNamespace, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i := range list {
		rev, _, _ := unstructured.NestedString(list[i].Object, "status", "artifact", "revision")
		out[list[i].GetName()] = rev
	}
	return out
}

// dependencyRetries counts the reconciles the kustomize-controllers have
// put off so far for a dependency that was not Ready, from their logs (the
// message of v1.9's KustomizationReconciler).
func dependencyRetries(kc kustomizeControllers) int {
	n := 0
	for _, p := range kc {
		n += len(p.Grep("Dependencies do not meet ready condition"))
	}
	return n
}

// selfCPU is the CPU time the test process has used.
func selfCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatalf("failed to read the test's CPU time: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// milestones are when half and nine tenths of a wait's Kustomizations
// were done, as the test's polling saw them.
type milestones struct{ at50, at90 time.Duration }

// track is a progress function for waitKustomizations: it records the
// milestones of total Kustomizations, from start.
func (m *milestones) track(start time.Time, total int) func(int) {
	return func(done int) {
		if m.at50 == 0 && 2*done >= total {
			m.at50 = time.Since(start)
		}
		if m.at90 == 0 && 10*done >= 9*total {
			m.at90 = time.Since(start)
		}
	}
}

// tenantsTimeout bounds a wait that grows with the fleet.
func tenantsTimeout(tenants int, base, per time.Duration) time.Duration {
	return base + time.Duration(tenants)*per
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("... and %d more", len(s)-n))
	}
	return s
}

// allKustomizations are the root and every Kustomization the fleet folder
// applies to the management cluster (wiring groups, units, baselines), as
// namespace/name.
func allKustomizations(f *fleetRepo) []string {
	names := []string{f.e.mode.fleetNamespace + "/" + fleetRoot}
	for _, o := range f.objs {
		if o.GetKind() == "Kustomization" && o.GetAPIVersion() == kustomizeV1 {
			names = append(names, o.GetNamespace()+"/"+o.GetName())
		}
	}
	sort.Strings(names[1:])
	return names
}

// requestOrder is the order in which the bench requests a reconcile of
// every Kustomization: each after the Kustomizations it applies (the
// tenants' baselines, then the units, then the wiring groups, then the
// root). A Kustomization that applies another one compares it with the
// live object; requested the other way round, the test's own annotation
// could land between that read and the dry run and look like drift, and
// the apply that follows would be counted as a write to an applied object.
func (e *env) requestOrder(names []string) []string {
	rank := func(n string) int {
		ns, name, _ := strings.Cut(n, "/")
		switch {
		case ns != e.mode.fleetNamespace:
			return 0 // a tenant's baseline
		case name == fleetRoot:
			return 3
		case strings.HasPrefix(name, "computeplane-wiring-"):
			return 2 // a wiring group (docs/flux-wiring.md)
		default:
			return 1
		}
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(rank(a), rank(b)) })
	return out
}

// baselines are the fleet's in-cluster baseline Kustomizations (with a
// kubeConfig).
func (f *fleetRepo) baselines() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range f.objs {
		if o.GetKind() != "Kustomization" {
			continue
		}
		if _, ok, _ := unstructured.NestedMap(o.Object, "spec", "kubeConfig"); ok {
			out = append(out, o)
		}
	}
	return out
}

// sharedComputePlane starts one API server for every tenant's ComputePlane
// and writes its admin kubeconfig into the Secret each baseline names; with
// ownEndpoints, each ComputePlane reaches it at an address of its own
// (planeEndpoints), as helm-controller reaches clusters of their own.
func (e *env) sharedComputePlane(t *testing.T, f *fleetRepo, ownEndpoints bool) *harness.APIServer {
	t.Helper()
	cp := harness.StartAPIServer(t, harness.APIServerOptions{
		Name: e.serverName("computeplane"), Bin: e.bins.apiserver, Etcd: e.etcd, Dir: e.dir,
	})
	e.aggregateAdmin(t, harness.MustClient(t, cp, harness.Admin, cp.Config(harness.Admin)))
	baselines := f.baselines()
	sort.Slice(baselines, func(i, j int) bool { return harness.ObjectKey(baselines[i]) < harness.ObjectKey(baselines[j]) })
	var kubeconfigs [][]byte
	if ownEndpoints {
		kubeconfigs = planeEndpoints(t, cp, len(baselines))
	}
	for i, ks := range baselines {
		kubeconfig := cp.Kubeconfig(harness.Admin)
		if ownEndpoints {
			kubeconfig = kubeconfigs[i]
		}
		name, _, _ := unstructured.NestedString(ks.Object, "spec", "kubeConfig", "secretRef", "name")
		key, _, _ := unstructured.NestedString(ks.Object, "spec", "kubeConfig", "secretRef", "key")
		if name == "" || key == "" {
			t.Fatalf("baseline %s/%s names no kubeconfig Secret and key", ks.GetNamespace(), ks.GetName())
		}
		if _, _, err := e.admin.Apply(e.ctx, secret(ks.GetNamespace(), name, map[string]string{key: string(kubeconfig)}), harness.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return cp
}

// cpuTimes reads the CPU times of the kustomize-controllers (summed), the
// management API server, etcd and source-watcher.
func (e *env) cpuTimes(t *testing.T, kc kustomizeControllers, sw *harness.Process) cpuTimes {
	t.Helper()
	var c cpuTimes
	for _, p := range kc {
		d, err := p.CPUTime()
		if err != nil {
			t.Fatal(err)
		}
		c.kustomizeController += d
	}
	for _, p := range []struct {
		proc *harness.Process
		into *time.Duration
	}{{e.mgmt.Proc, &c.apiserver}, {e.etcd.Proc, &c.etcd}, {sw, &c.sourceWatcher}} {
		d, err := p.proc.CPUTime()
		if err != nil {
			t.Fatal(err)
		}
		*p.into = d
	}
	return c
}

func (c cpuTimes) String() string {
	return fmt.Sprintf("kustomize-controller %s, kube-apiserver %s, etcd %s, source-watcher %s",
		c.kustomizeController.Round(100*time.Millisecond), c.apiserver.Round(100*time.Millisecond), c.etcd.Round(100*time.Millisecond),
		c.sourceWatcher.Round(100*time.Millisecond))
}

// waitKustomizations lists the Kustomizations until done accepts every one
// of names, calling progress with the count accepted after each look. One
// LIST a look, not one GET per Kustomization: the wait must not be what
// loads the API server.
func (e *env) waitKustomizations(t *testing.T, names []string, timeout time.Duration, progress func(int), done func(*unstructured.Unstructured) bool) {
	t.Helper()
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	interval := 2 * time.Second
	if len(names) > 500 {
		interval = 5 * time.Second
	}
	lastLog := time.Now()
	err := harness.Poll(e.ctx, timeout, interval, func() (bool, string) {
		list, err := e.admin.List(e.ctx, kustomizeV1, "Kustomization", "", "")
		if err != nil {
			return false, err.Error()
		}
		ok := 0
		var notYet []string
		for i := range list {
			u := &list[i]
			key := u.GetNamespace() + "/" + u.GetName()
			if !want[key] {
				continue
			}
			if done(u) {
				ok++
			} else if len(notYet) < 3 {
				_, seen := harness.Ready(u)
				notYet = append(notYet, key+": "+seen)
			}
		}
		progress(ok)
		if time.Since(lastLog) > 30*time.Second {
			t.Logf("%d of %d Kustomizations done", ok, len(names))
			lastLog = time.Now()
		}
		return ok == len(names), fmt.Sprintf("%d of %d done; not yet %v", ok, len(names), notYet)
	})
	if err != nil {
		t.Fatalf("Kustomizations: %v%s", err, e.logs("error"))
	}
}

// checkApplied checks that every object of the folder is in the
// management cluster, labelled with its unit's Kustomization, by listing
// each kind once.
func (e *env) checkApplied(t *testing.T, f *fleetRepo) {
	t.Helper()
	live := e.liveObjects(t, f)
	var problems []string
	for key := range f.objs {
		got, ok := live[key]
		if !ok {
			problems = append(problems, key+": not in the cluster")
			continue
		}
		if p := f.wrongOwner(key, got); p != "" {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Fatalf("%d of %d objects not applied as rendered:\n  %s", len(problems), len(f.objs), strings.Join(first(problems, 20), "\n  "))
	}
}

// liveObjects lists, kind by kind, the live objects of the folder's kinds,
// by harness.ObjectKey.
func (e *env) liveObjects(t *testing.T, f *fleetRepo) map[string]*unstructured.Unstructured {
	t.Helper()
	kinds := map[[2]string]bool{}
	for _, o := range f.objs {
		kinds[[2]string{o.GetAPIVersion(), o.GetKind()}] = true
	}
	live := map[string]*unstructured.Unstructured{}
	for k := range kinds {
		list, err := e.admin.List(e.ctx, k[0], k[1], "", "")
		if err != nil {
			t.Fatal(err)
		}
		for i := range list {
			key := harness.ObjectKey(&list[i])
			if _, ours := f.objs[key]; ours {
				live[key] = &list[i]
			}
		}
	}
	return live
}

// appliedResources are the API resources of the folder's kinds.
func (e *env) appliedResources(t *testing.T, f *fleetRepo) map[[2]string]bool {
	t.Helper()
	out := map[[2]string]bool{}
	for _, o := range f.objs {
		gvr, _, err := e.admin.Resource(o.GetAPIVersion(), o.GetKind())
		if err != nil {
			t.Fatal(err)
		}
		out[[2]string{gvr.Group, gvr.Resource}] = true
	}
	return out
}

// measureForcedReconcile asks every Kustomization to reconcile
// (reconcile.fluxcd.io/requestedAt, as `flux reconcile` does), waits until
// each has handled it and is Ready, and sorts the write requests both API
// servers counted meanwhile.
func (e *env) measureForcedReconcile(t *testing.T, f *fleetRepo, cp *harness.APIServer, kc kustomizeControllers, sw *harness.Process, names []string) reconcileCost {
	t.Helper()
	resources := e.appliedResources(t, f)
	before := e.liveObjects(t, f)
	mgmt0, err := e.mgmt.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp0, err := cp.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	cpu0 := e.cpuTimes(t, kc, sw)
	work0 := e.kustomizeWork(t, kc)
	retries0 := dependencyRetries(kc)
	busy0, total0, err := harness.MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	standIn0, err := cp.Proc.CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	self0 := selfCPU(t)
	start := time.Now()
	token := start.UTC().Format(time.RFC3339Nano)
	patch := []byte(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"` + token + `"}}}`)
	for _, n := range e.requestOrder(names) {
		ns, name, _ := strings.Cut(n, "/")
		if _, err := e.admin.MergePatch(e.ctx, kustomizeV1, "Kustomization", ns, name, patch); err != nil {
			t.Fatal(err)
		}
	}
	annotated := time.Since(start)
	var handledAt milestones
	e.waitKustomizations(t, names, tenantsTimeout(len(names), 10*time.Minute, time.Second), handledAt.track(start, len(names)), func(u *unstructured.Unstructured) bool {
		handled, _, _ := unstructured.NestedString(u.Object, "status", "lastHandledReconcileAt")
		ok, _ := harness.Ready(u)
		return handled == token && ok
	})
	rc := reconcileCost{wall: time.Since(start), annotated: annotated, at50: handledAt.at50, at90: handledAt.at90}
	rc.cpu = e.cpuTimes(t, kc, sw).sub(cpu0)
	busy1, total1, err := harness.MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	rc.busy = float64(busy1-busy0) / float64(total1-total0)
	standIn1, err := cp.Proc.CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	rc.standIn, rc.self = standIn1-standIn0, selfCPU(t)-self0
	rc.retries = dependencyRetries(kc) - retries0
	rc.work = e.kustomizeWork(t, kc).sub(work0)
	rc.writes, rc.cpWrites = e.writesSince(t, cp, mgmt0, cp0)
	for r, n := range rc.writes {
		switch {
		case r.DryRun:
			rc.dryRuns += n
		case r.Subresource == "status":
			rc.status += n
		case r.Resource == "events":
			rc.events += n
		case r.Group == "kustomize.toolkit.fluxcd.io" && r.Resource == "kustomizations" && r.Subresource == "" && r.Verb == "PATCH":
			rc.annotate += n
		case resources[[2]string{r.Group, r.Resource}] && r.Subresource == "":
			rc.applied += n
		default:
			rc.other += n
		}
	}
	for r, n := range rc.cpWrites {
		switch {
		case r.DryRun:
			rc.cpDryRuns += n
		case r.Resource == "leases":
			// The stand-in API server's own heartbeat.
		default:
			rc.cpApplied += n
		}
	}
	after := e.liveObjects(t, f)
	for key, a := range after {
		b, ok := before[key]
		if !ok {
			continue
		}
		if a.GetKind() == "Kustomization" {
			// The annotation and the status move its resourceVersion;
			// a change the wiring applied moves its generation or labels.
			if a.GetGeneration() != b.GetGeneration() || !mapsEqual(a.GetLabels(), b.GetLabels()) {
				rc.changed = append(rc.changed, key)
			}
			continue
		}
		if a.GetResourceVersion() != b.GetResourceVersion() {
			rc.changed = append(rc.changed, key)
		}
	}
	sort.Strings(rc.changed)
	return rc
}

// costTables formats the results as the Markdown tables of
// docs/performance.md.
func costTables(results []fleetCost) string {
	var b strings.Builder
	b.WriteString("| tenants | unitSource | objects | Kustomizations | render + publish | root → all Ready (50%, 90%) | CPU meanwhile: kustomize-controller, kube-apiserver, etcd, source-watcher | dependency retries |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, c := range results {
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %s | %s (%s, %s) | %s, %s, %s, %s | %d |\n", c.tenants, c.layout(), c.objects, c.kustomizations,
			c.render.Round(100*time.Millisecond), c.ready.Round(time.Second), c.readyAt50.Round(time.Second), c.readyAt90.Round(time.Second),
			c.readyCPU.kustomizeController.Round(time.Second), c.readyCPU.apiserver.Round(time.Second), c.readyCPU.etcd.Round(time.Second),
			c.readyCPU.sourceWatcher.Round(time.Second), c.readyRetries)
	}
	b.WriteString("\n| tenants | unitSource | forced reconcile | all handled in (all requested, 50%, 90%) | CPU: kustomize-controller (per Kustomization), kube-apiserver, etcd, source-watcher | CPU elsewhere: the ComputePlane stand-in, the test; the cores busy | dependency retries | dry-run applies (ComputePlane) | status writes (per Kustomization) | events | the test's annotate | other writes | writes to applied objects (ComputePlane) | objects changed |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range results {
		for i, r := range c.reconciles {
			fmt.Fprintf(&b, "| %d | %s | %d | %s (%s, %s, %s) | %s (%s), %s, %s, %s | %s, %s; %.0f%% | %d | %g (%g) | %g (%.1f) | %g | %g | %g | **%g** (%g) | %d |\n", c.tenants, c.layout(), i+1,
				r.wall.Round(100*time.Millisecond), r.annotated.Round(time.Second), r.at50.Round(time.Second), r.at90.Round(time.Second), r.cpu.kustomizeController.Round(100*time.Millisecond),
				(r.cpu.kustomizeController / time.Duration(c.kustomizations)).Round(time.Millisecond), r.cpu.apiserver.Round(100*time.Millisecond),
				r.cpu.etcd.Round(100*time.Millisecond), r.cpu.sourceWatcher.Round(100*time.Millisecond),
				r.standIn.Round(100*time.Millisecond), r.self.Round(100*time.Millisecond), 100*r.busy, r.retries, r.dryRuns, r.cpDryRuns, r.status, r.status/float64(c.kustomizations),
				r.events, r.annotate, r.other, r.applied, r.cpApplied, len(r.changed))
		}
	}
	b.WriteString("\n| tenants | unitSource | one-tenant commit | applied in | every Kustomization at its source's revision in | Kustomizations that applied a new revision | ExternalArtifacts changed | CPU: kustomize-controller, kube-apiserver, etcd, source-watcher |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, c := range results {
		for _, ch := range c.changes {
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %d | %d | %s, %s, %s, %s |\n", c.tenants, c.layout(), ch.what,
				ch.applied.Round(100*time.Millisecond), ch.settled.Round(100*time.Millisecond), len(ch.reconciled), len(ch.artifacts),
				ch.cpu.kustomizeController.Round(100*time.Millisecond), ch.cpu.apiserver.Round(100*time.Millisecond),
				ch.cpu.etcd.Round(100*time.Millisecond), ch.cpu.sourceWatcher.Round(100*time.Millisecond))
		}
	}
	b.WriteString(shardTable(results))
	b.WriteString(helmTables(results))
	return b.String()
}

// writesSince waits for what follows a reconcile right after it (events,
// the last status patches) and returns the write requests the management
// API server and the ComputePlane stand-in cp have served since the counts
// mgmt0 and cp0.
func (e *env) writesSince(t *testing.T, cp *harness.APIServer, mgmt0, cp0 harness.RequestCounts) (mgmt, plane harness.RequestCounts) {
	t.Helper()
	time.Sleep(5 * time.Second)
	mgmt1, err := e.mgmt.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp1, err := cp.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return mgmt1.Since(mgmt0).Writes(), cp1.Since(cp0).Writes()
}
