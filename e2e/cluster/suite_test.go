package cluster

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// bins are the components make e2e built, by environment variable.
type bins struct {
	etcd, apiserver, kustomizeController, helmController, sourceWatcher, fn string
	sourceControllerDir                                                     string
	// Cozystack's components and ../shared/third_party (their charts):
	// optional, the stages that need them skip without.
	shardOperator, cozystackAPI, thirdParty string
}

func binsFromEnv(t *testing.T) bins {
	b := bins{
		etcd:                os.Getenv("E2E_ETCD"),
		apiserver:           os.Getenv("E2E_KUBE_APISERVER"),
		kustomizeController: os.Getenv("E2E_KUSTOMIZE_CONTROLLER"),
		helmController:      os.Getenv("E2E_HELM_CONTROLLER"),
		sourceWatcher:       os.Getenv("E2E_SOURCE_WATCHER"),
		fn:                  os.Getenv("E2E_COMPUTEPLANE_FN"),
		sourceControllerDir: os.Getenv("E2E_SOURCE_CONTROLLER_DIR"),
		shardOperator:       os.Getenv("E2E_FLUX_SHARD_OPERATOR"),
		cozystackAPI:        os.Getenv("E2E_COZYSTACK_API"),
		thirdParty:          os.Getenv("E2E_THIRD_PARTY"),
	}
	for name, v := range map[string]string{
		"E2E_ETCD": b.etcd, "E2E_KUBE_APISERVER": b.apiserver, "E2E_KUSTOMIZE_CONTROLLER": b.kustomizeController,
		"E2E_HELM_CONTROLLER": b.helmController, "E2E_SOURCE_WATCHER": b.sourceWatcher,
		"E2E_COMPUTEPLANE_FN": b.fn, "E2E_SOURCE_CONTROLLER_DIR": b.sourceControllerDir,
	} {
		if v == "" {
			t.Skipf("%s is not set: run the suite with `make e2e`, which builds the components and sets it", name)
		}
	}
	return b
}

// sharedDir is ../shared (the reference CRDs), as the project's other tests
// find it.
const sharedDir = "../../../shared"

// env is the management cluster and what runs against it.
type env struct {
	t         *testing.T
	bins      bins
	dir       string
	etcd      *harness.Etcd
	mgmt      *harness.APIServer
	admin     *harness.Client
	kc        *harness.Client // as kustomize-controller: how Flux applies the fleet
	artifacts *harness.ArtifactServer
	procs     []*harness.Process // the controllers, for their logs in failures
	ctx       context.Context
	fluxOnce  sync.Once
}

// The identities the controllers run as. The fleet's kustomize-controller
// is the one of `flux bootstrap` (flux-system), the identity the guard admits
// by default; helm-controller and source-watcher are Cozystack's own Flux,
// which runs them in one Deployment with one service account, cozy-fluxcd/flux
// (the guard's default platform identity).
var (
	kustomizeControllerSA = harness.ServiceAccount("flux-system", "kustomize-controller")
	cozystackFluxSA       = harness.ServiceAccount("cozy-fluxcd", "flux")
	fluxIdentities        = []string{kustomizeControllerSA, cozystackFluxSA}
)

func TestControlPlane(t *testing.T) {
	b := binsFromEnv(t)
	if _, err := os.Stat(filepath.Join(sharedDir, "crds")); err != nil {
		t.Fatalf("the reference CRDs are missing (%v): the suite needs ../shared next to the project", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, bins: b, dir: t.TempDir(), ctx: ctx}
	// Runs after every component has stopped: keep the logs of a failed run.
	t.Cleanup(func() {
		if t.Failed() {
			keepLogs(t, e.dir)
		}
	})
	start := time.Now()
	e.etcd = harness.StartEtcd(t, b.etcd, e.dir)
	frontProxy, err := harness.NewFrontProxy(filepath.Join(e.dir, "front-proxy"))
	if err != nil {
		t.Fatal(err)
	}
	e.mgmt = harness.StartAPIServer(t, harness.APIServerOptions{
		Name: "management", Bin: b.apiserver, Etcd: e.etcd, Dir: e.dir,
		Users:     harness.ServiceAccountUsers(append(fluxIdentities, cozystackIdentities...)...),
		ExtraArgs: frontProxy.Args,
	})
	e.admin = harness.MustClient(t, e.mgmt, harness.Admin, e.mgmt.Config(harness.Admin))
	e.kc = harness.MustClient(t, e.mgmt, kustomizeControllerSA, e.mgmt.Config(kustomizeControllerSA))
	if err := harness.GrantClusterAdmin(ctx, e.admin, fluxIdentities...); err != nil {
		t.Fatal(err)
	}
	e.namespaces("flux-system", "cozy-system")
	e.applyCRDs()
	e.artifacts = harness.StartArtifactServer(t)
	t.Logf("management cluster up in %s", time.Since(start).Round(time.Millisecond))

	t.Run("ServerSideApply", e.testServerSideApply)
	t.Run("PodSecurity", e.testPodSecurity)
	t.Run("Releases", e.testReleases)
	t.Run("Fleet", e.testFleet)
	t.Run("Guard", e.testGuard)
	t.Run("InCluster", e.testInCluster)
	t.Run("ShardOperator", e.testShardOperator)
	t.Run("CozystackAPI", e.testCozystackAPI)
}

// applyCRDs installs Flux v2.8's CRDs and the others of ../shared/crds, and
// the source-controller CRDs ../shared lacks (GitRepository, Bucket,
// HelmRepository, HelmChart) from the source-controller module.
func (e *env) applyCRDs() {
	e.t.Helper()
	shared, err := filepath.Glob(filepath.Join(sharedDir, "crds", "*.yaml"))
	if err != nil || len(shared) == 0 {
		e.t.Fatalf("no CRDs in %s/crds: %v", sharedDir, err)
	}
	have := map[string]bool{}
	objs, err := harness.DecodeFiles(shared...)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, o := range objs {
		have[o.GetName()] = true
	}
	files := shared
	scDir := filepath.Join(e.bins.sourceControllerDir, "config", "crd", "bases")
	sc, err := filepath.Glob(filepath.Join(scDir, "*.yaml"))
	if err != nil || len(sc) == 0 {
		e.t.Fatalf("no CRDs in %s: %v", scDir, err)
	}
	for _, f := range sc {
		objs, err := harness.DecodeFiles(f)
		if err != nil {
			e.t.Fatal(err)
		}
		if len(objs) == 1 && !have[objs[0].GetName()] {
			files = append(files, f)
		}
	}
	if err := harness.ApplyCRDs(e.ctx, e.admin, files...); err != nil {
		e.t.Fatal(err)
	}
}

// ensureFlux starts Flux's controllers on first use (the subtests that
// need no controller run without them); they stop when TestControlPlane
// ends.
func (e *env) ensureFlux(t *testing.T) {
	e.fluxOnce.Do(func() {
		start := time.Now()
		e.startFlux(cleanupWith{TB: t, owner: e.t})
		t.Logf("Flux's controllers started in %s", time.Since(start).Round(time.Millisecond))
	})
}

// cleanupWith is a subtest's TB whose cleanups belong to another test:
// a subtest fails when a component does not start, and the component stops
// when the owner ends.
type cleanupWith struct {
	testing.TB
	owner testing.TB
}

func (c cleanupWith) Cleanup(f func()) { c.owner.Cleanup(f) }

// startFlux starts the controllers: kustomize-controller in Flux's sharding
// layout (the main one reconciles what carries no shard label),
// helm-controller with the ExternalArtifact feature gate, and source-watcher.
// Requeue and retry delays are short so that the suite's waits stay short;
// they change when a controller looks again, not what it does.
func (e *env) startFlux(t testing.TB) {
	t.Helper()
	e.procs = append(e.procs,
		harness.StartSourceWatcher(t, e.mgmt, e.dir, e.bins.sourceWatcher, cozystackFluxSA),
		harness.StartController(t, e.mgmt, e.dir, harness.ControllerOptions{
			Name: "kustomize-controller", Bin: e.bins.kustomizeController, Identity: kustomizeControllerSA,
			Args: []string{"--watch-label-selector=!sharding.fluxcd.io/key", "--requeue-dependency=2s",
				"--min-retry-delay=500ms", "--max-retry-delay=5s", "--no-remote-bases=true"},
		}),
		harness.StartController(t, e.mgmt, e.dir, harness.ControllerOptions{
			Name: "helm-controller", Bin: e.bins.helmController, Identity: cozystackFluxSA,
			Args: []string{"--feature-gates=ExternalArtifact=true", "--requeue-dependency=2s",
				"--min-retry-delay=500ms", "--max-retry-delay=5s"},
		}),
	)
}

// namespaces creates namespaces in the management cluster.
func (e *env) namespaces(names ...string) {
	e.t.Helper()
	for _, n := range names {
		ns := namespace(n)
		if _, _, err := e.admin.Apply(e.ctx, ns, harness.ApplyOptions{}); err != nil {
			e.t.Fatal(err)
		}
	}
}

// logs is what the controllers logged about an object, for failures.
func (e *env) logs(words ...string) string {
	return harness.ControllerLogs(words, e.procs...)
}

// keepLogs copies the components' logs of a failed run to
// .work/e2e/logs, which outlives the test's temporary folder.
func keepLogs(t *testing.T, dir string) {
	dst := filepath.Join("..", "..", ".work", "e2e", "logs")
	_ = os.RemoveAll(dst)
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		data, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		harness.WriteFile(t, filepath.Join(dst, filepath.Base(l)), data)
	}
	t.Logf("the components' logs are in %s", dst)
}
