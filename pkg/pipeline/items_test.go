package pipeline_test

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
)

// TestItemsNamedBySpecInputs runs the KRM function's case of kpt handing
// over a package whose config reads the whole package (spec.inputs: [.]):
// every file is an item and one of spec.inputs. Each input is read once;
// the inputs, an object passing through and a v1 List come back once, as
// they came, without keepInputs and with it; earlier output is rendered
// anew, not kept; a kustomization.yaml without apiVersion passes through.
func TestItemsNamedBySpecInputs(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"definitions", "tenants", "apps"} {
		testfs.CopyTree(t, filepath.Join("..", "..", "examples", "quickstart", sub), filepath.Join(dir, sub))
	}
	files := map[string]string{
		"config.yaml":        "apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata:\n  name: fleet\nspec:\n  inputs: [.]\n",
		"kustomization.yaml": "generators:\n- config.yaml\n",
		"other.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n  namespace: default\ndata: {a: b}\n",
		"list.yaml":          "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: listed, namespace: default}\n",
		"earlier.yaml":       "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: computeplane-fleet\n  namespace: flux-system\n  labels: {app.kubernetes.io/managed-by: computeplane-fn}\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The items as kpt hands them over: every YAML file, named by its path
	// in the package.
	paths, problems := input.Expand(dir, []string{"."})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var items []api.Object
	var config *api.Object
	docs := map[string]int{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		objs, problems := input.Decode(data, filepath.ToSlash(rel))
		if len(problems) > 0 {
			t.Fatalf("%s: %v", rel, problems)
		}
		if rel == "list.yaml" {
			// An item is the List itself, as kpt hands it over.
			objs = []api.Object{listItem(t, data, "list.yaml")}
		}
		for i := range objs {
			if objs[i].Kind == api.ConfigKind {
				c := objs[i]
				config = &c
			}
		}
		items = append(items, objs...)
		docs[filepath.ToSlash(rel)] = len(objs)
	}
	if config == nil {
		t.Fatal("no config among the items")
	}
	for _, keep := range []bool{false, true} {
		cfg := *config
		if keep {
			cfg.Node = listItem(t, []byte(files["config.yaml"]+"  keepInputs: true\n"), "config.yaml").Node
		}
		r, problems := pipeline.Run(pipeline.Options{ConfigDir: dir, ConfigObject: &cfg, Items: items})
		if len(problems) > 0 {
			t.Fatalf("keepInputs %v: %v", keep, problems)
		}
		count := map[string]int{}
		generated := 0
		for _, o := range r.Objects {
			if o.Generated {
				generated++
				continue
			}
			count[o.Origin.File]++
		}
		// A file comes back as its items: one per document.
		for _, file := range []string{"config.yaml", "kustomization.yaml", "other.yaml", "list.yaml", "definitions/jupyterhub.yaml", "tenants/tenants.yaml", "apps/acme.yaml"} {
			if count[file] != docs[file] {
				t.Errorf("keepInputs %v: %s comes back as %d items, want its %d: %v", keep, file, count[file], docs[file], count)
			}
		}
		if count["earlier.yaml"] != 0 {
			t.Errorf("keepInputs %v: earlier output came back as it was", keep)
		}
		if generated == 0 {
			t.Errorf("keepInputs %v: nothing rendered", keep)
		}
		if len(r.Fleet.Definitions) != 4 {
			t.Errorf("keepInputs %v: %d definitions, want the quickstart's 4, each once", keep, len(r.Fleet.Definitions))
		}
	}
}

// listItem is data, one YAML document, as one item, whatever it holds (a
// v1 List stays a List), as kpt hands a file over.
func listItem(t *testing.T, data []byte, file string) api.Object {
	t.Helper()
	n, err := yaml.Parse(string(data))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return api.NewObject(n.YNode(), api.Origin{File: file})
}
