package fn_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/fn"
	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
)

// TestInputsRelativeToTheConfigUnderKptRender plays kpt fn render on a
// package whose config sits in a subfolder (Kptfile configPath:
// gen/config.yaml): kpt runs the function in the folder kpt was started in
// and names the package on every item and on the config. spec.inputs are
// relative to the config's folder; the items that are those files are read
// once and come back as they came, as does the config, without keepInputs.
func TestInputsRelativeToTheConfigUnderKptRender(t *testing.T) {
	pkg := t.TempDir()
	for _, sub := range []string{"definitions", "tenants", "apps"} {
		testfs.CopyTree(t, filepath.Join("..", "examples", "quickstart", sub), filepath.Join(pkg, "gen", sub))
	}
	config := "apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata:\n  name: fleet\nspec:\n  inputs: [definitions/, tenants/, apps/]\n  delivery: Direct\n"
	if err := os.WriteFile(filepath.Join(pkg, "gen", "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	items, err := (&kio.LocalPackageReader{PackagePath: pkg}).Read()
	if err != nil {
		t.Fatal(err)
	}
	var fc *yaml.RNode
	for _, item := range items {
		if err := item.PipeE(yaml.SetAnnotation("internal.config.kubernetes.io/package-path", pkg)); err != nil {
			t.Fatal(err)
		}
		if item.GetKind() == "ComputePlaneGenerator" {
			fc = item.Copy()
		}
	}
	var in bytes.Buffer
	if err := (kio.ByteWriter{Writer: &in, KeepReaderAnnotations: true, WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind, FunctionConfig: fc}).Write(items); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// kpt's working directory: anywhere but the package.
	if err := fn.Execute(fn.Processor{Dir: t.TempDir()}, &in, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got, err := (&kio.ByteReader{Reader: &out, PreserveSeqIndent: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]int{}
	for _, item := range got {
		paths[item.GetAnnotations()[kioutil.PathAnnotation]]++
	}
	for _, want := range []string{"gen/config.yaml", "gen/definitions/jupyterhub.yaml", "gen/tenants/tenants.yaml", "gen/apps/acme.yaml", "tenant-acme/helmrelease-jupyterhub-research.yaml"} {
		if paths[want] == 0 {
			t.Errorf("no item of %s in the output; paths: %v", want, paths)
		}
	}
	if n := paths["gen/definitions/jupyterhub.yaml"]; n != 1 {
		t.Errorf("gen/definitions/jupyterhub.yaml comes back %d times, want once", n)
	}
	if strings.Contains(out.String(), "defined twice") {
		t.Errorf("an input was read twice:\n%s", out.String())
	}
}
