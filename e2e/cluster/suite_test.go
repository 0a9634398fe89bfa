package cluster

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	// apiserverOldest is the oldest supported platform's API server
	// (README, "Supported platforms"): kube-apiserver of the 1.33 line.
	apiserverOldest string
	// cozystackFlux are the Flux controllers Cozystack ships, which the
	// Cozystack layouts run on either API server.
	cozystackFlux cozystackFluxBins
}

// cozystackFluxBins are the Flux controllers Cozystack ships, with the
// folders of their sources (their CRDs).
type cozystackFluxBins struct {
	kustomizeController, helmController, sourceWatcher                     string
	kustomizeControllerDir, helmControllerDir, sourceWatcherDir, fluxLabel string
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
		apiserverOldest:     os.Getenv("E2E_KUBE_APISERVER_OLDEST"),
		cozystackFlux: cozystackFluxBins{
			kustomizeController:    os.Getenv("E2E_COZY_KUSTOMIZE_CONTROLLER"),
			helmController:         os.Getenv("E2E_COZY_HELM_CONTROLLER"),
			sourceWatcher:          os.Getenv("E2E_COZY_SOURCE_WATCHER"),
			kustomizeControllerDir: filepath.Join(os.Getenv("E2E_COZY_FLUX_DIR"), os.Getenv("E2E_COZY_KUSTOMIZE_CONTROLLER_DIR")),
			helmControllerDir:      filepath.Join(os.Getenv("E2E_COZY_FLUX_DIR"), os.Getenv("E2E_COZY_HELM_CONTROLLER_DIR")),
			sourceWatcherDir:       filepath.Join(os.Getenv("E2E_COZY_FLUX_DIR"), os.Getenv("E2E_COZY_SOURCE_WATCHER_DIR")),
			fluxLabel: os.Getenv("E2E_COZY_HELM_CONTROLLER_DIR") + ", " + os.Getenv("E2E_COZY_KUSTOMIZE_CONTROLLER_DIR") +
				", " + os.Getenv("E2E_COZY_SOURCE_WATCHER_DIR"),
		},
	}
	for name, v := range map[string]string{
		"E2E_ETCD": b.etcd, "E2E_KUBE_APISERVER": b.apiserver, "E2E_KUSTOMIZE_CONTROLLER": b.kustomizeController,
		"E2E_HELM_CONTROLLER": b.helmController, "E2E_SOURCE_WATCHER": b.sourceWatcher,
		"E2E_COMPUTEPLANE_FN": b.fn, "E2E_SOURCE_CONTROLLER_DIR": b.sourceControllerDir,
		"E2E_KUBE_APISERVER_OLDEST": b.apiserverOldest, "E2E_COZY_KUSTOMIZE_CONTROLLER": b.cozystackFlux.kustomizeController,
		"E2E_COZY_HELM_CONTROLLER": b.cozystackFlux.helmController, "E2E_COZY_SOURCE_WATCHER": b.cozystackFlux.sourceWatcher,
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

// env is the management cluster of one stage under one Flux layout and
// what runs against it.
type env struct {
	t    *testing.T
	bins bins
	mode fluxMode
	// stage names the stage that owns the cluster ("" for the bench).
	stage string
	dir   string
	etcd  *harness.Etcd
	mgmt  *harness.APIServer
	admin *harness.Client
	// kc is the mode's kustomize-controller itself (not the fleet): the
	// identity the guard no longer takes for the fleet.
	kc *harness.Client
	// fleet is the fleet's own account, as kustomize-controller
	// impersonates it for every Kustomization the function renders.
	fleet     *harness.Client
	fleetUser string
	artifacts *harness.ArtifactServer
	procs     []*harness.Process // the controllers, for their logs in failures
	ctx       context.Context
	fluxOnce  sync.Once
	platform  sync.Once
	// Cozystack's components, started on first use by the stage.
	shardOperatorOnce sync.Once
	// The running flux-shard-operator, the CA of its serving certificate
	// and the stand-in of cert-manager's cainjector (ensureShardOperator).
	shardOperator   *harness.Process
	shardOperatorCA []byte
	caInjector      *harness.CAInjector
	cozystackAPI    cozystackAPIServer
}

// fluxMode is one way of running Flux's controllers against the management
// cluster.
type fluxMode struct {
	name string
	// namespace is where the controllers run (RUNTIME_NAMESPACE).
	namespace string
	// fleetNamespace is the fleet's wiring namespace
	// (spec.fleet.wiringNamespace), where its source, root Kustomization
	// and account live.
	fleetNamespace string
	// The user each controller runs as.
	kustomizeController, helmController, sourceWatcher string
	// oldest runs the layout on the oldest supported platform's API
	// server (bins.apiserverOldest, kube-apiserver v1.33.5, for the
	// management cluster and the ComputePlane stand-ins), whose minor
	// the fleets leave to the config's default; otherwise on v1.36.3,
	// which the fleets name (spec.platform.kubernetesVersion).
	oldest bool
	// cozystackFlux runs the Flux controllers Cozystack ships
	// (bins.cozystackFlux) with their own CRDs, as Cozystack starts them
	// (--feature-gates=ExternalArtifact=true on kustomize- and
	// helm-controller); otherwise current Flux.
	cozystackFlux bool
}

// flux is the spec.platform.flux that names the mode's Flux.
func (m fluxMode) flux() string {
	if m.name == "FluxInstall" {
		return "FluxInstall"
	}
	return "Cozystack"
}

// identities are the distinct users of the mode's controllers.
func (m fluxMode) identities() []string {
	var out []string
	for _, u := range []string{m.kustomizeController, m.helmController, m.sourceWatcher} {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// The layouts the suite runs the whole path under:
//
//   - FluxInstall: as `flux install` (and `flux bootstrap`) runs Flux, each
//     controller with its own service account in flux-system, the fleet's
//     wiring there too (the default wiringNamespace);
//   - Cozystack: as Cozystack runs it (internal/fluxinstall/manifests/
//     fluxcd.yaml), one Deployment in cozy-fluxcd whose controllers share
//     the service account cozy-fluxcd/flux, bound to cluster-admin; the
//     fleet's wiring in flux-system, where docs/flux-wiring.md ("On
//     Cozystack") keeps it with the default config;
//   - CozystackWiring: the same Flux, the fleet's wiring beside it
//     (spec.fleet.wiringNamespace: cozy-fluxcd, the docs' other way);
//   - CozystackNewest: Cozystack's layout, as in Cozystack, on the newest
//     platform's API server.
//
// FluxInstall runs on kube-apiserver v1.36.3 with current Flux; Cozystack
// and CozystackWiring on the oldest supported platform, as Cozystack's users
// run it: kube-apiserver v1.33.5 and the controllers Cozystack ships
// (helm-controller v1.5.0, kustomize-controller v1.8.0, source-watcher
// v2.1.0), their own CRDs, and the ComputePlane stand-ins on the same
// API server version. CozystackNewest runs the same Flux on
// kube-apiserver v1.36.3, which serves MutatingAdmissionPolicy, with
// fleets that name Kubernetes 1.36: Cozystack's Flux and its
// flux-shard-operator where the shard label's default is Admission
// (Webhook below). It runs every layout's stages and ShardOperator.
//
// The guard's config is the default in all four (no guard.fluxIdentities):
// the fleet applies as its own account, computeplane-fleet in the wiring
// namespace, which the guard admits by default.
var (
	cozystackFluxSA = harness.ServiceAccount("cozy-fluxcd", "flux")
	fluxModes       = []fluxMode{
		{
			name: "FluxInstall", namespace: "flux-system", fleetNamespace: "flux-system",
			kustomizeController: harness.ServiceAccount("flux-system", "kustomize-controller"),
			helmController:      harness.ServiceAccount("flux-system", "helm-controller"),
			sourceWatcher:       harness.ServiceAccount("flux-system", "source-watcher"),
		},
		{
			name: "Cozystack", namespace: "cozy-fluxcd", fleetNamespace: "flux-system",
			kustomizeController: cozystackFluxSA, helmController: cozystackFluxSA, sourceWatcher: cozystackFluxSA,
			oldest: true, cozystackFlux: true,
		},
		{
			name: "CozystackWiring", namespace: "cozy-fluxcd", fleetNamespace: "cozy-fluxcd",
			kustomizeController: cozystackFluxSA, helmController: cozystackFluxSA, sourceWatcher: cozystackFluxSA,
			oldest: true, cozystackFlux: true,
		},
		{
			name: "CozystackNewest", namespace: "cozy-fluxcd", fleetNamespace: "flux-system",
			kustomizeController: cozystackFluxSA, helmController: cozystackFluxSA, sourceWatcher: cozystackFluxSA,
			cozystackFlux: true,
		},
	}
)

// newestKubernetes is the Kubernetes minor of the newest platform's API
// server (kube-apiserver v1.36.3), as spec.platform.kubernetesVersion
// names it.
const newestKubernetes = "1.36"

// fleetAccount is the fleet's service account (spec.fleet.serviceAccountName
// by default).
const fleetAccount = "computeplane-fleet"

// stage is one stage of the suite. Each owns its state: it starts a
// management cluster of its own (startEnv: its own key prefix in the shared
// etcd, its own kube-apiserver, controllers and artifact server) and stops
// it when it ends, so that it runs alone (E2E_RUN) and in any order
// (E2E_SHUFFLE) and no stage sees another's objects.
type stage struct {
	name string
	run  func(*env, *testing.T)
	// in says under which layouts the stage runs.
	in func(fluxMode) bool
}

// The layouts a stage runs under.
var (
	everyLayout = func(fluxMode) bool { return true }
	// firstLayout: the stages that do not depend on how Flux runs, once.
	firstLayout = func(m fluxMode) bool { return m.name == fluxModes[0].name }
	// cozystackLayout: the stages of Cozystack's own components, under
	// Cozystack's Flux, whose helm-controller is the default
	// guard.helmIdentities InCluster's Platform scenario needs.
	cozystackLayout = func(m fluxMode) bool { return m.name == "Cozystack" }
	// cozystackPlatforms: Cozystack's layout on the oldest platform's
	// API server and on the newest's, for the stages whose result depends
	// on the Kubernetes minor.
	cozystackPlatforms = func(m fluxMode) bool { return m.name == "Cozystack" || m.name == "CozystackNewest" }
)

// stages are the suite's stages, in the order they run unless E2E_SHUFFLE
// permutes them.
var stages = []stage{
	{"ServerSideApply", (*env).testServerSideApply, firstLayout},
	{"PodSecurity", (*env).testPodSecurity, firstLayout},
	{"RealChart", (*env).testRealChart, cozystackLayout},
	{"RealChartPools", (*env).testRealChartPools, cozystackLayout},
	{"RealChartPoolsMove", (*env).testRealChartPoolsMove, cozystackLayout},
	{"Releases", (*env).testReleases, everyLayout},
	{"Fleet", (*env).testFleet, everyLayout},
	{"FleetArtifacts", (*env).testFleetArtifacts, cozystackLayout},
	{"Guard", (*env).testGuard, everyLayout},
	{"LayoutUpgrade", (*env).testLayoutUpgrade, firstLayout},
	{"LayoutUpgradeBeforeAccount", (*env).testLayoutUpgradeBeforeAccount, firstLayout},
	{"Stream", (*env).testStream, everyLayout},
	{"InCluster", (*env).testInCluster, cozystackLayout},
	{"ShardOperator", (*env).testShardOperator, cozystackPlatforms},
	{"CozystackAPI", (*env).testCozystackAPI, cozystackLayout},
}

// stageOrder is the layout's stages in the suite's order or, with
// E2E_SHUFFLE=<seed> (an unsigned integer), permuted by the seed and the
// layout's place: the same seed gives the same orders.
func stageOrder(t *testing.T, layout int, m fluxMode) []stage {
	var out []stage
	for _, s := range stages {
		if s.in(m) {
			out = append(out, s)
		}
	}
	seed := os.Getenv("E2E_SHUFFLE")
	if seed == "" {
		return out
	}
	n, err := strconv.ParseUint(seed, 10, 64)
	if err != nil {
		t.Fatalf("E2E_SHUFFLE=%q: want a seed, an unsigned integer: %v", seed, err)
	}
	r := rand.New(rand.NewPCG(n, uint64(layout)))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	names := make([]string, len(out))
	for i, s := range out {
		names[i] = s.name
	}
	t.Logf("E2E_SHUFFLE=%d: the stages of %s run in the order %s", n, m.name, strings.Join(names, ", "))
	return out
}

func TestControlPlane(t *testing.T) {
	b := binsFromEnv(t)
	if _, err := os.Stat(filepath.Join(sharedDir, "crds")); err != nil {
		t.Fatalf("the reference CRDs are missing (%v): the suite needs ../shared next to the project", err)
	}
	// A minute before go test's own deadline (-timeout), so that a wait
	// that runs out fails with what it waited for.
	deadline := time.Now().Add(35 * time.Minute)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-time.Minute)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	t.Cleanup(cancel)
	// Shared by every stage: the binaries, the CRD files and one etcd
	// process, in which each API server has a key prefix of its own.
	etcd := harness.StartEtcd(t, b.etcd, t.TempDir())
	for i, m := range fluxModes {
		t.Run(m.name, func(t *testing.T) {
			for _, s := range stageOrder(t, i, m) {
				t.Run(s.name, func(t *testing.T) {
					s.run(startEnv(t, ctx, b, etcd, m, s.name), t)
				})
			}
		})
	}
}

// startEnv starts a management cluster of its own for one stage of one Flux
// layout (its own key prefix in the shared etcd): the controllers' users,
// bound to cluster-admin as their installs bind them, the CRDs and the
// artifact server. Everything it starts stops when t ends.
func startEnv(t *testing.T, ctx context.Context, b bins, etcd *harness.Etcd, m fluxMode, stage string) *env {
	// Every stage of the layout starts its servers and controllers from
	// e.bins.
	if m.oldest {
		b.apiserver = b.apiserverOldest
	}
	flux := "current Flux"
	if m.cozystackFlux {
		b.kustomizeController, b.helmController, b.sourceWatcher =
			b.cozystackFlux.kustomizeController, b.cozystackFlux.helmController, b.cozystackFlux.sourceWatcher
		flux = "Cozystack's Flux (" + b.cozystackFlux.fluxLabel + ")"
	}
	t.Logf("%s: kube-apiserver %s, %s", m.name, filepath.Base(b.apiserver), flux)
	e := &env{t: t, bins: b, mode: m, stage: stage, dir: t.TempDir(), ctx: ctx, etcd: etcd,
		fleetUser: harness.ServiceAccount(m.fleetNamespace, fleetAccount)}
	// Runs after every component of the stage has stopped: keep the logs
	// of a failed run.
	t.Cleanup(func() {
		if t.Failed() {
			keepLogs(t, e.dir, filepath.Join(m.name, stage))
		}
	})
	start := time.Now()
	frontProxy, err := harness.NewFrontProxy(filepath.Join(e.dir, "front-proxy"))
	if err != nil {
		t.Fatal(err)
	}
	e.mgmt = harness.StartAPIServer(t, harness.APIServerOptions{
		Name: e.serverName("management"), Bin: b.apiserver, Etcd: etcd, Dir: e.dir,
		Users:     harness.ServiceAccountUsers(append(m.identities(), cozystackIdentities...)...),
		ExtraArgs: append(frontProxy.Args, e.auditArgs()...),
	})
	e.admin = harness.MustClient(t, e.mgmt, harness.Admin, e.mgmt.Config(harness.Admin))
	e.kc = harness.MustClient(t, e.mgmt, m.kustomizeController, e.mgmt.Config(m.kustomizeController))
	// kustomize-controller impersonates the account named by a
	// Kustomization's serviceAccountName: the user name and the groups the
	// API server gives service accounts.
	e.fleet = harness.MustClient(t, e.mgmt, e.fleetUser, e.mgmt.Impersonating(e.fleetUser))
	if err := harness.GrantClusterAdmin(ctx, e.admin, m.identities()...); err != nil {
		t.Fatal(err)
	}
	e.namespaces(m.namespace, m.fleetNamespace, "cozy-system")
	e.applyCRDs()
	e.artifacts = harness.StartArtifactServer(t)
	t.Logf("management cluster of %s up in %s", strings.TrimSuffix(m.name+"/"+stage, "/"), time.Since(start).Round(time.Millisecond))
	return e
}

// auditArgs give the management API server an audit log of the writes the
// RealChart stage's cluster makes (who made each object of the real chart,
// impersonated user included): in its tenant namespace, RoleBindings in
// kube-system, ClusterRoles and ClusterRoleBindings; nothing else.
func (e *env) auditArgs() []string {
	policy := filepath.Join(e.dir, "management-audit-policy.yaml")
	harness.WriteFile(e.t, policy, []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch]
  namespaces: [`+realTenant+`]
- level: Metadata
  verbs: [create, update, patch]
  namespaces: [kube-system]
  resources: [{group: rbac.authorization.k8s.io, resources: [rolebindings]}]
- level: Metadata
  verbs: [create, update, patch]
  resources: [{group: rbac.authorization.k8s.io, resources: [clusterroles, clusterrolebindings]}]
- level: None
`))
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + e.auditLog(), "--audit-log-format=json"}
}

// auditLog is the management API server's audit log.
func (e *env) auditLog() string { return filepath.Join(e.dir, "management-audit.log") }

// serverName names an API server of the stage (its folder and etcd
// prefix): unique in the run, since every API server shares the one etcd.
func (e *env) serverName(name string) string {
	if e.stage == "" {
		return strings.ToLower(e.mode.name) + "-" + name
	}
	return strings.ToLower(e.mode.name+"-"+e.stage) + "-" + name
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
	var files []string
	if e.mode.cozystackFlux {
		// The controllers' own CRDs (HelmRelease, Kustomization,
		// ArtifactGenerator, ExternalArtifact) over ../shared's.
		var own []string
		for _, dir := range []string{e.bins.cozystackFlux.helmControllerDir, e.bins.cozystackFlux.kustomizeControllerDir, e.bins.cozystackFlux.sourceWatcherDir} {
			fs, err := filepath.Glob(filepath.Join(dir, "config", "crd", "bases", "*.yaml"))
			if err != nil || len(fs) == 0 {
				e.t.Fatalf("no CRDs in %s/config/crd/bases: %v", dir, err)
			}
			own = append(own, fs...)
		}
		ownObjs, err := harness.DecodeFiles(own...)
		if err != nil {
			e.t.Fatal(err)
		}
		replaced := map[string]bool{}
		for _, o := range ownObjs {
			replaced[o.GetName()] = true
		}
		files = append(files, own...)
		for _, f := range shared {
			objs, err := harness.DecodeFiles(f)
			if err != nil {
				e.t.Fatal(err)
			}
			if len(objs) != 1 || !replaced[objs[0].GetName()] {
				files = append(files, f)
			}
		}
	} else {
		files = shared
	}
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

// ensureFlux starts Flux's controllers on first use (the stages that need
// no controller run without them); they stop when the stage ends.
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

// startFlux starts the controllers as the mode's identities:
// kustomize-controller in Flux's sharding layout (the main one reconciles
// what carries no shard label), helm-controller with the ExternalArtifact
// feature gate, and source-watcher. Requeue and retry delays are short so
// that the suite's waits stay short; they change when a controller looks
// again, not what it does.
func (e *env) startFlux(t testing.TB) {
	t.Helper()
	m := e.mode
	e.procs = append(e.procs,
		harness.StartSourceWatcher(t, e.mgmt, e.dir, e.bins.sourceWatcher, m.sourceWatcher, m.namespace),
		e.startKustomizeController(t, "kustomize-controller", "!sharding.fluxcd.io/key"),
		harness.StartController(t, e.mgmt, e.dir, harness.ControllerOptions{
			Name: "helm-controller", Bin: e.bins.helmController, Identity: m.helmController, Namespace: m.namespace,
			Args: []string{"--feature-gates=ExternalArtifact=true", "--requeue-dependency=2s",
				"--min-retry-delay=500ms", "--max-retry-delay=5s"},
		}),
	)
}

// startKustomizeController starts one kustomize-controller watching the
// Kustomizations selector selects.
func (e *env) startKustomizeController(t testing.TB, name, selector string) *harness.Process {
	return harness.StartController(t, e.mgmt, e.dir, e.kustomizeControllerOptions(name, selector))
}

// kustomizeControllerOptions are the suite's kustomize-controller: its
// identity, the shard's selector, short requeue and retry delays.
func (e *env) kustomizeControllerOptions(name, selector string) harness.ControllerOptions {
	return harness.ControllerOptions{
		Name: name, Bin: e.bins.kustomizeController, Identity: e.mode.kustomizeController, Namespace: e.mode.namespace,
		Args: append([]string{"--watch-label-selector=" + selector, "--requeue-dependency=2s",
			"--min-retry-delay=500ms", "--max-retry-delay=5s", "--no-remote-bases=true"}, e.cozystackFlags()...),
	}
}

// cozystackFlags are what Cozystack adds to its kustomize-controller
// (internal/fluxinstall/manifests/fluxcd.yaml): the ExternalArtifact gate.
func (e *env) cozystackFlags() []string {
	if e.mode.cozystackFlux && e.mode.kustomizeController == cozystackFluxSA {
		return []string{"--feature-gates=ExternalArtifact=true"}
	}
	return nil
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

// keepLogs copies the components' logs of a failed stage to
// .work/e2e/logs/<layout>/<stage>, which outlives the test's temporary
// folder.
func keepLogs(t *testing.T, dir, name string) {
	dst := filepath.Join("..", "..", ".work", "e2e", "logs", name)
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
