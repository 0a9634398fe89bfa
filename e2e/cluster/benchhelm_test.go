package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// The helm side of the bench (issue 39, docs/performance.md "The helm
// side"): helm-controller installs every release of the generated fleet, as
// Cozystack runs it (cozy-fluxcd:flux, --concurrent=5,
// --requeue-dependency=30s, the ExternalArtifact gate), the main controller
// beside the two shards flux-shard-operator makes, each tenant placed by
// the operator and every release stamped with its tenant's shard by the
// operator's webhook. Every definition's chart is a stand-in (one
// ConfigMap) served as its ExternalArtifact; every ComputePlane is reached
// through its own kubeconfig Secret at an address of its own in
// 127.0.0.0/8, forwarded to one stand-in API server, so that helm-controller
// holds one client per cluster as in production. On with E2E_BENCH_HELM=1
// (the default); E2E_BENCH_HELM=0 runs the GitOps side alone.

// helmBenchOn reports whether the bench runs the helm side.
func helmBenchOn() bool { return envOr("E2E_BENCH_HELM", "1") != "0" }

const (
	applicationKindLabel = "apps.cozystack.io/application.kind"
	// planeAddressBase is the first ComputePlane's address; the others
	// follow, 250 to a /24 (127.0.10.1 to 127.0.10.250, 127.0.11.1...),
	// clear of 127.0.0.1 where every component of the suite listens.
	planeAddressBase = 10
)

// planeAddress is the loopback address of the i-th ComputePlane.
func planeAddress(i int) string {
	return fmt.Sprintf("127.0.%d.%d", planeAddressBase+i/250, 1+i%250)
}

// planeEndpoints starts, for each of n ComputePlanes, a forwarder from an
// address of its own (planeAddress) to the stand-in API server's port, and
// returns each one's kubeconfig: the stand-in's admin, at that address,
// checking the certificate for localhost (which it names).
func planeEndpoints(t *testing.T, cp *harness.APIServer, n int) [][]byte {
	t.Helper()
	u, err := url.Parse(cp.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range n {
		addr := net.JoinHostPort(planeAddress(i), port)
		harness.ServicePort(t, addr, u.Host)
		out[i] = cp.KubeconfigAt(harness.Admin, "https://"+addr, "localhost")
	}
	return out
}

// benchPackagesTree is packagesTree with the stand-in apps/kubernetes
// installing its cilium addon into a namespace of the tenant's own
// (<tenant namespace>-cilium) rather than cozy-cilium: every ComputePlane of
// the bench is one API server, where 500 releases named cilium in one
// namespace would be one release fought over. A real ComputePlane is a
// cluster of its own and the real chart's cozy-cilium is right there.
func benchPackagesTree() map[string][]byte {
	files := packagesTree()
	chart := string(files["apps/kubernetes/templates/cilium.yaml"])
	chart = strings.ReplaceAll(chart, "targetNamespace: cozy-cilium", "targetNamespace: {{ .Release.Namespace }}-cilium")
	chart = strings.ReplaceAll(chart, "storageNamespace: cozy-cilium", "storageNamespace: {{ .Release.Namespace }}-cilium")
	files["apps/kubernetes/templates/cilium.yaml"] = []byte(chart)
	return files
}

// waitPortsFree waits until each address can be bound: flux-shard-operator's
// webhook port is fixed (9443, and the Service's 443 in front of it), and a
// stage of make e2e run by someone else on the machine may hold it for a
// few minutes.
func waitPortsFree(t *testing.T, timeout time.Duration, addrs ...string) {
	t.Helper()
	err := harness.Poll(context.Background(), timeout, 5*time.Second, func() (bool, string) {
		for _, a := range addrs {
			l, err := net.Listen("tcp", a)
			if err != nil {
				return false, err.Error()
			}
			l.Close()
		}
		return true, ""
	})
	if err != nil {
		t.Fatalf("flux-shard-operator's ports stay taken: %v", err)
	}
}

// fleetTenant is one Tenant of the fleet's tenants.yaml.
type fleetTenant struct{ name, parent string }

// namespace is the tenant's namespace, as Cozystack's tenant chart names it
// (and flux-shard-operator attributes it).
func (ft fleetTenant) namespace() string {
	if ft.parent == "tenant-root" {
		return "tenant-" + ft.name
	}
	return ft.parent + "-" + ft.name
}

// fleetTenants reads the Tenants of the fleet's tenants.yaml.
func fleetTenants(t *testing.T, f *fleetRepo) []fleetTenant {
	t.Helper()
	objs, err := harness.DecodeFiles(filepath.Join(f.work, "tenants.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []fleetTenant
	for _, o := range objs {
		if o.GetKind() == "Tenant" {
			out = append(out, fleetTenant{name: o.GetName(), parent: o.GetNamespace()})
		}
	}
	return out
}

// placeFleetTenants places every tenant of the fleet as Cozystack does
// before its apps exist: the tenant's own release (tenant-<name> in its
// parent's namespace, kind Tenant, labelled tenants), which the operator's
// webhook and placement controller give a shard, recorded on the tenant's
// namespace. The releases are suspended: their chart is not the bench's
// (no helm-controller installs them), only their placement is. It writes
// every tenant namespace's cozystack-values too, which every app's
// valuesFrom reads.
func (e *env) placeFleetTenants(t *testing.T, f *fleetRepo) {
	t.Helper()
	tenants := fleetTenants(t, f)
	e.namespaces("tenant-root")
	for _, ft := range tenants {
		e.namespaces(ft.parent, ft.namespace())
	}
	for _, ft := range tenants {
		hr := obj(helmV2, "HelmRelease", ft.parent, "tenant-"+ft.name, map[string]any{
			"spec": map[string]any{
				"interval": "5m",
				"suspend":  true,
				"chartRef": map[string]any{"kind": "ExternalArtifact", "name": "cozystack-tenant-application-default-tenant", "namespace": cozySystem},
			},
		})
		hr.SetLabels(map[string]string{applicationKindLabel: "Tenant", shardKeyLabel: "tenants"})
		if _, _, err := e.admin.Apply(e.ctx, hr, harness.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		e.writeCozystackValues(t, ft.namespace())
	}
	want := map[string]bool{}
	for _, ft := range tenants {
		want[ft.namespace()] = true
	}
	err := harness.Poll(e.ctx, tenantsTimeout(len(tenants), 2*time.Minute, 200*time.Millisecond), 2*time.Second, func() (bool, string) {
		list, err := e.admin.List(e.ctx, "v1", "Namespace", "", "")
		if err != nil {
			return false, err.Error()
		}
		placed := 0
		for _, ns := range list {
			if want[ns.GetName()] && shardValue.MatchString(ns.GetLabels()[tenantShardLabel]) {
				placed++
			}
		}
		return placed == len(want), fmt.Sprintf("%d of %d tenant namespaces placed", placed, len(want))
	})
	if err != nil {
		t.Fatalf("flux-shard-operator did not place the fleet's tenants: %v%s", err, e.logs("placement"))
	}
	t.Logf("flux-shard-operator placed the fleet's %d tenants", len(tenants))
}

// helmControllers are the bench's helm-controllers: the main one
// (--watch-label-selector=!sharding.fluxcd.io/key) first, then one per
// shard Deployment flux-shard-operator made, helm-controller-shard<i>.
type helmControllers []*harness.Process

// startBenchHelmControllers starts Cozystack's helm-controller as its
// fluxcd.yaml runs it (cozy-fluxcd:flux, --concurrent=5,
// --requeue-dependency=30s, --log-level=info, the ExternalArtifact gate) with
// Flux's default retry delays, and one process for every shard Deployment
// of the operator, with that Deployment's own arguments (the shard's
// selector, the operator's --shard-concurrent).
func (e *env) startBenchHelmControllers(t *testing.T) helmControllers {
	t.Helper()
	base := []string{"--watch-all-namespaces", "--concurrent=5", "--requeue-dependency=30s"}
	names := []string{"helm-controller"}
	args := [][]string{append(base, "--watch-label-selector=!"+shardKeyLabel)}
	for i := range operatorShards {
		name := fmt.Sprintf("helm-controller-shard%d", i)
		dep := e.mustGet(t, e.admin, "apps/v1", "Deployment", harness.CozyFluxNamespace, name)
		containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
		var shardArgs []string
		for _, c := range containers {
			if c.(map[string]any)["name"] == "helm-controller" {
				shardArgs, _, _ = unstructured.NestedStringSlice(c.(map[string]any), "args")
			}
		}
		if len(shardArgs) == 0 {
			t.Fatalf("Deployment %s/%s runs no helm-controller container with arguments", harness.CozyFluxNamespace, name)
		}
		names = append(names, name)
		args = append(args, shardArgs)
	}
	var hc helmControllers
	for i, name := range names {
		a := append(append([]string{}, args[i]...), "--log-level=info", "--feature-gates=ExternalArtifact=true")
		opts := harness.ControllerOptions{Name: name, Bin: e.bins.helmController, Identity: e.mode.helmController, Namespace: e.mode.namespace, Args: a}
		if envOr("E2E_BENCH_TMPFS", "1") != "0" {
			opts.TempDir = tmpfsDir(t)
		}
		hc = append(hc, harness.StartController(t, e.mgmt, e.dir, opts))
		t.Logf("%s: %s", name, strings.Join(a, " "))
	}
	return hc
}

// helmShard names the controller of hc that selects a release by its shard
// label: "main" for none.
func helmShard(p *harness.Process) string {
	if s, ok := strings.CutPrefix(p.Name, "helm-controller-"); ok {
		return s
	}
	return "main"
}

func (hc helmControllers) shards() []string {
	out := make([]string, len(hc))
	for i, p := range hc {
		out[i] = helmShard(p)
	}
	return out
}

// helmWork is what each helm-controller did over one span, in hc's order.
type helmWork struct {
	reconciles []float64
	cpu        []time.Duration
}

// helmWork reads each controller's HelmRelease reconciles and CPU so far.
func (e *env) helmWork(t *testing.T, hc helmControllers) helmWork {
	t.Helper()
	var w helmWork
	for _, p := range hc {
		n, err := p.ReconcileTotal(e.ctx, "helmrelease")
		if err != nil {
			t.Fatal(err)
		}
		cpu, err := p.CPUTime()
		if err != nil {
			t.Fatal(err)
		}
		w.reconciles = append(w.reconciles, n)
		w.cpu = append(w.cpu, cpu)
	}
	return w
}

func (w helmWork) sub(o helmWork) helmWork {
	var out helmWork
	for i := range w.reconciles {
		out.reconciles = append(out.reconciles, w.reconciles[i]-o.reconciles[i])
		out.cpu = append(out.cpu, w.cpu[i]-o.cpu[i])
	}
	return out
}

func (w helmWork) cpuSeconds() []float64 {
	out := make([]float64, len(w.cpu))
	for i, c := range w.cpu {
		out[i] = c.Seconds()
	}
	return out
}

func (w helmWork) totalCPU() time.Duration {
	var d time.Duration
	for _, c := range w.cpu {
		d += c
	}
	return d
}

func (w helmWork) totalReconciles() float64 {
	n := 0.0
	for _, r := range w.reconciles {
		n += r
	}
	return n
}

// perRelease is each controller's CPU per reconcile, in ms.
func (w helmWork) perRelease() []float64 {
	out := make([]float64, len(w.cpu))
	for i := range w.cpu {
		if w.reconciles[i] > 0 {
			out[i] = float64(w.cpu[i].Milliseconds()) / w.reconciles[i]
		}
	}
	return out
}

// memory is each controller's resident memory now and at its peak, MiB.
func (e *env) helmMemory(t *testing.T, hc helmControllers) (rss, peak []float64) {
	t.Helper()
	for _, p := range hc {
		r, pk, err := p.Memory()
		if err != nil {
			t.Fatal(err)
		}
		rss = append(rss, float64(r)/(1<<20))
		peak = append(peak, float64(pk)/(1<<20))
	}
	return rss, peak
}

// helmCost is what the helm side of one size cost.
type helmCost struct {
	shards []string
	// releases are the HelmReleases helm-controller had to make Ready:
	// the fleet's and the cilium addon each cluster release installs.
	releases int
	// selected and planes are, per controller, the releases its selector
	// took once all were Ready and the ComputePlanes those reach (the
	// distinct namespaces of its releases with a kubeConfig).
	selected, planes []float64
	// ready is from the helm-controllers' start, the fleet Ready, to every
	// release Ready at its generation.
	ready, at50, at90 time.Duration
	install           helmWork
	// apiserver, etcd and standIn are the CPU of the management API
	// server, etcd and the ComputePlane stand-in over the install; busy
	// the machine's cores.
	apiserver, etcd, standIn time.Duration
	busy                     float64
	// kustomize is the kustomize-controllers' CPU over the install.
	kustomize time.Duration
	// requests are the management API server's requests over the install,
	// reads and writes; messages what the helm-controllers logged, each
	// message with the names in it left out, counted over all of them:
	// together they say where the API server's time went.
	requests harness.RequestCounts
	messages map[string]int
	// rss and peak are each controller's memory once all were Ready, MiB.
	rss, peak  []float64
	reconciles []helmReconcile
	// moved are the releases whose shard label changed from Ready to the
	// end of the forced reconciles (the operator's rebalancing).
	moved int
	// idle is the settled fleet left alone for E2E_BENCH_HELM_IDLE, nil
	// when skipped.
	idle *helmIdle
}

// helmIdle is the settled fleet left to its own intervals for a while: the
// reconciles helm-controller makes on its own (spec.interval) and what they
// cost, with no request of the test's.
type helmIdle struct {
	window                   time.Duration
	work                     helmWork
	apiserver, etcd, standIn time.Duration
	writes, cpWrites         harness.RequestCounts
	rss                      []float64
	// kustomize is the kustomize-controllers' CPU meanwhile (their own
	// interval), part of kube-apiserver's.
	kustomize time.Duration
}

// cores is the share of one core the helm side used over the window:
// helm-controller, both API servers and etcd.
func (i *helmIdle) cores() float64 {
	return (i.work.totalCPU() + i.apiserver + i.etcd + i.standIn).Seconds() / i.window.Seconds()
}

// helmReconcile is one forced reconcile of every release of the settled
// fleet (reconcile.fluxcd.io/requestedAt) and what it wrote.
type helmReconcile struct {
	wall, annotated, at50, at90 time.Duration
	work                        helmWork
	apiserver, etcd, standIn    time.Duration
	busy                        float64
	rss, peak                   []float64
	// newRevisions are Helm storage Secrets (sh.helm.release.v1.*) that
	// appeared in either cluster; rewritten those whose resourceVersion
	// moved; changed the installed objects (ConfigMaps, namespaces, the
	// cluster releases' addon HelmReleases) that moved.
	newRevisions, rewritten, changed []string
	// Management cluster, by apiserver_request_total: status writes
	// (helmreleases/status), events, the test's own annotations,
	// Secrets (Helm storage), writes to the kinds the releases install,
	// and the rest; the same on the ComputePlane stand-in.
	status, events, annotate, storage, installed, other float64
	cpStorage, cpInstalled, cpOther                     float64
	writes, cpWrites                                    harness.RequestCounts
}

// helmSide runs the helm side on the fleet, Ready, and returns what it
// cost.
//
// kc are the kustomize-controllers, still reconciling the fleet at its
// interval: their CPU meanwhile is reported beside helm-controller's, since
// kube-apiserver's is both sides'.
func (e *env) helmSide(t *testing.T, f *fleetRepo, cp *harness.APIServer, tenants int, kc kustomizeControllers) *helmCost {
	t.Helper()
	cpc := harness.MustClient(t, cp, harness.Admin, cp.Config(harness.Admin))
	// The baselines bound the ComputePlane's admin role; no
	// kube-controller-manager aggregates it here.
	e.aggregateAdmin(t, cpc)
	// Every definition's chart as its ExternalArtifact, a stand-in.
	charts := map[string]bool{}
	clusters := 0
	for _, hr := range f.releases() {
		if isCluster(hr) {
			clusters++
		}
		kind, _, _ := unstructured.NestedString(hr.Object, "spec", "chartRef", "kind")
		name, _, _ := unstructured.NestedString(hr.Object, "spec", "chartRef", "name")
		if kind == "ExternalArtifact" && name != clusterArtifact {
			charts[name] = true
		}
	}
	for name := range charts {
		if _, done := appCharts[name]; done {
			continue
		}
		_, chart, ok := strings.Cut(name, "-application-default-")
		if !ok {
			t.Fatalf("chartRef %s is not a Cozystack application's ExternalArtifact name", name)
		}
		ea := obj(sourceV1, "ExternalArtifact", cozySystem, name, map[string]any{"spec": map[string]any{}})
		e.setArtifact(t, ea, e.artifacts.Publish("externalartifact", cozySystem, name, "0.1.0", appChart(t, chart)))
	}
	hcost := &helmCost{releases: len(f.releases()) + clusters}
	t.Logf("the helm side: %d releases (%d rendered, %d cilium addons of the cluster releases), %d charts", hcost.releases, len(f.releases()), clusters, len(charts)+1)

	hc := e.startBenchHelmControllers(t)
	hcost.shards = hc.shards()
	e.procs = append(e.procs, hc...)
	w0 := e.helmWork(t, hc)
	api0, etcd0, cp0, kc0 := e.cpuOf(t, e.mgmt.Proc), e.cpuOf(t, e.etcd.Proc), e.cpuOf(t, cp.Proc), kc.cpu(t)
	requests0, err := e.mgmt.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	busy0, total0, err := harness.MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	go e.profileHelm(t, hc, tenants)
	var at milestones
	live := e.waitHelmReleases(t, hcost.releases, tenantsTimeout(tenants, 15*time.Minute, 5*time.Second), at.track(start, hcost.releases), func(u *unstructured.Unstructured) bool {
		ok, _ := harness.Ready(u)
		return ok
	})
	hcost.ready, hcost.at50, hcost.at90 = time.Since(start), at.at50, at.at90
	hcost.install = e.helmWork(t, hc).sub(w0)
	hcost.apiserver, hcost.etcd, hcost.standIn = e.cpuOf(t, e.mgmt.Proc)-api0, e.cpuOf(t, e.etcd.Proc)-etcd0, e.cpuOf(t, cp.Proc)-cp0
	hcost.kustomize = kc.cpu(t) - kc0
	requests1, err := e.mgmt.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	hcost.requests = requests1.Since(requests0)
	hcost.messages = logMessages(hc)
	busy1, total1, err := harness.MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	hcost.busy = float64(busy1-busy0) / float64(total1-total0)
	hcost.rss, hcost.peak = e.helmMemory(t, hc)
	hcost.selected, hcost.planes = selection(hc, live)
	labels0 := shardLabels(live)
	t.Logf("every release Ready %s after the helm-controllers started (50%% at %s, 90%% at %s); CPU: helm-controller %s, kube-apiserver %s, etcd %s, the ComputePlane stand-in %s, kustomize-controller %s; cores %.0f%% busy\n  releases each selects: %s\n  ComputePlanes each reaches: %s\n  reconciles: %s\n  CPU per reconcile: %s\n  memory: %s (peak %s)",
		hcost.ready.Round(time.Second), hcost.at50.Round(time.Second), hcost.at90.Round(time.Second),
		shareList(hcost.shards, hcost.install.cpuSeconds(), "%.1f s"), hcost.apiserver.Round(100*time.Millisecond), hcost.etcd.Round(100*time.Millisecond),
		hcost.standIn.Round(100*time.Millisecond), hcost.kustomize.Round(100*time.Millisecond), 100*hcost.busy,
		shareList(hcost.shards, hcost.selected, "%g"), shareList(hcost.shards, hcost.planes, "%g"),
		shareList(hcost.shards, hcost.install.reconciles, "%g"), shareList(hcost.shards, hcost.install.perRelease(), "%.0f ms"),
		shareList(hcost.shards, hcost.rss, "%.0f MiB"), shareList(hcost.shards, hcost.peak, "%.0f MiB"))
	t.Logf("over the install, the management API server's requests (the most):\n  %s\nthe helm-controllers' log (the most):\n  %s",
		strings.Join(first(hcost.requests.Top(), 20), "\n  "), strings.Join(first(topMessages(hcost.messages), 12), "\n  "))

	time.Sleep(10 * time.Second)
	n, err := strconv.Atoi(envOr("E2E_BENCH_HELM_RECONCILES", "1"))
	if err != nil || n < 0 {
		t.Fatalf("E2E_BENCH_HELM_RECONCILES: %q is not a number of reconciles", os.Getenv("E2E_BENCH_HELM_RECONCILES"))
	}
	for i := 1; i <= n; i++ {
		rc := e.measureHelmReconcile(t, hc, cp, cpc, hcost.releases)
		hcost.reconciles = append(hcost.reconciles, rc)
		t.Logf("forced reconcile %d of %d releases: all handled in %s (requested by %s, 50%% at %s, 90%% at %s); CPU: helm-controller %s, kube-apiserver %s, etcd %s, the stand-in %s; cores %.0f%% busy\n  reconciles: %s\n  CPU per reconcile: %s\n  new Helm revisions %d, storage Secrets rewritten %d, installed objects changed %d\n  management cluster, writes:\n    %s\n  ComputePlane stand-in, writes:\n    %s",
			i, hcost.releases, rc.wall.Round(time.Second), rc.annotated.Round(time.Second), rc.at50.Round(time.Second), rc.at90.Round(time.Second),
			shareList(hcost.shards, rc.work.cpuSeconds(), "%.1f s"), rc.apiserver.Round(100*time.Millisecond), rc.etcd.Round(100*time.Millisecond), rc.standIn.Round(100*time.Millisecond), 100*rc.busy,
			shareList(hcost.shards, rc.work.reconciles, "%g"), shareList(hcost.shards, rc.work.perRelease(), "%.0f ms"),
			len(rc.newRevisions), len(rc.rewritten), len(rc.changed),
			strings.ReplaceAll(rc.writes.String(), "\n", "\n    "), strings.ReplaceAll(rc.cpWrites.String(), "\n", "\n    "))
		if len(rc.newRevisions) > 0 || len(rc.changed) > 0 || rc.installed > 0 || rc.cpInstalled > 0 {
			t.Errorf("forced reconcile %d of the settled releases wrote: %d new Helm revisions, %d installed objects changed, %g writes to installed kinds on the management cluster, %g on the ComputePlane:\n  %s",
				i, len(rc.newRevisions), len(rc.changed), rc.installed, rc.cpInstalled,
				strings.Join(first(append(rc.newRevisions, rc.changed...), 20), "\n  "))
		}
	}
	if idle, err := time.ParseDuration(envOr("E2E_BENCH_HELM_IDLE", "5m30s")); err != nil {
		t.Fatalf("E2E_BENCH_HELM_IDLE: %v", err)
	} else if idle > 0 {
		hcost.idle = e.measureHelmIdle(t, hc, cp, kc, idle)
		i := hcost.idle
		t.Logf("left alone for %s: reconciles %s; CPU: helm-controller %s (%.1f ms per reconcile), kube-apiserver %s (%.1f ms per reconcile), etcd %s, the stand-in %s; %.2f cores; kustomize-controller meanwhile %s\n  management cluster, writes:\n    %s\n  ComputePlane stand-in, writes:\n    %s",
			i.window.Round(time.Second), shareList(hcost.shards, i.work.reconciles, "%g"), shareList(hcost.shards, i.work.cpuSeconds(), "%.1f s"),
			perReconcile(i.work.totalCPU(), i.work.totalReconciles()), i.apiserver.Round(100*time.Millisecond), perReconcile(i.apiserver, i.work.totalReconciles()),
			i.etcd.Round(100*time.Millisecond), i.standIn.Round(100*time.Millisecond), i.cores(), i.kustomize.Round(100*time.Millisecond),
			strings.ReplaceAll(i.writes.String(), "\n", "\n    "), strings.ReplaceAll(i.cpWrites.String(), "\n", "\n    "))
	}
	after, err := e.admin.List(e.ctx, helmV2, "HelmRelease", "", "")
	if err != nil {
		t.Fatal(err)
	}
	for key, l := range shardLabels(benchReleases(after)) {
		if was, ok := labels0[key]; ok && was != l {
			hcost.moved++
		}
	}
	return hcost
}

// logMessages counts the messages of the helm-controllers' JSON logs so
// far, each cut before its first quote, parenthesis or colon (where Flux
// puts the names and the error), so that one kind of step is one count.
func logMessages(hc helmControllers) map[string]int {
	out := map[string]int{}
	for _, p := range hc {
		f, err := os.Open(p.Log)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
		for sc.Scan() {
			var line struct {
				Msg string `json:"msg"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil || line.Msg == "" {
				continue
			}
			msg := line.Msg
			if i := strings.IndexAny(msg, "'\"(:"); i > 0 {
				msg = msg[:i]
			}
			out[strings.TrimSpace(msg)]++
		}
		f.Close()
	}
	return out
}

// topMessages lists the messages of logMessages, the most logged first.
func topMessages(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%d %s", m[k], k)
	}
	return out
}

// perReconcile is d per reconcile, in ms.
func perReconcile(d time.Duration, reconciles float64) float64 {
	if reconciles == 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000 / reconciles
}

// measureHelmIdle leaves the settled fleet alone for window (no request of
// the test's but the readings at both ends) and reads what helm-controller's
// own interval reconciles cost meanwhile.
func (e *env) measureHelmIdle(t *testing.T, hc helmControllers, cp *harness.APIServer, kc kustomizeControllers, window time.Duration) *helmIdle {
	t.Helper()
	mgmt0, err := e.mgmt.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp0, err := cp.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	w0 := e.helmWork(t, hc)
	api0, etcd0, standIn0, kc0 := e.cpuOf(t, e.mgmt.Proc), e.cpuOf(t, e.etcd.Proc), e.cpuOf(t, cp.Proc), kc.cpu(t)
	start := time.Now()
	select {
	case <-time.After(window):
	case <-e.ctx.Done():
		t.Fatal(e.ctx.Err())
	}
	i := &helmIdle{window: time.Since(start), work: e.helmWork(t, hc).sub(w0)}
	i.apiserver, i.etcd, i.standIn = e.cpuOf(t, e.mgmt.Proc)-api0, e.cpuOf(t, e.etcd.Proc)-etcd0, e.cpuOf(t, cp.Proc)-standIn0
	i.kustomize = kc.cpu(t) - kc0
	mgmt1, err := e.mgmt.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	cp1, err := cp.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	i.writes, i.cpWrites = mgmt1.Since(mgmt0).Writes(), cp1.Since(cp0).Writes()
	i.rss, _ = e.helmMemory(t, hc)
	return i
}

// cpu is the kustomize-controllers' CPU so far, summed.
func (kc kustomizeControllers) cpu(t *testing.T) time.Duration {
	t.Helper()
	var d time.Duration
	for _, p := range kc {
		c, err := p.CPUTime()
		if err != nil {
			t.Fatal(err)
		}
		d += c
	}
	return d
}

// cpuOf is a process's CPU time so far.
func (e *env) cpuOf(t *testing.T, p *harness.Process) time.Duration {
	t.Helper()
	d, err := p.CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// profileHelm takes a CPU profile of each helm-controller and of the
// management kube-apiserver, 30 s from 20 s into the install
// (helm-controller's pprof handlers are on its metrics address), into
// .work/e2e/bench/helm-<tenants>-<component>.pprof, for the cases where a
// figure misses. A profile that cannot be taken is only logged.
func (e *env) profileHelm(t *testing.T, hc helmControllers, tenants int) {
	select {
	case <-time.After(20 * time.Second):
	case <-e.ctx.Done():
		return
	}
	go func() {
		data, err := e.mgmt.CPUProfile(e.ctx, 30*time.Second)
		if err != nil {
			t.Logf("no CPU profile of the management kube-apiserver: %v", err)
			return
		}
		out := filepath.Join("..", "..", ".work", "e2e", "bench", fmt.Sprintf("helm-%d-kube-apiserver.pprof", tenants))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err == nil {
			_ = os.WriteFile(out, data, 0o644)
		}
	}()
	for _, p := range hc {
		go func() {
			ctx, cancel := context.WithTimeout(e.ctx, time.Minute)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.MetricsAddr+"/debug/pprof/profile?seconds=30", nil)
			if err != nil {
				return
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Logf("no CPU profile of %s: %v", p.Name, err)
				return
			}
			defer resp.Body.Close()
			data, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Logf("no CPU profile of %s: %v %s", p.Name, err, resp.Status)
				return
			}
			out := filepath.Join("..", "..", ".work", "e2e", "bench", fmt.Sprintf("helm-%d-%s.pprof", tenants, p.Name))
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err == nil {
				_ = os.WriteFile(out, data, 0o644)
			}
		}()
	}
}

// benchReleases are the releases helm-controller makes Ready: every
// HelmRelease but the tenants' own (kind Tenant, suspended).
func benchReleases(list []unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for i := range list {
		if list[i].GetLabels()[applicationKindLabel] == "Tenant" {
			continue
		}
		out = append(out, &list[i])
	}
	return out
}

// waitHelmReleases lists the HelmReleases until want of them exist and done
// accepts each, calling progress with the count accepted; it returns the
// last list.
func (e *env) waitHelmReleases(t *testing.T, want int, timeout time.Duration, progress func(int), done func(*unstructured.Unstructured) bool) []*unstructured.Unstructured {
	t.Helper()
	var last []*unstructured.Unstructured
	lastLog := time.Now()
	// Every look is a LIST of every release, values included: at 11,000
	// releases tens of MB, which must not be what loads the API server.
	interval := 5 * time.Second
	if want > 2000 {
		interval = 15 * time.Second
	}
	err := harness.Poll(e.ctx, timeout, interval, func() (bool, string) {
		list, err := e.admin.List(e.ctx, helmV2, "HelmRelease", "", "")
		if err != nil {
			return false, err.Error()
		}
		last = benchReleases(list)
		ok := 0
		reasons := map[string]int{}
		var notYet []string
		for _, u := range last {
			if done(u) {
				ok++
				continue
			}
			_, reason, msg, _ := harness.Condition(u, "Ready")
			reasons[reason]++
			if len(notYet) < 3 {
				notYet = append(notYet, harness.ObjectKey(u)+": "+reason+": "+harness.FirstLine(msg))
			}
		}
		progress(ok)
		if time.Since(lastLog) > 30*time.Second {
			t.Logf("%d of %d HelmReleases done (%d exist); not yet, by reason: %v", ok, want, len(last), reasons)
			lastLog = time.Now()
		}
		return ok == want && len(last) == want, fmt.Sprintf("%d of %d done (%d exist); not yet %v", ok, want, len(last), notYet)
	})
	if err != nil {
		t.Fatalf("HelmReleases: %v%s", err, e.logs("error"))
	}
	return last
}

// selection counts, per controller of hc, the releases its selector takes
// (by their live shard label) and the ComputePlanes those reach.
func selection(hc helmControllers, releases []*unstructured.Unstructured) (selected, planes []float64) {
	index := map[string]int{}
	for i, s := range hc.shards() {
		index[s] = i
	}
	selected, planes = make([]float64, len(hc)), make([]float64, len(hc))
	reach := make([]map[string]bool, len(hc))
	for i := range reach {
		reach[i] = map[string]bool{}
	}
	for _, u := range releases {
		s := u.GetLabels()[shardKeyLabel]
		if s == "" {
			s = "main"
		}
		i, ok := index[s]
		if !ok {
			continue // a shard no controller selects: waitHelmReleases has failed on it
		}
		selected[i]++
		if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "kubeConfig"); ok {
			reach[i][u.GetNamespace()] = true
		}
	}
	for i := range reach {
		planes[i] = float64(len(reach[i]))
	}
	return selected, planes
}

// shardLabels are the releases' shard labels by namespace/name.
func shardLabels(list []*unstructured.Unstructured) map[string]string {
	out := map[string]string{}
	for _, u := range list {
		out[u.GetNamespace()+"/"+u.GetName()] = u.GetLabels()[shardKeyLabel]
	}
	return out
}

// helmStorage are the Helm storage Secrets of a cluster (owner=helm), by
// namespace/name, with their resourceVersions.
func (e *env) helmStorage(t *testing.T, c *harness.Client) map[string]string {
	t.Helper()
	list, err := c.List(e.ctx, "v1", "Secret", "", "owner=helm")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list {
		out[s.GetNamespace()+"/"+s.GetName()] = s.GetResourceVersion()
	}
	return out
}

// installedObjects are the kinds the bench's releases install, in a
// cluster (ConfigMaps, Namespaces, and on the management cluster the
// cluster releases' addon HelmReleases, whose status helm-controller writes
// and which count by generation and labels), by kind/namespace/name with a
// version that moves only on a write to the object.
func (e *env) installedObjects(t *testing.T, c *harness.Client, addons bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, kind := range []string{"ConfigMap", "Namespace"} {
		list, err := c.List(e.ctx, "v1", kind, "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list {
			out[kind+"/"+o.GetNamespace()+"/"+o.GetName()] = o.GetResourceVersion()
		}
	}
	if addons {
		list, err := c.List(e.ctx, helmV2, "HelmRelease", "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range list {
			if o.GetLabels()["cozystack.io/target-cluster-name"] == "" {
				continue
			}
			labels := o.GetLabels()
			delete(labels, shardKeyLabel) // the operator's, not the chart's
			data, _ := yaml.Marshal(labels)
			out["HelmRelease/"+o.GetNamespace()+"/"+o.GetName()] = fmt.Sprintf("%d %s", o.GetGeneration(), data)
		}
	}
	return out
}

// measureHelmReconcile asks every release to reconcile
// (reconcile.fluxcd.io/requestedAt, as `flux reconcile helmrelease` does),
// waits until each has handled it and is Ready, and sorts what both API
// servers were asked to write meanwhile, and what changed.
func (e *env) measureHelmReconcile(t *testing.T, hc helmControllers, cp *harness.APIServer, cpc *harness.Client, want int) helmReconcile {
	t.Helper()
	storage0 := e.helmStorage(t, e.admin)
	cpStorage0 := e.helmStorage(t, cpc)
	installed0 := e.installedObjects(t, e.admin, true)
	cpInstalled0 := e.installedObjects(t, cpc, false)
	list, err := e.admin.List(e.ctx, helmV2, "HelmRelease", "", "")
	if err != nil {
		t.Fatal(err)
	}
	releases := benchReleases(list)
	mgmt0, err := e.mgmt.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	cpCounts0, err := cp.RequestCounts(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	w0 := e.helmWork(t, hc)
	api0, etcd0, standIn0 := e.cpuOf(t, e.mgmt.Proc), e.cpuOf(t, e.etcd.Proc), e.cpuOf(t, cp.Proc)
	busy0, total0, err := harness.MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	token := start.UTC().Format(time.RFC3339Nano)
	patch := []byte(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"` + token + `"}}}`)
	// Eight at a time: one after the other, 11,000 requests would take
	// minutes of the wall time measured.
	work := make(chan *unstructured.Unstructured)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			var first error
			for hr := range work {
				if _, err := e.admin.MergePatch(e.ctx, helmV2, "HelmRelease", hr.GetNamespace(), hr.GetName(), patch); err != nil && first == nil {
					first = err
				}
			}
			errs <- first
		}()
	}
	for _, hr := range releases {
		work <- hr
	}
	close(work)
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	rc := helmReconcile{annotated: time.Since(start)}
	var at milestones
	e.waitHelmReleases(t, want, tenantsTimeout(want/10, 15*time.Minute, 3*time.Second), at.track(start, want), func(u *unstructured.Unstructured) bool {
		handled, _, _ := unstructured.NestedString(u.Object, "status", "lastHandledReconcileAt")
		ok, _ := harness.Ready(u)
		return handled == token && ok
	})
	rc.wall, rc.at50, rc.at90 = time.Since(start), at.at50, at.at90
	rc.work = e.helmWork(t, hc).sub(w0)
	rc.apiserver, rc.etcd, rc.standIn = e.cpuOf(t, e.mgmt.Proc)-api0, e.cpuOf(t, e.etcd.Proc)-etcd0, e.cpuOf(t, cp.Proc)-standIn0
	busy1, total1, err := harness.MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	rc.busy = float64(busy1-busy0) / float64(total1-total0)
	rc.rss, rc.peak = e.helmMemory(t, hc)
	rc.writes, rc.cpWrites = e.writesSince(t, cp, mgmt0, cpCounts0)
	// kustomize-controller's interval may come round meanwhile: its dry
	// runs and status writes are in the figures (other, status), never
	// counted as writes to what Helm installed.
	for r, n := range rc.writes {
		switch {
		case r.DryRun:
			rc.other += n
		case r.Group == "kustomize.toolkit.fluxcd.io":
			rc.other += n
		case r.Subresource == "status":
			rc.status += n
		case r.Resource == "events":
			rc.events += n
		case r.Group == "helm.toolkit.fluxcd.io" && r.Resource == "helmreleases" && r.Verb == "PATCH":
			rc.annotate += n
		case r.Group == "" && r.Resource == "secrets":
			rc.storage += n
		case r.Group == "" && (r.Resource == "configmaps" || r.Resource == "namespaces"),
			r.Group == "helm.toolkit.fluxcd.io" && r.Resource == "helmreleases":
			rc.installed += n
		default:
			rc.other += n
		}
	}
	// The test's own annotations are PATCHes of helmreleases too: any
	// beyond them are a write to an installed addon release.
	if extra := rc.annotate - float64(len(releases)); extra > 0 {
		rc.installed += extra
		rc.annotate -= extra
	}
	for r, n := range rc.cpWrites {
		switch {
		case r.DryRun || r.Resource == "leases" || r.Resource == "events":
			// kustomize-controller's dry runs of the baselines, when
			// their interval comes round meanwhile; the stand-in API
			// server's own heartbeat; events.
			rc.cpOther += n
		case r.Group == "" && r.Resource == "secrets":
			rc.cpStorage += n
		default:
			rc.cpInstalled += n
		}
	}
	for _, pair := range []struct{ before, after map[string]string }{
		{storage0, e.helmStorage(t, e.admin)}, {cpStorage0, e.helmStorage(t, cpc)},
	} {
		for key, rv := range pair.after {
			was, ok := pair.before[key]
			switch {
			case !ok:
				rc.newRevisions = append(rc.newRevisions, key)
			case was != rv:
				rc.rewritten = append(rc.rewritten, key)
			}
		}
	}
	for _, pair := range []struct {
		where         string
		before, after map[string]string
	}{
		{"management", installed0, e.installedObjects(t, e.admin, true)}, {"ComputePlane", cpInstalled0, e.installedObjects(t, cpc, false)},
	} {
		for key, v := range pair.after {
			if was, ok := pair.before[key]; !ok || was != v {
				rc.changed = append(rc.changed, pair.where+": "+key)
			}
		}
	}
	sort.Strings(rc.newRevisions)
	sort.Strings(rc.rewritten)
	sort.Strings(rc.changed)
	return rc
}

// helmTables formats the helm side of every size as Markdown tables.
func helmTables(results []fleetCost) string {
	var b strings.Builder
	ran := false
	for _, c := range results {
		ran = ran || c.helm != nil
	}
	if !ran {
		return ""
	}
	b.WriteString("\n### The helm side\n\n| tenants | releases | ComputePlanes | fleet Ready → every release Ready (50%, 90%) | CPU: helm-controller (per release), kube-apiserver, etcd, ComputePlane stand-in, kustomize-controller; cores busy | releases each controller selects | ComputePlanes each reaches | reconciles, each | CPU per reconcile, each | memory (peak), each | shard labels moved |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range results {
		h := c.helm
		if h == nil {
			continue
		}
		planes := 0.0
		for _, p := range h.planes {
			planes += p
		}
		fmt.Fprintf(&b, "| %d | %d | %g | %s (%s, %s) | %s (%.0f ms), %s, %s, %s, %s; %.0f%% | %s | %s | %s | %s | %s (%s) | %d |\n",
			c.tenants, h.releases, planes, h.ready.Round(time.Second), h.at50.Round(time.Second), h.at90.Round(time.Second),
			h.install.totalCPU().Round(time.Second), float64(h.install.totalCPU().Milliseconds())/float64(h.releases),
			h.apiserver.Round(time.Second), h.etcd.Round(time.Second), h.standIn.Round(time.Second), h.kustomize.Round(time.Second), 100*h.busy,
			shareList(h.shards, h.selected, "%g"), shareList(h.shards, h.planes, "%g"), shareList(h.shards, h.install.reconciles, "%g"),
			shareList(h.shards, h.install.perRelease(), "%.0f ms"), shareList(h.shards, h.rss, "%.0f MiB"), shareList(h.shards, h.peak, "%.0f MiB"), h.moved)
	}
	for _, c := range results {
		if h := c.helm; h != nil && len(h.requests) > 0 {
			fmt.Fprintf(&b, "\nOver the install of %d tenants, the management API server's requests (the most): %s; the helm-controllers logged (the most): %s.\n",
				c.tenants, strings.Join(first(h.requests.Top(), 10), ", "), strings.Join(first(topMessages(h.messages), 8), ", "))
		}
	}
	b.WriteString("\n| tenants | forced reconcile | all handled in (all requested, 50%, 90%) | CPU: helm-controller (**per release**), kube-apiserver, etcd, stand-in; cores busy | reconciles, each | CPU per reconcile, each | **new Helm revisions** | storage Secrets rewritten | **installed objects changed** | status writes (per release) | events | the test's annotate | Secret writes (ComputePlane) | **writes to installed kinds** (ComputePlane) | other (ComputePlane) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range results {
		h := c.helm
		if h == nil {
			continue
		}
		for i, r := range h.reconciles {
			fmt.Fprintf(&b, "| %d | %d | %s (%s, %s, %s) | %s (**%.1f ms**), %s, %s, %s; %.0f%% | %s | %s | **%d** | %d | **%d** | %g (%.1f) | %g | %g | %g (%g) | **%g** (%g) | %g (%g) |\n",
				c.tenants, i+1, r.wall.Round(time.Second), r.annotated.Round(time.Second), r.at50.Round(time.Second), r.at90.Round(time.Second),
				r.work.totalCPU().Round(100*time.Millisecond), float64(r.work.totalCPU().Microseconds())/1000/float64(h.releases),
				r.apiserver.Round(100*time.Millisecond), r.etcd.Round(100*time.Millisecond), r.standIn.Round(100*time.Millisecond), 100*r.busy,
				shareList(h.shards, r.work.reconciles, "%g"), shareList(h.shards, r.work.perRelease(), "%.0f ms"),
				len(r.newRevisions), len(r.rewritten), len(r.changed), r.status, r.status/float64(h.releases), r.events, r.annotate,
				r.storage, r.cpStorage, r.installed, r.cpInstalled, r.other, r.cpOther)
		}
	}
	b.WriteString("\n| tenants | left alone for | interval reconciles, each | CPU: helm-controller (per reconcile), kube-apiserver (per reconcile), etcd, stand-in; kustomize-controller | **cores used** (helm-controller, both API servers, etcd) | status writes (per reconcile) | other writes, management (ComputePlane) | memory, each |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, c := range results {
		h := c.helm
		if h == nil || h.idle == nil {
			continue
		}
		i := h.idle
		n := i.work.totalReconciles()
		status := i.writes.Sum(func(r harness.Request) bool { return !r.DryRun && r.Subresource == "status" })
		other := i.writes.Sum(func(r harness.Request) bool { return r.DryRun || r.Subresource != "status" })
		perStatus := 0.0
		if n > 0 {
			perStatus = status / n
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s (%.1f ms), %s (%.1f ms), %s, %s; %s | **%.2f** | %g (%.1f) | %g (%g) | %s |\n",
			c.tenants, i.window.Round(time.Second), shareList(h.shards, i.work.reconciles, "%g"),
			i.work.totalCPU().Round(100*time.Millisecond), perReconcile(i.work.totalCPU(), n), i.apiserver.Round(100*time.Millisecond), perReconcile(i.apiserver, n),
			i.etcd.Round(100*time.Millisecond), i.standIn.Round(100*time.Millisecond), i.kustomize.Round(100*time.Millisecond), i.cores(), status, perStatus, other,
			i.cpWrites.Sum(func(harness.Request) bool { return true }), shareList(h.shards, i.rss, "%.0f MiB"))
	}
	return b.String()
}
