package cluster

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// kustomizeControllers are the bench's kustomize-controllers, as Flux's
// sharding guide runs them (docs/flux-wiring.md, "Sharding"): the main one
// first (--watch-label-selector=!sharding.fluxcd.io/key, which takes what
// carries no shard label: the root), then with spec.fleet.shards N > 1 one
// per shard, kustomize-controller-shard1 to -shardN.
type kustomizeControllers []*harness.Process

// startBenchKustomizeControllers starts the main kustomize-controller and,
// with shards > 1, one per shard, each as Cozystack runs its own
// (fluxcd.yaml at 3c780acd: --concurrent=5, --log-level=info,
// --requeue-dependency=30s, as cozy-fluxcd:flux) with the suite's short
// retry delays, and
// the ExternalArtifact gate Cozystack sets when the fleet reads artifacts
// (byArtifact; cozystackFlags sets it only for the Flux Cozystack
// ships). A shard controller differs from the main one in its selector
// only: --watch-label-selector=sharding.fluxcd.io/key in (shard<i>).
//
// Each has its TMPDIR on tmpfs unless E2E_BENCH_TMPFS=0: it extracts its
// source's artifact for every reconcile, and a file costs this machine's
// disk about 0.8 ms of system time (GNU tar extracts the 100-tenant folder
// in 7 s there, in 0.1 s on tmpfs).
func (e *env) startBenchKustomizeControllers(t *testing.T, shards int, byArtifact bool) kustomizeControllers {
	t.Helper()
	names, selectors := []string{"kustomize-controller"}, []string{"!" + shardKeyLabel}
	for i := 1; shards > 1 && i <= shards; i++ {
		names = append(names, fmt.Sprintf("kustomize-controller-shard%d", i))
		selectors = append(selectors, fmt.Sprintf("%s in (shard%d)", shardKeyLabel, i))
	}
	var kc kustomizeControllers
	for i, name := range names {
		opts := e.kustomizeControllerOptions(name, selectors[i])
		opts.Args = append(opts.Args, "--concurrent=5", "--log-level=info")
		// Cozystack's wait for a dependency (E2E_BENCH_REQUEUE_DEPENDENCY,
		// 30s), not the suite's 2 s: every retry is a status write and an
		// event, and at 1,000 tenants the suite's interval turns a wait
		// into a storm of them.
		requeue := "--requeue-dependency=" + envOr("E2E_BENCH_REQUEUE_DEPENDENCY", "30s")
		for j, a := range opts.Args {
			if strings.HasPrefix(a, "--requeue-dependency=") {
				opts.Args[j] = requeue
			}
		}
		if byArtifact && !slices.Contains(opts.Args, "--feature-gates=ExternalArtifact=true") {
			opts.Args = append(opts.Args, "--feature-gates=ExternalArtifact=true")
		}
		if envOr("E2E_BENCH_TMPFS", "1") != "0" {
			opts.TempDir = tmpfsDir(t)
		}
		kc = append(kc, harness.StartController(t, e.mgmt, e.dir, opts))
		t.Logf("%s: --watch-label-selector=%s, TMPDIR %s", name, selectors[i], opts.TempDir)
	}
	return kc
}

// shard names a controller of kc by what it selects: "main", or the shard
// label's value (shard1...).
func shard(p *harness.Process) string {
	if s, ok := strings.CutPrefix(p.Name, "kustomize-controller-"); ok {
		return s
	}
	return "main"
}

// shards names the controllers of kc, in their order.
func (kc kustomizeControllers) shards() []string {
	out := make([]string, len(kc))
	for i, p := range kc {
		out[i] = shard(p)
	}
	return out
}

// selected counts the Kustomizations of the rendered fleet, and the root,
// each controller's selector takes, in the order of kc. A shard label no
// controller selects fails the test: those Kustomizations would never be
// reconciled.
func (kc kustomizeControllers) selected(t *testing.T, f *fleetRepo) []int {
	t.Helper()
	out := make([]int, len(kc))
	out[0] = 1 // the root carries no shard label
	for key, o := range f.objs {
		if o.GetKind() != "Kustomization" || o.GetAPIVersion() != kustomizeV1 {
			continue
		}
		want := o.GetLabels()[shardKeyLabel]
		if want == "" {
			want = "main"
		}
		i := slices.IndexFunc(kc, func(p *harness.Process) bool { return shard(p) == want })
		if i < 0 {
			t.Fatalf("%s carries %s=%q, which no kustomize-controller of the bench selects (E2E_BENCH_SHARDS=%d)", key, shardKeyLabel, want, len(kc)-1)
		}
		out[i]++
	}
	return out
}

// kustomizeWork is what each kustomize-controller did over one span, in the
// order of kustomizeControllers.
type kustomizeWork []controllerWork

// controllerWork is one kustomize-controller's part of a span.
type controllerWork struct {
	shard string
	// reconciles are its calls of the Kustomization reconciler, from its
	// own controller_runtime_reconcile_total{controller="kustomization"}:
	// every reconcile, those put off for a dependency included.
	reconciles float64
	// retries are the reconciles it put off for a dependency not Ready
	// (dependencyRetries).
	retries int
	cpu     time.Duration
}

// kustomizeWork reads each controller's reconcile counter and CPU time so
// far.
func (e *env) kustomizeWork(t *testing.T, kc kustomizeControllers) kustomizeWork {
	t.Helper()
	out := make(kustomizeWork, len(kc))
	for i, p := range kc {
		n, err := p.ReconcileTotal(e.ctx, "kustomization")
		if err != nil {
			t.Fatal(err)
		}
		cpu, err := p.CPUTime()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = controllerWork{shard: shard(p), reconciles: n, retries: dependencyRetries(kustomizeControllers{p}), cpu: cpu}
	}
	return out
}

func (w kustomizeWork) sub(o kustomizeWork) kustomizeWork {
	out := make(kustomizeWork, len(w))
	for i := range w {
		out[i] = controllerWork{shard: w[i].shard, reconciles: w[i].reconciles - o[i].reconciles, retries: w[i].retries - o[i].retries, cpu: w[i].cpu - o[i].cpu}
	}
	return out
}

// column is one figure of every controller of w, in w's order.
func column[T any](w kustomizeWork, figure func(controllerWork) T) []T {
	out := make([]T, len(w))
	for i, c := range w {
		out[i] = figure(c)
	}
	return out
}

func (w kustomizeWork) reconciles() []float64 {
	return column(w, func(c controllerWork) float64 { return c.reconciles })
}

func (w kustomizeWork) retries() []float64 {
	return column(w, func(c controllerWork) float64 { return float64(c.retries) })
}

func (w kustomizeWork) cpu() []float64 {
	return column(w, func(c controllerWork) float64 { return c.cpu.Seconds() })
}

func (w kustomizeWork) shards() []string {
	return column(w, func(c controllerWork) string { return c.shard })
}

// String is the reconciles, dependency retries and CPU of each
// controller, the shard controllers' with their shares.
func (w kustomizeWork) String() string {
	return fmt.Sprintf("%s; of which put off for a dependency: %s; CPU %s", shareList(w.shards(), w.reconciles(), "%g"),
		shareList(w.shards(), w.retries(), "%g"), shareList(w.shards(), w.cpu(), "%.1f s"))
}

// shareList formats one value per controller, "main 1, shard1 104 (48%),
// shard2 113 (52%)": a shard controller's share is of the shard
// controllers' total, the main one (first) left out, since it takes only
// what carries no shard label.
func shareList(shards []string, values []float64, format string) string {
	total := 0.0
	for _, v := range values[1:] {
		total += v
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = shards[i] + " " + fmt.Sprintf(format, v)
		if i > 0 && total > 0 {
			parts[i] += fmt.Sprintf(" (%.0f%%)", 100*v/total)
		}
	}
	return strings.Join(parts, ", ")
}

func intsToFloats(n []int) []float64 {
	out := make([]float64, len(n))
	for i, v := range n {
		out[i] = float64(v)
	}
	return out
}

// layout is the fleet's unitSource, and its shards when there are several.
func (c fleetCost) layout() string {
	if c.shards > 1 {
		return fmt.Sprintf("%s, shards: %d", c.unitSource, c.shards)
	}
	return c.unitSource
}

// shardTable is the Markdown table of each kustomize-controller's part of
// every span costTables reports: the Kustomizations its selector takes in
// the fleet as rendered, the reconciles it did (and of those, the ones it
// put off for a dependency) and its CPU.
func shardTable(results []fleetCost) string {
	var b strings.Builder
	b.WriteString("\n| tenants | unitSource | span | Kustomizations each kustomize-controller selects | reconciles by each (share of the shard controllers') | of which put off for a dependency | kustomize-controller CPU, each |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	row := func(c fleetCost, span string, selected []int, w kustomizeWork) {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", c.tenants, c.layout(), span,
			shareList(w.shards(), intsToFloats(selected), "%g"), shareList(w.shards(), w.reconciles(), "%g"),
			shareList(w.shards(), w.retries(), "%g"), shareList(w.shards(), w.cpu(), "%.1f s"))
	}
	for _, c := range results {
		row(c, "root → all Ready", c.selected, c.readyWork)
		for i, r := range c.reconciles {
			row(c, fmt.Sprintf("forced reconcile %d", i+1), c.selected, r.work)
		}
		for _, ch := range c.changes {
			row(c, ch.what, ch.selected, ch.work)
		}
	}
	return b.String()
}
