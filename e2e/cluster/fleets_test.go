package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// fleetDir copies testdata/<name> and testdata/definitions.yaml into a
// fresh folder, where the function runs (its inputs never leave the working
// directory).
func fleetDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	files, err := harness.ReadTree(filepath.Join("testdata", name), "")
	if err != nil {
		t.Fatal(err)
	}
	defs, err := os.ReadFile(filepath.Join("testdata", "definitions.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files["definitions.yaml"] = defs
	for p, data := range files {
		harness.WriteFile(t, filepath.Join(dir, p), data)
	}
	return dir
}

// fleetDir is fleetDir for the mode. The config names the layout's Flux
// (spec.platform.flux, which the default unitSource follows) and its
// Kubernetes (spec.platform.kubernetesVersion): the default, 1.33, on the
// oldest platform, and 1.36 on the newest, so that each form of the guard
// (its variables inlined below 1.36) runs on the API server it is for.
// Outside flux-system, the config puts the fleet's wiring (and so its
// account) in the mode's fleet namespace (spec.fleet.wiringNamespace,
// docs/flux-wiring.md "On Cozystack"); the fleets that have no spec.fleet
// get one for that alone (it changes nothing else of a standalone render).
func (e *env) fleetDir(t *testing.T, name string) string {
	t.Helper()
	dir := fleetDir(t, name)
	editSpec(t, filepath.Join(dir, "config.yaml"), func(spec map[string]any) {
		platform, _ := spec["platform"].(map[string]any)
		if platform == nil {
			platform = map[string]any{}
		}
		platform["flux"] = e.mode.flux()
		if !e.mode.oldest {
			platform["kubernetesVersion"] = newestKubernetes
		}
		spec["platform"] = platform
	})
	ns := e.mode.fleetNamespace
	if ns == "flux-system" {
		return dir
	}
	editSpec(t, filepath.Join(dir, "config.yaml"), func(spec map[string]any) {
		fleet, ok := spec["fleet"].(map[string]any)
		if !ok {
			fleet = map[string]any{"sourceRef": map[string]any{"kind": "GitRepository", "name": "fleet"}, "path": "./fleet", "unitSource": "FleetSource"}
			spec["fleet"] = fleet
		}
		fleet["wiringNamespace"] = ns
		if ref, ok := fleet["sourceRef"].(map[string]any); ok && ref["namespace"] != nil {
			ref["namespace"] = ns
		}
	})
	return dir
}

// editSpec changes the spec of the config file at path.
func editSpec(t *testing.T, path string, edit func(spec map[string]any)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	edit(cfg["spec"].(map[string]any))
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	harness.WriteFile(t, path, out)
}

// fleetIdentity picks the fleet's account and its RBAC from a render: the
// ServiceAccount in the fleet namespace ns, the ClusterRole and the
// ClusterRoleBinding, all named computeplane-fleet.
func fleetIdentity(t *testing.T, objs []*unstructured.Unstructured, ns string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, want := range []struct{ kind, ns string }{
		{"ServiceAccount", ns}, {"ClusterRole", ""}, {"ClusterRoleBinding", ""},
	} {
		o := find(objs, want.kind, want.ns, fleetAccount)
		if o == nil {
			t.Fatalf("the render has no %s %s (the fleet's own account, docs/flux-wiring.md)", want.kind, strings.TrimPrefix(want.ns+"/"+fleetAccount, "/"))
		}
		out = append(out, o)
	}
	return out
}

// bootstrapFleet applies the fleet's account and its RBAC as the operator
// does by hand before the root Kustomization (docs/flux-wiring.md,
// "Bootstrap"): everything else of the fleet applies as that account.
//
// A stage's fleets share its management cluster, and the guard in force
// may be an earlier fleet's of the same stage, which admits another fleet's
// account (InCluster's fleets have wiring namespaces of their own, after
// the Direct fleet that made the cluster chart): then even the platform
// unit, which would bring this fleet's guard, is refused. So the render's
// guard is applied here too, as an administrator, and the bootstrap waits
// until it admits this fleet's own ClusterRoleBinding. A real management
// cluster has one fleet and never needs this.
func (e *env) bootstrapFleet(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	e.bootstrapFleetIn(t, objs, e.mode.fleetNamespace, e.fleet)
}

// bootstrapFleetIn is bootstrapFleet for a fleet whose account lives in ns
// (a render with a wiring namespace of its own), fleet impersonating it.
func (e *env) bootstrapFleetIn(t *testing.T, objs []*unstructured.Unstructured, ns string, fleet *harness.Client) {
	t.Helper()
	identity := fleetIdentity(t, objs, ns)
	e.applyAll(t, e.admin, identity, false)
	guard := ofKind(objs, "ValidatingAdmissionPolicy")
	if len(guard) == 0 {
		return
	}
	e.applyAll(t, e.admin, append(guard, ofKind(objs, "ValidatingAdmissionPolicyBinding")...), false)
	binding := identity[2]
	err := harness.Poll(e.ctx, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		_, _, err := fleet.Apply(e.ctx, binding, harness.ApplyOptions{DryRun: true})
		return err == nil, fmt.Sprint(err)
	})
	if err != nil {
		t.Fatalf("the render's guard does not admit its own fleet's ClusterRoleBinding: %v", err)
	}
}

// render runs the function standalone on a fleet folder and returns what it
// generated.
func (e *env) render(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	return harness.Generated(harness.Render(t, e.bins.fn, dir, "config.yaml"))
}

// tenantNamespaces lists the namespaces of objs other than cozy-system.
func tenantNamespaces(objs []*unstructured.Unstructured) []string {
	set := map[string]bool{}
	for _, o := range objs {
		if ns := o.GetNamespace(); ns != "" && ns != cozySystem {
			set[ns] = true
		}
	}
	var out []string
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

func find(objs []*unstructured.Unstructured, kind, namespace, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	return nil
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// routed reports whether a rendered HelmRelease is routed to a ComputePlane.
func routed(hr *unstructured.Unstructured) bool {
	_, ok, _ := unstructured.NestedMap(hr.Object, "spec", "kubeConfig")
	return ok
}

// isCluster reports whether a rendered HelmRelease is a ComputePlane cluster.
func isCluster(hr *unstructured.Unstructured) bool {
	return hr.GetLabels()["internal.cozystack.io/computeplane"] == "true"
}

// applyAll applies objs with server-side apply (fieldValidation=Strict) as
// c and fails on any refusal or warning, or on a field that does not read
// back as sent.
func (e *env) applyAll(t *testing.T, c *harness.Client, objs []*unstructured.Unstructured, dryRun bool) {
	t.Helper()
	var problems []string
	for _, o := range objs {
		got, warnings, err := c.Apply(e.ctx, o, harness.ApplyOptions{DryRun: dryRun})
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if len(warnings) > 0 {
			problems = append(problems, harness.Describe(o)+": the server warned: "+strings.Join(warnings, "; "))
		}
		if !dryRun {
			got, err = c.Get(e.ctx, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
			if err != nil || got == nil {
				problems = append(problems, harness.Describe(o)+": not read back")
				continue
			}
		}
		for _, m := range harness.Mismatches(o.Object, got.Object, "") {
			problems = append(problems, harness.Describe(o)+": "+m)
		}
	}
	if len(problems) > 0 {
		t.Fatalf("%d problems applying %d objects as %s:\n  %s", len(problems), len(objs), c.Identity, strings.Join(problems, "\n  "))
	}
}
