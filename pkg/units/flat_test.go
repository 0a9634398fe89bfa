package units_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// TestFilesMatchStream lays out a whole fixture: one file per generated
// object at its path, each exactly the object's document of the stream.
func TestFilesMatchStream(t *testing.T) {
	dir := "../../fixtures/keep-inputs-and-passthrough"
	inputs, _ := filepath.Glob(filepath.Join(dir, "input*.yaml"))
	for i := range inputs {
		inputs[i] = filepath.Base(inputs[i])
	}
	run, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, "config.yaml"), Inputs: inputs})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	objs := run.Objects
	files, problems := units.Files(run.Config, objs)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var generated []render.Object
	for _, o := range objs {
		if o.Generated {
			generated = append(generated, o)
		}
	}
	if len(generated) == len(objs) {
		t.Fatal("the fixture has no objects that are not generated; pick one that has")
	}
	if len(files) != len(generated) {
		t.Fatalf("%d files for %d generated objects", len(files), len(generated))
	}
	var stream, joined bytes.Buffer
	if err := output.Encode(&stream, generated); err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if f.Path != generated[i].Path() {
			t.Errorf("file %d: path %s, want %s", i, f.Path, generated[i].Path())
		}
		if !output.IsManaged(f.Data) {
			t.Errorf("%s: not recognisable as generated", f.Path)
		}
		if i > 0 {
			joined.WriteString("---\n")
		}
		joined.Write(f.Data)
	}
	if stream.String() != joined.String() {
		t.Errorf("the files joined differ from the stream")
	}
}

func generated(t *testing.T, kind, ns, name string) render.Object {
	t.Helper()
	n, err := yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels:\n    app.kubernetes.io/managed-by: computeplane-fn\n")
	if err != nil {
		t.Fatal(err)
	}
	return render.Object{Body: render.NodeBody(n.YNode()), APIVersion: "v1", Kind: kind, Namespace: ns, Name: name, Generated: true}
}

// TestFilesPathLikeNames gives objects hostile names: every file still lands
// inside the folder, and nothing is written next to it.
func TestFilesPathLikeNames(t *testing.T) {
	objs := []render.Object{
		generated(t, "ConfigMap", "../../etc", "passwd"),
		generated(t, "ConfigMap", "tenant-a", "../../../escape"),
		generated(t, "../Kind", "..", ".."),
		generated(t, "ConfigMap", "/abs", "/abs/x"),
		generated(t, "ConfigMap", "", "cluster-scoped"),
		generated(t, "ConfigMap", ".git", "hooks"),
	}
	files, problems := units.Files(&api.Config{}, objs)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "a", "fleet")
	if _, err := output.WriteDir(context.Background(), dir, files, output.DirOptions{}); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Join(root, "a"))
	if len(entries) != 1 || entries[0].Name() != "fleet" {
		t.Errorf("written next to the folder: %v", entries)
	}
	for _, f := range files {
		if !filepath.IsLocal(f.Path) || strings.HasPrefix(f.Path, ".") || strings.Contains(f.Path, "/.") {
			t.Errorf("unsafe path %q", f.Path)
		}
		if _, err := os.Stat(filepath.Join(dir, f.Path)); err != nil {
			t.Errorf("%s: %v", f.Path, err)
		}
	}
}

func TestFilesRefusesTwoObjectsInOneFile(t *testing.T) {
	objs := []render.Object{generated(t, "ConfigMap", "tenant-a", "x/y"), generated(t, "ConfigMap", "tenant-a", "x_y")}
	_, problems := units.Files(&api.Config{}, objs)
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "would both be written to tenant-a/configmap-x_y.yaml") || !strings.HasPrefix(problems[0].Message, api.BugMessage) {
		t.Errorf("got %v, want one internal error", problems)
	}
}
