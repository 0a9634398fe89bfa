// Package examples_test runs every example the way its README says and
// compares the result with the expected output kept beside it. Run with
// -update to regenerate the expected output (and review the diff).
package examples_test

import (
	"bytes"
	"encoding/json"
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
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
	"github.com/computeplane-dev/computeplane-fn/pkg/summary"
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
			var j summary.JSON
			if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "summary.json"))), &j); err != nil {
				t.Fatal(err)
			}
			weakens, tenantChange := false, false
			for _, c := range j.Changes {
				weakens = weakens || c.Weakens
				tenantChange = tenantChange || c.Namespace != ""
			}
			// The convention of ci/README.md: a change whose folder is
			// named strengthening... weakens nothing, every other one
			// weakens isolation.
			if strengthening := strings.HasPrefix(filepath.Base(change), "strengthening"); weakens == strengthening {
				t.Errorf("weakens = %v for %s, want %v (examples/ci/README.md: folders named strengthening... must not weaken, every other must)", weakens, change, !strengthening)
			}
			// The posture comes before the file list; a change of a
			// tenant is drawn, a fleet-wide one (the guard, a definition)
			// has no tenant to draw.
			posture, files := strings.Index(md, "### Isolation posture"), strings.Index(md, "### Fleet folder")
			if posture < 0 || files < posture || (tenantChange && !strings.Contains(md[posture:files], "```mermaid\n")) {
				t.Errorf("the posture change is not stated, with its diagram, before the file list:\n%s", md)
			}
			if weakens && !strings.Contains(md[posture:files], "**⚠️ ") {
				t.Errorf("the weakening is not stated first in the posture section:\n%s", md)
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
// (docs/limits.md, "What is validated is what is applied").
func agree(t *testing.T, what, output string) {
	t.Helper()
	if err := readback.Agree([]byte(output)); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// kpt returns the kpt binary: $KPT (a path, or a name looked up on PATH),
// else kpt on PATH. The kpt tests never skip: without kpt they fail and say
// what to install.
func kpt(t *testing.T) string {
	t.Helper()
	name := os.Getenv("KPT")
	if name == "" {
		name = "kpt"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("kpt not found (%v): install kpt (tested with 1.0.0-beta.56; on Debian and Ubuntu the package google-cloud-cli-kpt of the Google Cloud CLI's apt repository), or set KPT to its path", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// runKpt runs kpt in dir the way examples/kpt/README.md does: with bin/
// first on PATH, where a Kptfile's `exec: computeplane-fn` and
// `--exec computeplane-fn` find the binary just built, and with HOME in a
// temporary folder, so that kpt writes nothing outside the test.
func runKpt(t *testing.T, dir string, args ...string) result {
	t.Helper()
	env := []string{
		"HOME=" + t.TempDir(),
		"PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	return run(t, dir, env, kpt(t), args...)
}

// copyPackage copies kpt/package to a temporary folder and returns the
// folder that holds the copy, named fleet/ as in the docs, and the copy.
func copyPackage(t *testing.T) (work, pkg string) {
	t.Helper()
	work = t.TempDir()
	pkg = filepath.Join(work, "fleet")
	testfs.CopyTree(t, filepath.Join("kpt", "package"), pkg)
	return work, pkg
}

// TestExamplesKpt runs the README's `kpt fn render --allow-exec` with the
// real kpt on a copy of the kpt package, compares the package with
// expected/, and renders it again: the second run must change nothing.
func TestExamplesKpt(t *testing.T) {
	work, pkg := copyPackage(t)
	if r := runKpt(t, work, "fn", "render", "--allow-exec", "fleet"); r.code != 0 {
		t.Fatalf("kpt fn render --allow-exec fleet: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got := readTree(t, pkg)
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
	if r := runKpt(t, work, "fn", "render", "--allow-exec", "fleet"); r.code != 0 {
		t.Fatalf("kpt fn render --allow-exec fleet, again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if diff := cmp.Diff(got, readTree(t, pkg)); diff != "" {
		t.Errorf("rendering the package twice changes it (-first +second):\n%s", diff)
	}
}

// TestExamplesKptEval runs `kpt fn eval` with the exec runtime on a copy of
// the kpt package, in the two ways docs/function.md gives: a
// ComputePlaneGenerator file (--fn-config) and key=value arguments, which
// kpt turns into a ConfigMap functionConfig. With the package's own config
// both give the package after render, expected/; the docs' key=value line
// gives what a ComputePlaneGenerator with the same fields gives; a
// misspelt key is refused, naming it, and the package is left as it was.
func TestExamplesKptEval(t *testing.T) {
	want := readTree(t, filepath.Join("kpt", "expected"))
	for _, tc := range []struct {
		name string
		args []string
	}{
		// docs/running.md; --exec given as a path.
		{"fn-config", []string{"--exec", binary, "--fn-config", filepath.Join("fleet", "fn-config.yaml")}},
		// README.md; --exec given as a name on PATH.
		{"key=value", []string{"--exec", "computeplane-fn", "--", "keepInputs=true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work, pkg := copyPackage(t)
			args := append([]string{"fn", "eval", "fleet"}, tc.args...)
			for range 2 {
				if r := runKpt(t, work, args...); r.code != 0 {
					t.Fatalf("kpt %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
				}
				if diff := cmp.Diff(want, readTree(t, pkg)); diff != "" {
					t.Fatalf("kpt %s: the package differs from kpt/expected (-want +got):\n%s", strings.Join(args, " "), diff)
				}
			}
		})
	}

	t.Run("key=value as a ComputePlaneGenerator", func(t *testing.T) {
		work, pkg := copyPackage(t)
		results := filepath.Join(work, "results")
		r := runKpt(t, work, "fn", "eval", "fleet", "--exec", "computeplane-fn", "--results-dir", results, "--", "keepInputs=true", "delivery=Platform", "guard.enabled=false")
		if r.code != 0 {
			t.Fatalf("kpt fn eval -- key=value: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		// delivery: Platform runs without Pod Security: the function warns
		// at the tenant, and kpt keeps the warning among its results.
		if !hasResult(kptResults(t, results), "warning", "Tenant", "") {
			t.Errorf("kpt fn eval -- delivery=Platform: no warning at a Tenant in kpt's results\n%s", r.stderr)
		}
		fromArgs := readTree(t, pkg)
		if _, ok := fromArgs["_cluster/validatingadmissionpolicy-computeplane-guard.yaml"]; ok {
			t.Errorf("guard.enabled=false: the guard's policy was rendered")
		}

		work, pkg = copyPackage(t)
		config := filepath.Join(work, "platform.yaml")
		writeFile(t, config, `apiVersion: fn.computeplane.dev/v1alpha1
kind: ComputePlaneGenerator
metadata:
  name: fleet
spec:
  keepInputs: true
  delivery: Platform
  guard:
    enabled: false
`)
		if r := runKpt(t, work, "fn", "eval", "fleet", "--exec", "computeplane-fn", "--fn-config", config); r.code != 0 {
			t.Fatalf("kpt fn eval --fn-config platform.yaml: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if diff := cmp.Diff(readTree(t, pkg), fromArgs); diff != "" {
			t.Errorf("key=value and the same ComputePlaneGenerator render differently (-fn-config +key=value):\n%s", diff)
		}
	})

	t.Run("a misspelt key", func(t *testing.T) {
		work, pkg := copyPackage(t)
		results := filepath.Join(work, "results")
		r := runKpt(t, work, "fn", "eval", "fleet", "--exec", "computeplane-fn", "--results-dir", results, "--", "keepInputs=true", "delivry=Platform")
		if r.code == 0 || !hasResult(kptResults(t, results), "error", "ConfigMap", "data.delivry") {
			t.Errorf("kpt fn eval -- delivry=Platform: exit %d, want a refusal at data.delivry of the ConfigMap\n%s%s", r.code, r.stdout, r.stderr)
		}
		if diff := cmp.Diff(readTree(t, filepath.Join("kpt", "package")), readTree(t, pkg)); diff != "" {
			t.Errorf("a refused run changed the package (-before +after):\n%s", diff)
		}
	})
}

// kptResult is one result of a function as kpt keeps it in the
// results.yaml of --results-dir (a kpt.dev/v1 FunctionResultList).
type kptResult struct {
	Severity    string `json:"severity"`
	ResourceRef struct {
		Kind string `json:"kind"`
	} `json:"resourceRef"`
	Field struct {
		Path string `json:"path"`
	} `json:"field"`
}

// kptResults reads the results of every function kpt ran from the
// results.yaml it wrote into dir.
func kptResults(t *testing.T, dir string) []kptResult {
	t.Helper()
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Results []kptResult `json:"results"`
		} `json:"items"`
	}
	if err := sigsyaml.Unmarshal([]byte(readFile(t, filepath.Join(dir, "results.yaml"))), &list); err != nil {
		t.Fatalf("kpt's results.yaml: %v", err)
	}
	if list.Kind != "FunctionResultList" {
		t.Fatalf("kpt's results.yaml: kind %q, want FunctionResultList", list.Kind)
	}
	var out []kptResult
	for _, item := range list.Items {
		out = append(out, item.Results...)
	}
	return out
}

// hasResult tells whether results hold one of the severity at an object of
// the kind, at the field path when one is given.
func hasResult(results []kptResult, severity, kind, field string) bool {
	for _, r := range results {
		if r.Severity == severity && r.ResourceRef.Kind == kind && (field == "" || r.Field.Path == field) {
			return true
		}
	}
	return false
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
