package cluster

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// The Stream stage's names: the example it applies, the project's baseline
// chart, and the source and Kustomization that carry the example's output.
const (
	streamExample  = "../../examples/quickstart"
	baselineChart  = "../../charts/computeplane-baseline"
	streamSource   = "quickstart"
	streamRoot     = "computeplane-quickstart"
	streamRevision = "main@sha1:"
)

// testStream: the kustomize generator's output of examples/quickstart (no
// spec.fleet, so no fleet folder), applied by one Kustomization as the
// fleet's account, installs every release it renders; the routed ones land
// in the ComputePlane stand-in as their own account, inside the baseline
// that the stream delivers as the HelmRelease computeplane-baseline of the
// project's chart (issue 25).
func (e *env) testStream(t *testing.T) {
	e.ensureFlux(t)
	e.ensurePlatform(t)
	demoIsQuiet(t, e.bins.fn)
	out := kustomizeBuild(t, streamExample)
	objs, err := harness.Decode(out)
	if err != nil {
		t.Fatalf("kustomize build of %s: %v", streamExample, err)
	}

	// The fleet's namespace is the one the render gives its account and
	// the baseline's chart source: without spec.fleet, flux-system in
	// every layout.
	source := ofKind(objs, "OCIRepository")
	if len(source) != 1 || source[0].GetName() != baselineName {
		t.Fatalf("the render has %d OCIRepositories, want one named %s (the baseline chart's source)", len(source), baselineName)
	}
	fleetNS := source[0].GetNamespace()
	fleetUser := harness.ServiceAccount(fleetNS, fleetAccount)
	asFleet := harness.MustClient(t, e.mgmt, fleetUser, e.mgmt.Impersonating(fleetUser))
	var tenants []string
	for _, ns := range tenantNamespaces(objs) {
		if strings.HasPrefix(ns, "tenant-") {
			tenants = append(tenants, ns)
		}
	}
	e.namespaces(append([]string{fleetNS}, tenants...)...)
	for _, ns := range tenants {
		e.writeCozystackValues(t, ns)
	}

	// The one ComputePlane of the quickstart, its kubeconfig written as
	// Kamaji writes it.
	var clusters []*unstructured.Unstructured
	for _, hr := range ofKind(objs, "HelmRelease") {
		if isCluster(hr) {
			clusters = append(clusters, hr)
		}
	}
	if len(clusters) != 1 {
		t.Fatalf("the quickstart renders %d cluster releases, want 1", len(clusters))
	}
	cluster, tenant := clusters[0].GetName(), clusters[0].GetNamespace()
	baseline := find(objs, "HelmRelease", tenant, baselineName)
	if baseline == nil {
		t.Fatalf("the stream renders no HelmRelease %s/%s (the tenant's in-cluster baseline)", tenant, baselineName)
	}
	cp, cpc, audit := e.auditedComputePlane(t, e.serverName("computeplane-"+strings.TrimPrefix(tenant, "tenant-")))

	e.publishBaselineChart(t, source[0])
	e.publishStream(t, fleetNS, out)

	// The bootstrap of docs/flux-wiring.md: the fleet's account and rights
	// (and its guard) as an administrator, then one Kustomization of the
	// whole output, applying as that account.
	e.bootstrapFleetIn(t, objs, fleetNS, asFleet)
	root := obj(kustomizeV1, "Kustomization", fleetNS, streamRoot, map[string]any{
		"spec": map[string]any{
			"interval": "10m", "sourceRef": map[string]any{"kind": "GitRepository", "name": streamSource},
			"path": "./", "prune": true, "deletionPolicy": "Orphan", "serviceAccountName": fleetAccount,
		},
	})
	e.applyAll(t, e.admin, []*unstructured.Unstructured{root}, false)
	e.waitReady(t, e.admin, kustomizeV1, "Kustomization", fleetNS, streamRoot, 3*time.Minute)
	for _, o := range objs {
		got := e.mustGet(t, e.admin, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
		if got.GetLabels()[kustomizeName] != streamRoot {
			t.Errorf("%s was applied by %q, want Kustomization %s", harness.Describe(o), got.GetLabels()[kustomizeName], streamRoot)
		}
	}

	// The cluster release is Ready at once; until its kubeconfig exists,
	// the baseline and the routed releases wait for its CNI addon, without
	// trying to install.
	e.waitReady(t, e.admin, helmV2, "HelmRelease", tenant, cluster, 3*time.Minute)
	addon := cluster + "-cilium"
	e.waitFor(t, e.admin, helmV2, "HelmRelease", tenant, addon, time.Minute, harness.Exists)
	var waiting []*unstructured.Unstructured
	for _, hr := range ofKind(objs, "HelmRelease") {
		if routed(hr) && !isCluster(hr) {
			waiting = append(waiting, hr)
		}
	}
	e.waitForCluster(t, waiting, addon)
	if got, _ := cpc.Get(e.ctx, "v1", "Namespace", "", tenant); got != nil {
		t.Errorf("namespace %s exists in the ComputePlane before the cluster was announced", tenant)
	}

	// Kamaji writes the admin kubeconfig: the addon, then the baseline.
	if _, _, err := e.admin.Apply(e.ctx, secret(tenant, cluster+"-admin-kubeconfig",
		map[string]string{"super-admin.svc": string(cp.Kubeconfig(harness.Admin))}), harness.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, e.admin, helmV2, "HelmRelease", tenant, addon, 2*time.Minute)
	e.waitReady(t, e.admin, helmV2, "HelmRelease", tenant, baselineName, 2*time.Minute)
	e.checkStreamBaseline(t, cpc, audit, baseline)

	// Every release of the render installs; the routed ones into the
	// ComputePlane, each as its own account.
	var routedCount int
	for _, hr := range ofKind(objs, "HelmRelease") {
		ns, name := hr.GetNamespace(), hr.GetName()
		if isCluster(hr) || name == baselineName {
			continue
		}
		e.waitReady(t, e.admin, helmV2, "HelmRelease", ns, name, 3*time.Minute)
		if !routed(hr) {
			e.checkValues(t, e.mustGet(t, e.admin, "v1", "ConfigMap", ns, name), hr, ns)
			continue
		}
		routedCount++
		target, _, _ := unstructured.NestedString(hr.Object, "spec", "targetNamespace")
		release, _, _ := unstructured.NestedString(hr.Object, "spec", "releaseName")
		account, _, _ := unstructured.NestedString(hr.Object, "spec", "serviceAccountName")
		cm := e.waitFor(t, cpc, "v1", "ConfigMap", target, release, 30*time.Second, harness.Exists)
		e.checkValues(t, cm, hr, target)
		if got, _ := e.admin.Get(e.ctx, "v1", "ConfigMap", target, release); got != nil {
			t.Errorf("routed release %s/%s landed in the management cluster", ns, name)
		}
		// The chart's object and Helm's record of the release, both made
		// by the impersonated account.
		want := harness.ServiceAccount(target, account)
		for _, made := range []struct{ resource, name string }{
			{"configmaps", release}, {"secrets", "sh.helm.release.v1." + release + ".v1"},
		} {
			if who := creators(t, audit, made.resource, target, made.name); len(who) == 0 || strings.Join(who, ",") != want {
				t.Errorf("%s %s/%s was created in the ComputePlane by %v, want %s (the release's serviceAccountName)", made.resource, target, made.name, who, want)
			}
		}
		t.Logf("%s/%s installed into the ComputePlane as %s", ns, name, want)
	}
	if routedCount == 0 {
		t.Fatal("the quickstart renders no routed release")
	}
}

// checkStreamBaseline checks the ComputePlane against the baseline
// release's values: every object there, the Namespaces with their Pod
// Security labels and kept when the release goes, created with the
// kubeconfig's user (helm-controller, no impersonation), none of it on the
// management cluster. Without an audit log (audit "") it does not ask who
// created them.
func (e *env) checkStreamBaseline(t *testing.T, cpc *harness.Client, audit string, hr *unstructured.Unstructured) {
	t.Helper()
	objects, _, _ := unstructured.NestedSlice(hr.Object, "spec", "values", "objects")
	kinds := map[string]int{}
	for _, item := range objects {
		m, ok := item.(map[string]any)
		if !ok {
			t.Fatalf("%s: a baseline object is not a map: %v", harness.Describe(hr), item)
		}
		want := &unstructured.Unstructured{Object: m}
		kinds[want.GetKind()]++
		got := e.waitFor(t, cpc, want.GetAPIVersion(), want.GetKind(), want.GetNamespace(), want.GetName(), 30*time.Second, harness.Exists)
		// Helm labels what it installs app.kubernetes.io/managed-by: Helm,
		// over the function's own value; every other field is as rendered.
		sent := want.DeepCopy()
		labels := sent.GetLabels()
		delete(labels, harness.ManagedBy)
		sent.SetLabels(labels)
		for _, msg := range harness.Mismatches(sent.Object, got.Object, "") {
			t.Errorf("%s in the ComputePlane: %s", harness.Describe(want), msg)
		}
		if want.GetKind() != "Namespace" {
			if o, _ := e.admin.Get(e.ctx, want.GetAPIVersion(), want.GetKind(), want.GetNamespace(), want.GetName()); o != nil {
				t.Errorf("the baseline's %s was created in the management cluster", harness.Describe(want))
			}
			continue
		}
		for _, mode := range []string{"enforce", "audit", "warn"} {
			if got.GetLabels()["pod-security.kubernetes.io/"+mode] == "" {
				t.Errorf("namespace %s in the ComputePlane has no pod-security.kubernetes.io/%s label", want.GetName(), mode)
			}
		}
		if got.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
			t.Errorf("namespace %s in the ComputePlane: helm.sh/resource-policy %q, want keep", want.GetName(), got.GetAnnotations()["helm.sh/resource-policy"])
		}
		if audit == "" {
			continue
		}
		if who := creators(t, audit, "namespaces", "", want.GetName()); len(who) == 0 || who[0] != harness.Admin {
			t.Errorf("namespace %s was created in the ComputePlane by %v, want %s (the kubeconfig's user, through helm-controller)", want.GetName(), who, harness.Admin)
		}
	}
	for _, kind := range []string{"Namespace", "ServiceAccount", "RoleBinding", "NetworkPolicy"} {
		if kinds[kind] == 0 {
			t.Errorf("%s: the baseline holds no %s (%v)", harness.Describe(hr), kind, kinds)
		}
	}
	t.Logf("the baseline release put %d objects into the ComputePlane: %v", len(objects), kinds)
}

// demoIsQuiet runs `make demo`'s render (the quickstart's config,
// standalone) and fails on anything on stderr: the bundled example renders
// a fleet that works, with no warning.
func demoIsQuiet(t *testing.T, fn string) {
	t.Helper()
	cmd := exec.Command(fn, "config.yaml", "--summary", "-")
	cmd.Dir = streamExample
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("computeplane-fn config.yaml --summary - in %s: %v\n%s", streamExample, err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("`make demo` printed on stderr:\n%s", stderr.String())
	}
}

// kustomizeBuild runs the README's `kustomize build --enable-alpha-plugins
// --enable-exec .` in dir, where the config's function annotation runs
// bin/computeplane-fn as a generator, and returns the output.
func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	bin := os.Getenv("KUSTOMIZE")
	if bin == "" {
		bin = "../../bin/kustomize"
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("kustomize not found at %s (run make tools, or set KUSTOMIZE): %v", bin, err)
	}
	cmd := exec.Command(bin, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build in %s: %v\n%s", dir, err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("kustomize build in %s printed on stderr:\n%s", dir, stderr.String())
	}
	return stdout.Bytes()
}

// publishStream serves the generator's output as the artifact of the
// GitRepository quickstart in ns: one file, as a repository that commits
// it would hold.
func (e *env) publishStream(t *testing.T, ns string, out []byte) {
	t.Helper()
	tar, err := harness.Tarball(map[string][]byte{"quickstart.yaml": out})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(tar)
	revision := streamRevision + hex.EncodeToString(sum[:])
	src := obj(sourceV1, "GitRepository", ns, streamSource, map[string]any{
		"spec": map[string]any{"url": "https://127.0.0.1/quickstart.git", "interval": "10m", "ref": map[string]any{"branch": "main"}},
	})
	e.setArtifact(t, src, e.artifacts.Publish("gitrepository", ns, streamSource, revision, tar))
}

// publishBaselineChart packs charts/computeplane-baseline as `helm package`
// does (a gzipped tar, the chart under a top folder named after it) and
// serves it as the artifact of the rendered OCIRepository, as
// source-controller does for its layerSelector (operation copy: the chart's
// layer as it is), at the revision <tag>@sha256:<digest>, which
// helm-controller checks against the chart's version.
func (e *env) publishBaselineChart(t *testing.T, repo *unstructured.Unstructured) {
	t.Helper()
	files, err := harness.ReadTree(baselineChart, baselineName)
	if err != nil {
		t.Fatal(err)
	}
	var chart struct{ Name, Version string }
	if err := yaml.Unmarshal(files[baselineName+"/Chart.yaml"], &chart); err != nil {
		t.Fatalf("failed to read %s/Chart.yaml: %v", baselineChart, err)
	}
	tag, _, _ := unstructured.NestedString(repo.Object, "spec", "ref", "tag")
	if chart.Name != baselineName || chart.Version != tag {
		t.Fatalf("%s is chart %s %s; the render's %s reads tag %q", baselineChart, chart.Name, chart.Version, harness.Describe(repo), tag)
	}
	data, err := harness.Tarball(files)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	revision := fmt.Sprintf("%s@sha256:%s", tag, hex.EncodeToString(sum[:]))
	e.setArtifact(t, repo, e.artifacts.Publish("ocirepository", repo.GetNamespace(), repo.GetName(), revision, data))
}
