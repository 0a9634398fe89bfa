package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// ManagedBy is the label every object the function generates carries.
const ManagedBy = "app.kubernetes.io/managed-by"

// Render runs the computeplane-fn binary standalone in dir with args and
// returns the objects it printed.
func Render(t testing.TB, bin, dir string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out := run(t, bin, dir, nil, args...)
	objs, err := Decode(out)
	if err != nil {
		t.Fatalf("computeplane-fn in %s: %v", dir, err)
	}
	return objs
}

// RenderFolder runs the binary's fleet-folder mode into outDir. The
// stages reshape their small fleets on purpose (the wiring regrouped, parts
// merged), which may remove more than half of a fleet's files at once, so
// they consent to it (--allow-prune).
func RenderFolder(t testing.TB, bin, dir, outDir string, args ...string) {
	t.Helper()
	run(t, bin, dir, nil, append([]string{"--output-dir", outDir, "--allow-prune"}, args...)...)
}

// RenderFolderStatus is RenderFolder for a run that may be refused: it
// returns the exit status and the error output instead of failing the test
// on a status other than 0.
func RenderFolderStatus(t testing.TB, bin, dir, outDir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--output-dir", outDir, "--allow-prune"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), stderr.String()
	case err != nil:
		t.Fatalf("computeplane-fn in %s: %v", dir, err)
	}
	return 0, stderr.String()
}

// RenderKRM runs the binary as a KRM function on a ResourceList of config
// and the objects of inputs, the way kpt and the project's fixtures run it,
// and returns the items.
func RenderKRM(t testing.TB, bin, dir, config string, inputs ...string) []*unstructured.Unstructured {
	t.Helper()
	cfg, err := DecodeFiles(filepath.Join(dir, config))
	if err != nil || len(cfg) != 1 {
		t.Fatalf("failed to read the function config %s: %v (%d objects)", config, err, len(cfg))
	}
	var items []any
	for _, in := range inputs {
		objs, err := DecodeFiles(filepath.Join(dir, in))
		if err != nil {
			t.Fatalf("failed to read %s: %v", in, err)
		}
		for _, o := range objs {
			items = append(items, o.Object)
		}
	}
	rl := map[string]any{
		"apiVersion":     "config.kubernetes.io/v1",
		"kind":           "ResourceList",
		"functionConfig": cfg[0].Object,
		"items":          items,
	}
	data, err := yaml.Marshal(rl)
	if err != nil {
		t.Fatalf("failed to encode the ResourceList: %v", err)
	}
	out := run(t, bin, dir, data)
	objs, err := Decode(out)
	if err != nil || len(objs) != 1 {
		t.Fatalf("failed to read the function's ResourceList: %v", err)
	}
	list, _, _ := unstructured.NestedSlice(objs[0].Object, "items")
	var res []*unstructured.Unstructured
	for _, it := range list {
		if m, ok := it.(map[string]any); ok {
			res = append(res, &unstructured.Unstructured{Object: m})
		}
	}
	return res
}

func run(t testing.TB, bin, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("computeplane-fn %v in %s: %v\n%s", args, dir, err, stderr.String())
	}
	return stdout.Bytes()
}

// Generated keeps the objects the function generated (managed-by label),
// dropping pass-through and kept inputs, and strips the function's
// annotations for kpt (config.kubernetes.io/*, internal.config...), which
// kpt and kustomize remove before anything reaches a cluster.
func Generated(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetLabels()[ManagedBy] != "computeplane-fn" {
			continue
		}
		o = o.DeepCopy()
		ann := o.GetAnnotations()
		for k := range ann {
			if k == "internal.config.kubernetes.io/path" || k == "internal.config.kubernetes.io/index" ||
				k == "config.kubernetes.io/path" || k == "config.kubernetes.io/index" ||
				k == "internal.config.kubernetes.io/id" || k == "internal.config.kubernetes.io/annotations-migration-resource-id" ||
				k == "config.k8s.io/id" {
				delete(ann, k)
			}
		}
		if len(ann) == 0 {
			unstructured.RemoveNestedField(o.Object, "metadata", "annotations")
		} else {
			o.SetAnnotations(ann)
		}
		out = append(out, o)
	}
	return out
}

// WriteFile writes data, failing the test on error.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatalf("failed to create %s: %v", filepath.Dir(path), err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatalf("failed to write %s: %v", path, err)
	}
}

// ObjectKey names an object in maps: group/kind namespace/name.
func ObjectKey(o *unstructured.Unstructured) string {
	return fmt.Sprintf("%s/%s %s/%s", o.GroupVersionKind().Group, o.GetKind(), o.GetNamespace(), o.GetName())
}
