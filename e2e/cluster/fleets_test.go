package cluster

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
