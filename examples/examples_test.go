// Package examples_test runs every example the way its README says and
// compares the result with the expected output kept beside it. Run with
// -update to regenerate the expected output (and review the diff).
package examples_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext/readback"
)

var update = flag.Bool("update", false, "regenerate the expected output of the examples")

// binary is bin/computeplane-fn at the top of the project, where the
// READMEs and the kustomize example expect it; TestMain builds it so that
// the examples never run a stale binary.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	if err := buildBinary(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func buildBinary() error {
	bin, err := filepath.Abs("../bin")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	// Build next to the target and rename, so that a concurrent `make
	// build` or test never sees half a binary.
	tmp, err := os.CreateTemp(bin, ".computeplane-fn-*")
	if err != nil {
		return err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	// The Makefile passes its version stamp, so that bin/computeplane-fn
	// --version tells the truth after make test too.
	args := []string{"build", "-o", tmp.Name()}
	if ldflags := os.Getenv("COMPUTEPLANE_FN_LDFLAGS"); ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	cmd := exec.Command(goTool, append(args, "../cmd/computeplane-fn")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("failed to build computeplane-fn: %v\n%s", err, out)
	}
	binary = filepath.Join(bin, "computeplane-fn")
	return os.Rename(tmp.Name(), binary)
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs a command in dir with extra environment variables.
func run(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return result{exit.ExitCode(), stdout.String(), stderr.String()}
	case err != nil:
		t.Fatalf("%s: %v", name, err)
	}
	return result{0, stdout.String(), stderr.String()}
}

// expect compares got with the expected file, or rewrites it with -update.
func expect(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./examples -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", file, diff)
	}
}

// readTree reads every file under dir by its slash path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExamplesStream runs the examples whose README renders to stdout:
// `../../bin/computeplane-fn config.yaml` in the example's folder.
func TestExamplesStream(t *testing.T) {
	for _, name := range []string{"quickstart", "platform-delivery"} {
		t.Run(name, func(t *testing.T) {
			r := run(t, name, nil, binary, "config.yaml")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			expect(t, filepath.Join(name, "expected.yaml"), r.stdout)
			agree(t, name, r.stdout)
		})
	}
}

// TestExamplesCI runs the CI example's script on a copy of the example:
// the committed rendered/ folder must pass the gate, the summary must match,
// and the gate must catch a hand edit, a removed tenant and nothing else.
func TestExamplesCI(t *testing.T) {
	env := []string{"COMPUTEPLANE_FN=" + binary}
	if *update {
		if r := run(t, "ci", env, "sh", "fleet.sh", "render"); r.code != 0 {
			t.Fatalf("render: exit %d: %s", r.code, r.stderr)
		}
	}
	dir := t.TempDir()
	testfs.CopyTree(t, "ci", dir)
	os.Remove(filepath.Join(dir, "summary.md"))
	os.Remove(filepath.Join(dir, "summary.json"))

	r := run(t, dir, env, "sh", "fleet.sh", "check")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("the committed rendered/ folder fails the gate (run go test ./examples -update): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, filepath.Join("ci", "expected-summary.md"), string(summary))
	expect(t, filepath.Join("ci", "expected-summary.json"), readFile(t, filepath.Join(dir, "summary.json")))
	for name, content := range readTree(t, filepath.Join(dir, "rendered")) {
		if strings.HasSuffix(name, ".yaml") {
			agree(t, name, content)
		}
	}

	// A foreign file is ignored; a hand edit is caught and named.
	writeFile(t, filepath.Join(dir, "rendered", "README.md"), "Rendered by fleet.sh; do not edit.\n")
	edited := filepath.Join(dir, "rendered", "tenant-globex", "helmrelease-postgres-orders.yaml")
	orig := readFile(t, edited)
	writeFile(t, edited, strings.Replace(orig, "replicas: 3", "replicas: 1", 1))
	r = run(t, dir, env, "sh", "fleet.sh", "check")
	wantDiff := "--- a/tenant-globex/helmrelease-postgres-orders.yaml\n+++ b/tenant-globex/helmrelease-postgres-orders.yaml\n"
	if r.code != 1 || !strings.HasPrefix(r.stdout, wantDiff) || !strings.Contains(r.stdout, "-    replicas: 1\n+    replicas: 3\n") {
		t.Errorf("check after a hand edit: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, dir, env, "sh", "fleet.sh", "render"); r.code != 0 || readFile(t, edited) != orig {
		t.Errorf("render did not restore the hand edit: exit %d %s", r.code, r.stderr)
	}

	// Removing a tenant: the check names its files, render prunes them.
	if err := os.Remove(filepath.Join(dir, "fleet", "apps", "globex.yaml")); err != nil {
		t.Fatal(err)
	}
	tenants := filepath.Join(dir, "fleet", "tenants", "tenants.yaml")
	writeFile(t, tenants, strings.Split(readFile(t, tenants), "---\n")[0])
	r = run(t, dir, env, "sh", "fleet.sh", "check")
	if r.code != 1 || !strings.Contains(r.stdout, "--- a/tenant-globex/helmrelease-postgres-orders.yaml\n+++ /dev/null\n") {
		t.Errorf("check after removing a tenant: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if summary := readFile(t, filepath.Join(dir, "summary.md")); !strings.Contains(summary, "| `tenant-globex` | removed |") ||
		!strings.Contains(summary, "- `tenant-globex` (globex)\n  - the tenant is removed.") {
		t.Errorf("the summary does not report the removed tenant:\n%s", summary)
	}
	if r := run(t, dir, env, "sh", "fleet.sh", "render"); r.code != 0 {
		t.Fatalf("render: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "rendered", "tenant-globex")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the removed tenant's folder is still there")
	}
	if readFile(t, filepath.Join(dir, "rendered", "README.md")) == "" {
		t.Errorf("the foreign README.md did not survive")
	}
	if r := run(t, dir, env, "sh", "fleet.sh", "check"); r.code != 0 {
		t.Errorf("check after render: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestExamplesCIChanges applies each change of ci/changes/<name> (its
// files replace those of the same path in a copy of the example) and runs
// the gate: the Markdown and JSON summaries must be the expected ones, the
// posture change stated before any file list.
func TestExamplesCIChanges(t *testing.T) {
	env := []string{"COMPUTEPLANE_FN=" + binary}
	changes, err := filepath.Glob(filepath.Join("ci", "changes", "*"))
	if err != nil || len(changes) == 0 {
		t.Fatalf("no changes in ci/changes: %v", err)
	}
	for _, change := range changes {
		t.Run(filepath.Base(change), func(t *testing.T) {
			dir := t.TempDir()
			testfs.CopyTree(t, "ci", dir)
			testfs.CopyTree(t, filepath.Join(change, "fleet"), filepath.Join(dir, "fleet"))
			r := run(t, dir, env, "sh", "fleet.sh", "check")
			if r.code != 1 || r.stdout == "" {
				t.Fatalf("the gate passes a changed fleet: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			md := readFile(t, filepath.Join(dir, "summary.md"))
			expect(t, filepath.Join(change, "expected-summary.md"), md)
			expect(t, filepath.Join(change, "expected-summary.json"), readFile(t, filepath.Join(dir, "summary.json")))
			posture, files := strings.Index(md, "### Isolation posture"), strings.Index(md, "### Fleet folder")
			if posture < 0 || files < posture || !strings.Contains(md[posture:files], "```mermaid\n") {
				t.Errorf("the posture change is not stated, with its diagram, before the file list:\n%s", md)
			}
		})
	}
}

// kustomize returns the kustomize binary: $KUSTOMIZE or bin/kustomize
// (make tools installs it). Without one the test is skipped, except in CI.
func kustomize(t *testing.T) string {
	t.Helper()
	path := os.Getenv("KUSTOMIZE")
	if path == "" {
		path, _ = filepath.Abs("../bin/kustomize")
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kustomize not found at %s; CI must run make tools", path)
		}
		t.Skipf("kustomize not found at %s (run make tools, or set KUSTOMIZE)", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestExamplesKustomizeGenerator runs the README's
// `kustomize build --enable-alpha-plugins --enable-exec kustomize-generator`.
func TestExamplesKustomizeGenerator(t *testing.T) {
	r := run(t, ".", nil, kustomize(t), "build", "--enable-alpha-plugins", "--enable-exec", "kustomize-generator")
	if r.code != 0 {
		t.Fatalf("kustomize build: exit %d: %s", r.code, r.stderr)
	}
	expect(t, filepath.Join("kustomize-generator", "expected.yaml"), r.stdout)
	agree(t, "kustomize build", r.stdout)
}

// agree checks that every object of an output reads back through
// sigs.k8s.io/yaml, as Flux and kubectl read it, as the function read it
// (SPEC 7: what is validated is what is applied).
func agree(t *testing.T, what, output string) {
	t.Helper()
	if err := readback.Agree([]byte(output)); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// TestExamplesKpt renders a copy of the kpt package the way
// `kpt fn render --allow-exec` does, compares the package with expected/,
// and renders it again: the second run must change nothing.
func TestExamplesKpt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "package")
	testfs.CopyTree(t, filepath.Join("kpt", "package"), dir)
	kptRender(t, dir)
	got := readTree(t, dir)
	if *update {
		writeTree(t, filepath.Join("kpt", "expected"), got)
	}
	want := readTree(t, filepath.Join("kpt", "expected"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the rendered package differs from kpt/expected (-want +got):\n%s", diff)
	}
	for name, content := range got {
		if strings.HasSuffix(name, ".yaml") {
			agree(t, name, content)
		}
	}
	kptRender(t, dir)
	if diff := cmp.Diff(got, readTree(t, dir)); diff != "" {
		t.Errorf("rendering the package twice changes it (-first +second):\n%s", diff)
	}
}

// kptRender emulates `kpt fn render --allow-exec` on a package whose
// Kptfile pipeline runs exec mutators: kpt cannot be installed with this
// project's Go toolchain, so the test does what kpt does, with the same kyaml
// package reader and writer kpt uses. It reads every KRM file of the package
// (the Kptfile included) with path and index annotations, sends them to each
// mutator as a ResourceList whose functionConfig is the item at configPath,
// and writes the returned items back by their path annotation, deleting the
// files that no item comes from any more.
func kptRender(t *testing.T, pkg string) {
	t.Helper()
	kf, err := yaml.ReadFile(filepath.Join(pkg, "Kptfile"))
	if err != nil {
		t.Fatal(err)
	}
	var pipeline struct {
		Pipeline struct {
			Mutators []struct {
				Exec       string `yaml:"exec"`
				ConfigPath string `yaml:"configPath"`
			} `yaml:"mutators"`
		} `yaml:"pipeline"`
	}
	if err := kf.Document().Decode(&pipeline); err != nil {
		t.Fatal(err)
	}
	rw := &kio.LocalPackageReadWriter{
		PackagePath:       pkg,
		MatchFilesGlob:    append([]string{"Kptfile"}, kio.MatchAll...),
		PreserveSeqIndent: true,
		WrapBareSeqNode:   true,
	}
	items, err := rw.Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range pipeline.Pipeline.Mutators {
		var cfg *yaml.RNode
		for _, item := range items {
			if p, _, _ := kioutil.GetFileAnnotations(item); p == m.ConfigPath {
				cfg = item
			}
		}
		if cfg == nil {
			t.Fatalf("configPath %s: no such item in the package", m.ConfigPath)
		}
		var in bytes.Buffer
		w := kio.ByteWriter{Writer: &in, KeepReaderAnnotations: true, WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind, FunctionConfig: cfg}
		if err := w.Write(items); err != nil {
			t.Fatal(err)
		}
		// The Kptfile names the function as kpt finds it, on PATH: here
		// that is the binary just built.
		cmd := exec.Command(m.Exec)
		if m.Exec == "computeplane-fn" {
			cmd = exec.Command(binary)
		}
		cmd.Stdin = &in
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", m.Exec, err, stderr.String())
		}
		items, err = (&kio.ByteReader{Reader: &out, OmitReaderAnnotations: true}).Read()
		if err != nil {
			t.Fatalf("%s: the output is not a ResourceList: %v", m.Exec, err)
		}
	}
	if err := rw.Write(items); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
