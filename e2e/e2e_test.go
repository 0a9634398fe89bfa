package e2e_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext/readback"
)

var update = flag.Bool("update", false, "rewrite examples/quickstart/expected.yaml")

// binary is the computeplane-fn built once for all tests of this package.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "computeplane-fn-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "computeplane-fn")
	build := exec.Command("go", "build", "-o", binary, "../cmd/computeplane-fn")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("failed to build computeplane-fn: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// kustomizeCLI finds the kustomize binary: $KUSTOMIZE, then ../bin/kustomize
// (make tools). In CI a missing kustomize fails the test; elsewhere it skips.
func kustomizeCLI(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("KUSTOMIZE"), "../bin/kustomize"} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				return abs
			}
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("kustomize is not installed: run make tools (CI must run this test)")
	}
	t.Skip("kustomize is not installed: run make tools")
	return ""
}

// copyExample copies an example folder into a temp dir and points the
// function annotation of its config at the freshly built binary.
func copyExample(t *testing.T, name string) string {
	t.Helper()
	dst := t.TempDir()
	testfs.CopyTree(t, filepath.Join("..", "examples", name), dst)
	cfg := filepath.Join(dst, "config.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte("path: ../../bin/computeplane-fn"), []byte("path: "+binary))
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func run(t *testing.T, dir string, stdin []byte, name string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

func standalone(t *testing.T, dir string) string {
	t.Helper()
	out, stderr, err := run(t, dir, nil, binary, "config.yaml")
	if err != nil {
		t.Fatalf("standalone run failed: %v\n%s", err, stderr)
	}
	return out
}

// TestQuickstartGolden keeps examples/quickstart/expected.yaml, the output
// the README shows, honest.
func TestQuickstartGolden(t *testing.T) {
	got := standalone(t, copyExample(t, "quickstart"))
	golden := filepath.Join("..", "examples", "quickstart", "expected.yaml")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./e2e -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("quickstart output differs from expected.yaml (-want +got):\n%s", diff)
	}
}

// TestKustomizeCLIGenerator runs the real kustomize CLI over the quickstart
// example, where the function is a generator: kustomize hands it no items,
// so everything comes from spec.inputs. The output must be byte-identical to
// the standalone run.
func TestKustomizeCLIGenerator(t *testing.T) {
	kustomize := kustomizeCLI(t)
	dir := copyExample(t, "quickstart")
	want := standalone(t, dir)
	got, stderr, err := run(t, dir, nil, kustomize, "build", "--enable-alpha-plugins", "--enable-exec", ".")
	if err != nil {
		t.Fatalf("kustomize build failed: %v\n%s", err, stderr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kustomize build differs from the standalone CLI (-standalone +kustomize):\n%s", diff)
	}
	// Without --enable-exec kustomize refuses the exec function; the
	// README warns about it.
	if out, _, err := run(t, dir, nil, kustomize, "build", "--enable-alpha-plugins", "."); err == nil && strings.Contains(out, "HelmRelease") {
		t.Errorf("kustomize ran the exec function without --enable-exec")
	}
}

// TestKrustyGenerator runs the same build in-process with the kustomize
// library (krusty on the real filesystem: the in-memory one cannot exec).
func TestKrustyGenerator(t *testing.T) {
	dir := copyExample(t, "quickstart")
	want := standalone(t, dir)
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified // the kustomization says fifo
	opts.PluginConfig = types.EnabledPluginConfig(types.BploUseStaticallyLinked)
	opts.PluginConfig.FnpLoadingOptions.EnableExec = true
	opts.PluginConfig.FnpLoadingOptions.WorkingDir = dir
	resMap, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("krusty build failed: %v", err)
	}
	got, err := resMap.AsYaml()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("krusty build differs from the standalone CLI (-standalone +krusty):\n%s", diff)
	}
}

// resourceList packs the example's config and input files into a
// ResourceList, each item with its file in the path annotation, the way
// kpt sends a package.
func resourceList(t *testing.T, dir string, cfg []byte, items []*yaml.RNode) []byte {
	t.Helper()
	fc, err := yaml.Parse(string(cfg))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := kio.ByteWriter{Writer: &buf, KeepReaderAnnotations: true, WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind, FunctionConfig: fc}
	if err := w.Write(items); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func packageItems(t *testing.T, dir string, folders ...string) []*yaml.RNode {
	t.Helper()
	var items []*yaml.RNode
	for _, folder := range folders {
		files, _ := filepath.Glob(filepath.Join(dir, folder, "*.yaml"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(dir, f)
			nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), SetAnnotations: map[string]string{kioutil.PathAnnotation: rel}, OmitReaderAnnotations: true}).Read()
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, nodes...)
		}
	}
	return items
}

// items runs the binary as a KRM function and returns the output items.
func krm(t *testing.T, dir string, rl []byte) []*yaml.RNode {
	t.Helper()
	out, stderr, err := run(t, dir, rl, binary)
	if err != nil {
		t.Fatalf("KRM run failed: %v\n%s", err, stderr)
	}
	items, err := (&kio.ByteReader{Reader: strings.NewReader(out), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatalf("KRM output is not a ResourceList: %v", err)
	}
	return items
}

func stream(t *testing.T, items []*yaml.RNode) string {
	t.Helper()
	var buf bytes.Buffer
	for _, it := range items {
		for _, k := range []string{kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.IdAnnotation, kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation, kioutil.LegacyIdAnnotation} {
			if _, err := it.Pipe(yaml.ClearAnnotation(k)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := (kio.ByteWriter{Writer: &buf}).Write(items); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestKRMItemsMatchStandalone sends the quickstart inputs as ResourceList
// items (config without spec.inputs): the items must be the standalone
// output, each generated one with its path annotation.
func TestKRMItemsMatchStandalone(t *testing.T) {
	dir := copyExample(t, "quickstart")
	want := standalone(t, dir)
	cfg := []byte("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata:\n  name: fleet\nspec:\n  delivery: Direct\n")
	items := krm(t, dir, resourceList(t, dir, cfg, packageItems(t, dir, "definitions", "tenants", "apps")))
	for _, it := range items {
		path := it.GetAnnotations()[kioutil.PathAnnotation]
		ns := it.GetNamespace()
		if ns == "" {
			ns = "_cluster" // cluster-scoped: the guard
		}
		wantPath := ns + "/" + strings.ToLower(it.GetKind()) + "-" + it.GetName() + ".yaml"
		if path != wantPath {
			t.Errorf("%s %s/%s: path annotation %q, want %q", it.GetKind(), it.GetNamespace(), it.GetName(), path, wantPath)
		}
	}
	if diff := cmp.Diff(want, stream(t, items)); diff != "" {
		t.Errorf("KRM items differ from the standalone CLI (-standalone +krm):\n%s", diff)
	}
}

// TestKptInPlaceIdempotent runs the function the way `kpt fn eval --exec`
// runs it on a package that holds its inputs (keepInputs: true), then runs
// it again on its own output: the second run must change nothing.
func TestKptInPlaceIdempotent(t *testing.T) {
	dir := copyExample(t, "quickstart")
	cfg := []byte("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata:\n  name: fleet\nspec:\n  keepInputs: true\n")
	first := krm(t, dir, resourceList(t, dir, cfg, packageItems(t, dir, "definitions", "tenants", "apps")))
	firstText := stream(t, first)
	second := krm(t, dir, resourceList(t, dir, cfg, krm(t, dir, resourceList(t, dir, cfg, packageItems(t, dir, "definitions", "tenants", "apps")))))
	if diff := cmp.Diff(firstText, stream(t, second)); diff != "" {
		t.Errorf("a second run on the function's own output changed it (-first +second):\n%s", diff)
	}
	for _, kind := range []string{"ApplicationDefinition", "Tenant", "JupyterHub", "HelmRelease", "ArtifactGenerator"} {
		if !strings.Contains(firstText, "kind: "+kind+"\n") {
			t.Errorf("kpt output lacks a %s", kind)
		}
	}
}

// TestRefusalExitsNonZero checks the exit status and stderr of a refused
// run in both modes, and that the KRM output then holds no items.
func TestRefusalExitsNonZero(t *testing.T) {
	dir := copyExample(t, "quickstart")
	bad := "apiVersion: apps.cozystack.io/v1alpha1\nkind: JupyterHub\nmetadata:\n  name: lab\n  namespace: tenant-acme-dev\nspec: {}\n"
	if err := os.WriteFile(filepath.Join(dir, "apps", "bad.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := run(t, dir, nil, binary, "config.yaml")
	if code := exitCode(err); code != 1 {
		t.Fatalf("standalone exit code %d, want 1", code)
	}
	if out != "" {
		t.Errorf("a refused standalone run printed output:\n%s", out)
	}
	for _, want := range []string{"apps/bad.yaml", "JupyterHub tenant-acme-dev/lab", "metadata.namespace", "has none"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	cfg, _ := os.ReadFile(filepath.Join(dir, "config.yaml"))
	out, stderr, err = run(t, dir, resourceList(t, dir, cfg, nil), binary)
	if code := exitCode(err); code != 1 {
		t.Fatalf("KRM exit code %d, want 1", code)
	}
	if !strings.Contains(stderr, "apps/bad.yaml") {
		t.Errorf("KRM stderr lacks the file:\n%s", stderr)
	}
	rl, err := yaml.Parse(out)
	if err != nil {
		t.Fatalf("KRM refusal output is not YAML: %v", err)
	}
	if items, _ := rl.Pipe(yaml.Lookup("items")); items != nil && len(items.Content()) > 0 {
		t.Errorf("a refused KRM run emitted items")
	}
	results, _ := rl.Pipe(yaml.Lookup("results"))
	if results == nil {
		t.Fatalf("a refused KRM run has no results:\n%s", out)
	}
	text := results.MustString()
	for _, want := range []string{"severity: error", "resourceRef:", "kind: JupyterHub", "field:", "path: metadata.namespace", "file:", "path: apps/bad.yaml"} {
		if !strings.Contains(text, want) {
			t.Errorf("results lack %q:\n%s", want, text)
		}
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// TestReadmeShowsRealOutput keeps the release docs/inputs-outputs.md shows
// identical to a document of the quickstart's real output.
func TestReadmeShowsRealOutput(t *testing.T) {
	readme, err := os.ReadFile("../docs/inputs-outputs.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "A routed app's release")
	if !ok {
		t.Fatal("docs/inputs-outputs.md lost its routed release example")
	}
	_, block, _ := strings.Cut(after, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	got := standalone(t, copyExample(t, "quickstart"))
	for _, doc := range strings.Split(got, "---\n") {
		if doc == block {
			return
		}
	}
	t.Errorf("the routed release of docs/inputs-outputs.md is not in the quickstart output; update it:\n%s", block)
}

// TestYAML11ReadersEveryMode renders fixtures/yaml11-strings, whose values,
// keys, labels, names and knobs are strings that YAML 1.1 readers take for
// booleans or numbers, with the built binary in every mode: stdout, the
// fleet folder, kustomize's generator and a KRM ResourceList. Every object
// must read back through sigs.k8s.io/yaml (what Flux and kubectl apply) as
// go-yaml v3 reads it.
func TestYAML11ReadersEveryMode(t *testing.T) {
	dir := t.TempDir()
	inputs := []string{"input-defs.yaml", "input-tenants.yaml", "input-apps.yaml"}
	for _, name := range append([]string{"config.yaml"}, inputs...) {
		data, err := os.ReadFile(filepath.Join("..", "fixtures", "yaml11-strings", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "config.yaml" {
			data = bytes.Replace(data, []byte("    config.kubernetes.io/local-config: \"true\"\n"),
				[]byte("    config.kubernetes.io/local-config: \"true\"\n    config.kubernetes.io/function: |\n      exec:\n        path: "+binary+"\n"), 1)
			data = bytes.Replace(data, []byte("spec:\n"), []byte("spec:\n  inputs: ["+strings.Join(inputs, ", ")+"]\n"), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("generators:\n- config.yaml\nsortOptions:\n  order: fifo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := standalone(t, dir)
	if !strings.Contains(want, "region: \"NO\"\n") {
		t.Fatalf("the fixture's values are not in the output:\n%s", want)
	}
	if err := readback.Agree([]byte(want)); err != nil {
		t.Errorf("stdout: %v", err)
	}

	if _, stderr, err := run(t, dir, nil, binary, "--output-dir", "out", "config.yaml"); err != nil {
		t.Fatalf("--output-dir: %v\n%s", err, stderr)
	}
	files := 0
	err := filepath.WalkDir(filepath.Join(dir, "out"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		if err := readback.Agree(data); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("fleet folder: %d files, %v", files, err)
	}

	got, stderr, err := run(t, dir, nil, kustomizeCLI(t), "build", "--enable-alpha-plugins", "--enable-exec", ".")
	if err != nil {
		t.Fatalf("kustomize build failed: %v\n%s", err, stderr)
	}
	// kustomize writes the inputs kept with keepInputs in its own way (keys
	// sorted, comments and flow style dropped); TestKustomizeCLIGenerator
	// compares the bytes. Here only the meaning counts.
	if !strings.Contains(got, "region: \"NO\"\n") {
		t.Errorf("kustomize did not write the fixture's values:\n%s", got)
	}
	if err := readback.Agree([]byte(got)); err != nil {
		t.Errorf("kustomize: %v", err)
	}

	cfg, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	items := krm(t, dir, resourceList(t, dir, cfg, nil))
	if err := readback.Agree([]byte(stream(t, items))); err != nil {
		t.Errorf("KRM: %v", err)
	}
}
