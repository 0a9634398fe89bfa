package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

const appsV1alpha1 = "apps.cozystack.io/v1alpha1"

// cozystackAPIServer is the stage's running cozystack-api: it reads the
// ApplicationDefinitions only when it starts, so a new set of definitions
// restarts it (on the same port, behind the same APIServices).
type cozystackAPIServer struct {
	port int
	proc *harness.Process
	defs string // the definitions it was started with
}

// ensureCozystackAPI runs cozystack-api with exactly defs as the cluster's
// ApplicationDefinitions, behind the APIServices of Cozystack's chart
// (packages/system/cozystack-api/templates/apiservice.yaml) and a Service of
// type ExternalName to 127.0.0.1, and waits until the API server serves its
// kinds.
func (e *env) ensureCozystackAPI(t *testing.T, defs []*unstructured.Unstructured) {
	t.Helper()
	dir := e.cozystackDir(t, e.bins.cozystackAPI)
	a := &e.cozystackAPI
	key, _ := json.Marshal(defs)
	if a.proc != nil && a.defs == string(key) {
		return
	}
	if a.port == 0 {
		if err := harness.GrantClusterAdmin(e.ctx, e.admin, harness.CozystackAPIIdentity); err != nil {
			t.Fatal(err)
		}
		// cozystack-api reads WorkloadMonitors to report an app's status.
		crds := filepath.Join(dir, "packages", "system", "cozystack-controller", "definitions")
		if err := harness.ApplyCRDs(e.ctx, e.admin, filepath.Join(crds, "cozystack.io_workloadmonitors.yaml")); err != nil {
			t.Fatal(err)
		}
		e.applyAll(t, e.admin, []*unstructured.Unstructured{harness.ExternalNameService(harness.CozySystemNamespace, harness.CozystackAPIName)}, false)
		a.port = harness.FreePort(t)
	}
	if a.proc != nil {
		a.proc.Stop()
	}
	old, err := e.admin.List(e.ctx, "cozystack.io/v1alpha1", "ApplicationDefinition", "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range old {
		if err := e.admin.Delete(e.ctx, "cozystack.io/v1alpha1", "ApplicationDefinition", "", d.GetName()); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range defs {
		d = d.DeepCopy()
		unstructured.RemoveNestedField(d.Object, "metadata", "annotations", "internal.config.kubernetes.io/path")
		// The function's own field (or its annotation), not Cozystack's.
		unstructured.RemoveNestedField(d.Object, "spec", "placement")
		if _, _, err := e.admin.Apply(e.ctx, d, harness.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	proc, ca := harness.StartCozystackAPI(cleanupWith{TB: t, owner: e.t}, e.mgmt, e.dir, e.bins.cozystackAPI, a.port)
	a.proc, a.defs = proc, string(key)
	e.procs = append(e.procs, proc)
	services, err := harness.ChartObjects(harness.CozySystemNamespace,
		filepath.Join(dir, "packages", "system", "cozystack-api", "templates", "apiservice.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range services {
		_ = unstructured.SetNestedField(s.Object, harness.CABundle(ca), "spec", "caBundle")
		_ = unstructured.SetNestedField(s.Object, int64(a.port), "spec", "service", "port")
		if _, _, err := e.admin.Apply(e.ctx, s, harness.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range services {
		e.waitFor(t, e.admin, "apiregistration.k8s.io/v1", "APIService", "", s.GetName(), time.Minute,
			func(u *unstructured.Unstructured) (bool, string) {
				st, r, m, _ := harness.Condition(u, "Available")
				return st == "True", fmt.Sprintf("Available=%s %s: %s", st, r, m)
			})
	}
	for _, d := range defs {
		kind, _, _ := unstructured.NestedString(d.Object, "spec", "application", "kind")
		err := harness.Poll(e.ctx, time.Minute, 500*time.Millisecond, func() (bool, string) {
			e.admin.ResetDiscovery()
			if _, _, err := e.admin.Resource(appsV1alpha1, kind); err != nil {
				return false, err.Error()
			}
			// Served, and as the admin: until cozystack-api has read the
			// API server's front-proxy CA, it sees an anonymous user.
			if _, err := e.admin.List(e.ctx, appsV1alpha1, kind, "default", ""); err != nil {
				return false, err.Error()
			}
			return true, ""
		})
		if err != nil {
			t.Fatalf("cozystack-api does not serve %s: %v\n%s", kind, err, proc.Tail(20))
		}
	}
}

// comparison is one app of a fleet: the function's release of it and its
// input.
type comparison struct {
	from     string
	app      *unstructured.Unstructured
	rendered *unstructured.Unstructured
}

// explainedDifferences are the release fields where the function differs
// from cozystack-api on purpose (docs/e2e.md, "cozystack-api"), by path.
var explainedDifferences = map[string]string{
	// The function's mark on everything it generates.
	".metadata.labels.app.kubernetes.io/managed-by": "the function's own label",
	// spec.releases.shardLabel: Admission leaves it to the admission
	// policy, Webhook (the default below Kubernetes 1.36) to
	// flux-shard-operator's webhook; cozystack-api writes the
	// definition's value.
	".metadata.labels.sharding.fluxcd.io/key": "set by the computeplane-release-shard policy on 1.36, by flux-shard-operator's webhook below, never rendered",
}

// testCozystackAPI runs cozystack-api: every ManagementPlane release of the
// fixtures and of the suite's fleets compared with the one cozystack-api
// makes of the same app, then the guard on the path a user takes.
func (e *env) testCozystackAPI(t *testing.T) {
	e.cozystackDir(t, e.bins.cozystackAPI)
	t.Run("FieldForField", e.testFieldForField)
	t.Run("ReadBack", e.testReadBack)
	t.Run("Guard", e.testGuardThroughAPI)
}

// testFieldForField creates, through cozystack-api, every app the function
// places on the management plane, in the fixtures (all but the error ones)
// and the suite's fleets, and compares the HelmRelease cozystack-api makes
// with the one the function rendered, every field both ways.
func (e *env) testFieldForField(t *testing.T) {
	groups := map[string][]comparison{}
	groupDefs := map[string][]*unstructured.Unstructured{}
	add := func(from string, defs, inputs, rendered []*unstructured.Unstructured) {
		key, _ := json.Marshal(defs)
		for _, hr := range rendered {
			// Routed releases (editableThroughAPI keeps their app labels)
			// are not what cozystack-api makes: they are the ComputePlane's.
			if hr.GetKind() != "HelmRelease" || hr.GetLabels()["apps.cozystack.io/application.kind"] == "" || routed(hr) {
				continue
			}
			app := findApp(inputs, hr)
			if app == nil {
				t.Errorf("%s: %s has no app among the inputs", from, harness.ObjectKey(hr))
				continue
			}
			groups[string(key)] = append(groups[string(key)], comparison{from: from, app: app, rendered: hr})
			groupDefs[string(key)] = defs
		}
	}
	suiteDefs, err := harness.DecodeFiles(filepath.Join("testdata", "definitions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fleet", "direct", "platform", "shard"} {
		dir := fleetDir(t, name)
		inputs, err := harness.DecodeFiles(filepath.Join(dir, "apps.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		add("suite fleet "+name, suiteDefs, inputs, e.render(t, dir))
	}
	realDir, realDefs := realFleetDir(t)
	realApps, err := harness.DecodeFiles(filepath.Join(realDir, "apps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	add("suite fleet real (Cozystack's definitions)", realDefs, realApps, e.render(t, realDir))
	fixtures, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "*"))
	for _, dir := range fixtures {
		if strings.HasPrefix(filepath.Base(dir), "error-") {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "input*.yaml"))
		if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err != nil || len(files) == 0 {
			continue
		}
		inputs, err := harness.DecodeFiles(files...)
		if err != nil {
			t.Fatal(err)
		}
		var defs []*unstructured.Unstructured
		for _, o := range inputs {
			if o.GetKind() == "ApplicationDefinition" {
				defs = append(defs, o)
			}
		}
		var rels []string
		for _, f := range files {
			rels = append(rels, filepath.Base(f))
		}
		out := harness.Generated(harness.RenderKRM(t, e.bins.fn, dir, "config.yaml", rels...))
		add("fixture "+filepath.Base(dir), defs, inputs, out)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []string
	compared, scratch := 0, 0
	for _, k := range keys {
		e.ensureCozystackAPI(t, groupDefs[k])
		for _, c := range groups[k] {
			// A namespace of its own: the fleets' releases of the same
			// names may be in the cluster already.
			scratch++
			ns := fmt.Sprintf("tenant-cmp%03d", scratch)
			e.namespaces(ns)
			problems = append(problems, e.compareOne(t, c, ns)...)
			compared++
		}
	}
	t.Logf("compared %d ManagementPlane releases (%d sets of definitions) with cozystack-api's", compared, len(keys))
	if len(problems) > 0 {
		t.Errorf("%d differences from cozystack-api:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
}

// realDefinitions are the ApplicationDefinitions of ../shared/cozystack the
// real fleet uses.
var realDefinitions = []string{"postgres", "redis", "etcd"}

// realFleetDir is testdata/real with Cozystack's own definitions as
// definitions.yaml, and those definitions.
func realFleetDir(t *testing.T) (string, []*unstructured.Unstructured) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "real")
	files, err := harness.ReadTree(filepath.Join("testdata", "real"), "")
	if err != nil {
		t.Fatal(err)
	}
	var defs []byte
	var paths []string
	for _, name := range realDefinitions {
		p := filepath.Join(sharedDir, "cozystack", "applicationdefinitions", name+".yaml")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		defs = append(append(defs, data...), "\n---\n"...)
		paths = append(paths, p)
	}
	files["definitions.yaml"] = defs
	for p, data := range files {
		harness.WriteFile(t, filepath.Join(dir, p), data)
	}
	objs, err := harness.DecodeFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	return dir, objs
}

// testReadBack applies the real fleet's rendered Postgres release and
// reads it back through cozystack-api, as the dashboard does: cozystack-api
// fills in the schema's defaults only then; the release keeps the app's
// values as written.
func (e *env) testReadBack(t *testing.T) {
	dir, defs := realFleetDir(t)
	e.ensureCozystackAPI(t, defs)
	objs := e.render(t, dir)
	hr := find(objs, "HelmRelease", "tenant-omega", "postgres-db")
	if hr == nil {
		t.Fatal("the real fleet renders no HelmRelease tenant-omega/postgres-db")
	}
	e.namespaces("tenant-omega")
	e.applyAll(t, e.admin, []*unstructured.Unstructured{hr}, false)
	out, errOut, err := e.kubectl(t, "", nil, "get", "postgres", "db", "-n", "tenant-omega", "-o", "yaml")
	if err != nil {
		t.Fatalf("kubectl get postgres db through cozystack-api: %v\n%s", err, errOut)
	}
	t.Logf("kubectl get postgres db -o yaml (rendered release, Cozystack's Postgres definition):\n%s", out)
	var app map[string]any
	if err := yaml.Unmarshal([]byte(out), &app); err != nil {
		t.Fatal(err)
	}
	spec, _ := app["spec"].(map[string]any)
	values, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")
	for k, v := range values {
		if fmt.Sprint(spec[k]) != fmt.Sprint(v) {
			t.Errorf("read back through cozystack-api, spec.%s = %v, the release's value is %v", k, spec[k], v)
		}
	}
	t.Logf("the release holds %d values; cozystack-api shows %d spec fields (the rest are the schema's defaults)", len(values), len(spec))
	got, _ := e.admin.Get(e.ctx, helmV2, "HelmRelease", "tenant-omega", "postgres-db")
	if v, _, _ := unstructured.NestedMap(got.Object, "spec", "values"); len(v) != len(values) {
		t.Errorf("reading the app back changed the release's values: %v, rendered %v", v, values)
	}
}

// findApp is the input app a rendered release was made from.
func findApp(inputs []*unstructured.Unstructured, hr *unstructured.Unstructured) *unstructured.Unstructured {
	l := hr.GetLabels()
	for _, o := range inputs {
		if o.GetAPIVersion() == appsV1alpha1 && o.GetKind() == l["apps.cozystack.io/application.kind"] &&
			o.GetName() == l["apps.cozystack.io/application.name"] && o.GetNamespace() == hr.GetNamespace() {
			return o
		}
	}
	return nil
}

// compareOne creates the app through cozystack-api in namespace ns,
// compares the release it makes with the rendered one (moved to ns), and
// deletes the app.
func (e *env) compareOne(t *testing.T, c comparison, ns string) []string {
	t.Helper()
	app := c.app.DeepCopy()
	app.SetNamespace(ns)
	unstructured.RemoveNestedField(app.Object, "metadata", "annotations", "internal.config.kubernetes.io/path")
	unstructured.RemoveNestedField(app.Object, "metadata", "annotations", "config.kubernetes.io/path")
	if len(app.GetAnnotations()) == 0 {
		unstructured.RemoveNestedField(app.Object, "metadata", "annotations")
	}
	what := fmt.Sprintf("%s: %s %s", c.from, c.app.GetKind(), c.app.GetName())
	if _, err := e.admin.Create(e.ctx, app); err != nil {
		return []string{fmt.Sprintf("%s: cozystack-api refused it: %v", what, err)}
	}
	defer func() {
		_ = e.admin.Delete(e.ctx, appsV1alpha1, app.GetKind(), ns, app.GetName())
	}()
	made, err := e.admin.Get(e.ctx, helmV2, "HelmRelease", ns, c.rendered.GetName())
	if err != nil || made == nil {
		return []string{fmt.Sprintf("%s: cozystack-api made no HelmRelease %s (%v)", what, c.rendered.GetName(), err)}
	}
	want := c.rendered.DeepCopy()
	want.SetNamespace(ns)
	got := made.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "finalizers"} {
		unstructured.RemoveNestedField(got.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(got.Object, "status")
	var out []string
	for _, d := range diff(want.Object, got.Object, "") {
		if _, ok := explainedDifferences[d.path]; ok {
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s: %s", what, d.path, d.text))
	}
	return out
}

type difference struct{ path, text string }

// diff compares the rendered object a with cozystack-api's b, both ways.
// Label and annotation keys are path elements as they are (they hold dots
// and slashes).
func diff(a, b any, path string) []difference {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		var sorted []string
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		var out []difference
		for _, k := range sorted {
			av, ain := am[k]
			bv, bin := bm[k]
			p := path + "." + k
			switch {
			case !bin:
				out = append(out, difference{p, fmt.Sprintf("rendered %s, cozystack-api has none", compact(av))})
			case !ain:
				out = append(out, difference{p, fmt.Sprintf("cozystack-api has %s, not rendered", compact(bv))})
			default:
				out = append(out, diff(av, bv, p)...)
			}
		}
		return out
	}
	if reflect.DeepEqual(normalize(a), normalize(b)) {
		return nil
	}
	return []difference{{path, fmt.Sprintf("rendered %s, cozystack-api %s", compact(a), compact(b))}}
}

// normalize makes JSON numbers comparable.
func normalize(v any) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

func compact(v any) string {
	data, _ := json.Marshal(v)
	if len(data) > 200 {
		return string(data[:200]) + "..."
	}
	return string(data)
}

// kubectl runs kubectl against the management API server as the admin,
// impersonating user when it is not empty, and returns its output and
// error output.
func (e *env) kubectl(t *testing.T, user string, stdin []byte, args ...string) (string, string, error) {
	t.Helper()
	bin := os.Getenv("E2E_KUBECTL")
	if bin == "" {
		t.Skip("E2E_KUBECTL is not set: run the suite with `make e2e`")
	}
	args = append([]string{"--kubeconfig=" + e.mgmt.KubeconfigFile(t, harness.Admin)}, args...)
	if user != "" {
		args = append(args, "--as="+user, "--as-group=tenant-users")
	}
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// testGuardThroughAPI renders the shard fleet (the guard with it), applies
// it as the fleet, and takes the paths of a tenant user through
// cozystack-api: a JupyterHub (placed on the ComputePlane) is refused by
// the guard, a Postgres is made, an edit of a release the fleet owns is
// harmless, a routed release is invisible, or, editable, its edit is
// refused.
func (e *env) testGuardThroughAPI(t *testing.T) {
	defs, err := harness.DecodeFiles(filepath.Join("testdata", "definitions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e.ensureCozystackAPI(t, defs)
	ns := "tenant-kappa"
	dir := fleetDir(t, "shard")
	objs := e.render(t, dir)
	for _, n := range tenantNamespaces(objs) {
		e.namespaces(n)
		e.writeCozystackValues(t, n)
	}
	e.bootstrapFleet(t, objs)
	fleet := e.fleetClient(t)
	e.applyAll(t, fleet, objs, false)
	const user = "alice"
	role := obj("rbac.authorization.k8s.io/v1", "Role", ns, "e2e-apps-editor", map[string]any{
		"rules": []any{map[string]any{"apiGroups": []any{"apps.cozystack.io"}, "resources": []any{"*"}, "verbs": []any{"*"}}},
	})
	binding := obj("rbac.authorization.k8s.io/v1", "RoleBinding", ns, "e2e-apps-editor", map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "e2e-apps-editor"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}},
	})
	e.applyAll(t, e.admin, []*unstructured.Unstructured{role, binding}, false)

	// The guard takes a moment to reach the API server's admission chain.
	probe := obj(helmV2, "HelmRelease", ns, "jupyterhub-probe", map[string]any{
		"metadata": map[string]any{"name": "jupyterhub-probe", "namespace": ns,
			"labels": map[string]any{"apps.cozystack.io/application.kind": "JupyterHub"}},
		"spec": map[string]any{"interval": "5m",
			"chartRef": map[string]any{"kind": "ExternalArtifact", "name": "cozystack-jupyterhub-application-default-jupyterhub", "namespace": cozySystem}},
	})
	if err := harness.Poll(e.ctx, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		_, _, err := e.admin.Apply(e.ctx, probe, harness.ApplyOptions{DryRun: true})
		return err != nil && strings.Contains(err.Error(), "computeplane-guard"), fmt.Sprint(err)
	}); err != nil {
		t.Fatalf("the guard does not refuse a JupyterHub release without its route: %v", err)
	}

	// A JupyterHub through the API: its release would run on the
	// management cluster.
	hub := []byte("apiVersion: apps.cozystack.io/v1alpha1\nkind: JupyterHub\nmetadata:\n  name: sneaky\n  namespace: " + ns + "\nspec:\n  users: 1\n")
	out, errOut, err := e.kubectl(t, user, hub, "create", "-f", "-")
	t.Logf("kubectl create JupyterHub as %s: err=%v\n%s%s", user, err, out, errOut)
	if err == nil || !strings.Contains(errOut, "computeplane-guard") {
		t.Errorf("a JupyterHub created through cozystack-api was not refused by computeplane-guard: %v\n%s%s", err, out, errOut)
	}
	if hr, _ := e.admin.Get(e.ctx, helmV2, "HelmRelease", ns, "jupyterhub-sneaky"); hr != nil {
		t.Errorf("the refused JupyterHub left HelmRelease %s/jupyterhub-sneaky", ns)
	}

	// A Postgres passes.
	pg := []byte("apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: mine\n  namespace: " + ns + "\nspec:\n  replicas: 1\n")
	if out, errOut, err := e.kubectl(t, user, pg, "create", "-f", "-"); err != nil {
		t.Errorf("a Postgres created through cozystack-api was refused: %v\n%s%s", err, out, errOut)
	} else if hr, _ := e.admin.Get(e.ctx, helmV2, "HelmRelease", ns, "postgres-mine"); hr == nil {
		t.Errorf("cozystack-api made no HelmRelease for Postgres mine")
	}

	// What the dashboard reads back of a rendered release.
	out, errOut, err = e.kubectl(t, user, nil, "get", "postgres", "db", "-n", ns, "-o", "yaml")
	if err != nil {
		t.Errorf("kubectl get postgres db through cozystack-api: %v\n%s", err, errOut)
	}
	t.Logf("kubectl get postgres db -o yaml (a rendered release, through cozystack-api):\n%s", out)

	// An edit through the API of the fleet's Postgres: cozystack-api
	// rebuilds the release from the app; the fleet's next apply puts it
	// back.
	before, _ := e.admin.Get(e.ctx, helmV2, "HelmRelease", ns, "postgres-db")
	out, errOut, err = e.kubectl(t, user, nil, "patch", "postgres", "db", "-n", ns, "--type=merge", "-p", `{"spec":{"replicas":5}}`)
	t.Logf("kubectl patch postgres db as %s: err=%v %s%s", user, err, out, errOut)
	edited, _ := e.admin.Get(e.ctx, helmV2, "HelmRelease", ns, "postgres-db")
	if edited != nil && before != nil {
		t.Logf("after the edit: labels %v (before %v), values %v", edited.GetLabels(), before.GetLabels(), edited.Object["spec"].(map[string]any)["values"])
	}
	e.applyAll(t, fleet, objs, false)
	restored, _ := e.admin.Get(e.ctx, helmV2, "HelmRelease", ns, "postgres-db")
	if restored != nil {
		if v, _, _ := unstructured.NestedFieldNoCopy(restored.Object, "spec", "values", "replicas"); fmt.Sprint(v) != "1" {
			t.Errorf("the fleet's apply did not restore postgres-db's values.replicas: %v", v)
		}
	}

	// A routed release is not an app cozystack-api lists.
	out, errOut, err = e.kubectl(t, user, nil, "get", "jupyterhub", "lab", "-n", ns)
	t.Logf("kubectl get jupyterhub lab (routed, rendered): err=%v %s%s", err, out, errOut)
	if err == nil {
		t.Errorf("cozystack-api shows the routed release jupyterhub-lab as an app:\n%s", out)
	}

	// routing.editableThroughAPI: true keeps the app labels: the routed
	// release is listed, and an edit, which rebuilds it without its
	// kubeConfig, is refused by the guard.
	cfgPath := filepath.Join(dir, "config.yaml")
	data, _ := os.ReadFile(cfgPath)
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["spec"].(map[string]any)["routing"] = map[string]any{"editableThroughAPI": true}
	data, _ = yaml.Marshal(cfg)
	harness.WriteFile(t, cfgPath, data)
	editable := e.render(t, dir)
	e.applyAll(t, fleet, ofKind(editable, "HelmRelease"), false)
	out, errOut, err = e.kubectl(t, user, nil, "get", "jupyterhub", "lab", "-n", ns, "-o", "yaml")
	t.Logf("kubectl get jupyterhub lab -o yaml (routed, editableThroughAPI): err=%v\n%s%s", err, out, errOut)
	out, errOut, err = e.kubectl(t, user, nil, "patch", "jupyterhub", "lab", "-n", ns, "--type=merge", "-p", `{"spec":{"users":9}}`)
	t.Logf("kubectl patch jupyterhub lab as %s: err=%v %s%s", user, err, out, errOut)
	if err == nil {
		t.Errorf("an edit through cozystack-api of the routed jupyterhub-lab was not refused")
	}
	if hr, _ := e.admin.Get(e.ctx, helmV2, "HelmRelease", ns, "jupyterhub-lab"); hr != nil && !routed(hr) {
		t.Errorf("jupyterhub-lab lost its kubeConfig through cozystack-api")
	}
	e.applyAll(t, fleet, ofKind(objs, "HelmRelease"), false)

	// cozystack-api takes what the function refuses: a value against the
	// definition's schema.
	bad := []byte("apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: typo\n  namespace: " + ns + "\nspec:\n  replicas: two\n")
	out, errOut, err = e.kubectl(t, user, bad, "create", "-f", "-")
	t.Logf("kubectl create Postgres with replicas: two: err=%v %s%s", err, out, errOut)
}
