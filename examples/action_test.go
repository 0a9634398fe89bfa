package examples_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
	"github.com/computeplane-dev/computeplane-fn/pkg/summary"
)

// action is the part of action.yml the tests read.
type action struct {
	Inputs map[string]struct {
		Required bool   `json:"required"`
		Default  string `json:"default"`
	} `json:"inputs"`
	Runs struct {
		Using string `json:"using"`
		Steps []struct {
			Env map[string]string `json:"env"`
			Run string            `json:"run"`
		} `json:"steps"`
	} `json:"runs"`
}

type workflow struct {
	Jobs map[string]struct {
		Steps []struct {
			Uses string            `json:"uses"`
			With map[string]string `json:"with"`
			Run  string            `json:"run"`
		} `json:"steps"`
	} `json:"jobs"`
}

func readYAML(t *testing.T, file string, v any) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return string(data)
}

// TestActionAndTheCIExample: the CI example runs the project's action,
// pinned to a release (a tag, with the same version, or a commit), with
// every input it sets declared and every required one set; no workflow
// step runs @latest; and every input of the action is used by a step.
func TestActionAndTheCIExample(t *testing.T) {
	var a action
	text := readYAML(t, "../action.yml", &a)
	if a.Runs.Using != "composite" || len(a.Runs.Steps) == 0 {
		t.Fatalf("action.yml: a %q action with %d steps, want a composite one", a.Runs.Using, len(a.Runs.Steps))
	}
	for name := range a.Inputs {
		if !strings.Contains(text, "${{ inputs."+name+" }}") {
			t.Errorf("action.yml: input %s is used by no step", name)
		}
	}
	for _, step := range a.Runs.Steps {
		for _, script := range regexp.MustCompile(`\$GITHUB_ACTION_PATH/([^"]+)`).FindAllStringSubmatch(step.Run, -1) {
			data, err := os.ReadFile(filepath.Join("..", script[1]))
			if err != nil {
				t.Errorf("action.yml runs %s: %v", script[1], err)
				continue
			}
			for env := range step.Env {
				if !strings.Contains(string(data), env) {
					t.Errorf("action.yml gives %s %s, which it does not read", script[1], env)
				}
			}
		}
	}

	var w workflow
	wtext := readYAML(t, filepath.Join("ci", ".github", "workflows", "fleet.yaml"), &w)
	if strings.Contains(wtext, "@latest") || strings.Contains(wtext, "@main") {
		t.Error("the CI example's workflow runs @latest or @main; pin a release")
	}
	pinned := regexp.MustCompile(`^computeplane-dev/computeplane-fn@(v[0-9]+\.[0-9]+\.[0-9]+|[0-9a-f]{40})$`)
	uses := 0
	for _, job := range w.Jobs {
		for _, step := range job.Steps {
			if !strings.HasPrefix(step.Uses, "computeplane-dev/computeplane-fn") {
				continue
			}
			uses++
			m := pinned.FindStringSubmatch(step.Uses)
			if m == nil {
				t.Errorf("the CI example uses %s: pin a release tag or a commit", step.Uses)
				continue
			}
			if strings.HasPrefix(m[1], "v") && step.With["version"] != m[1] {
				t.Errorf("the CI example pins the action at %s and installs version %q: the same release, please", m[1], step.With["version"])
			}
			for key := range step.With {
				if _, ok := a.Inputs[key]; !ok {
					t.Errorf("the CI example sets %s, which action.yml does not declare", key)
				}
			}
			for name, in := range a.Inputs {
				if _, set := step.With[name]; in.Required && !set {
					t.Errorf("the CI example does not set the required input %s", name)
				}
			}
		}
		for _, step := range job.Steps {
			if strings.Contains(step.Run, "jq") && strings.Contains(step.Run, "apiVersion") &&
				!strings.Contains(step.Run, `.apiVersion == "`+summary.JSONAPIVersion+`"`) {
				t.Errorf("the CI example's bot step checks another apiVersion than %s", summary.JSONAPIVersion)
			}
		}
	}
	if uses != 1 {
		t.Errorf("the CI example uses the action %d times, want once", uses)
	}
	if !strings.Contains(wtext, `.apiVersion == "`+summary.JSONAPIVersion+`"`) {
		t.Errorf("the CI example's bot step does not check the summary's apiVersion %s", summary.JSONAPIVersion)
	}
}

// TestActionScripts runs the action's scripts as the action does: install
// a release from a folder laid out like a GitHub release (the binary and
// SHA256SUMS), refusing a tampered binary, latest and a version the binary
// does not say; then check the CI example with it, as its workflow does.
func TestActionScripts(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Fatalf("the action runs on Linux and macOS runners; this is %s", runtime.GOOS)
	}
	const version = "v0.0.1"
	releases := t.TempDir()
	asset := "computeplane-fn-" + runtime.GOOS + "-" + runtime.GOARCH
	bin := filepath.Join(releases, version, asset)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-ldflags", "-X github.com/computeplane-dev/computeplane-fn/internal/version.version="+version, "-o", bin, "../cmd/computeplane-fn")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	sums := hex.EncodeToString(sum[:]) + "  " + asset + "\n"
	if err := os.WriteFile(filepath.Join(releases, version, "SHA256SUMS"), []byte(sums), 0o644); err != nil {
		t.Fatal(err)
	}
	install := func(v string) (result, string) {
		t.Helper()
		runner := t.TempDir()
		path := filepath.Join(runner, "github_path")
		r := run(t, ".", []string{"COMPUTEPLANE_FN_VERSION=" + v, "COMPUTEPLANE_FN_RELEASES=file://" + releases, "RUNNER_TEMP=" + runner, "GITHUB_PATH=" + path}, "../tools/action/install.sh")
		added, _ := os.ReadFile(path)
		return r, strings.TrimSpace(string(added))
	}

	r, added := install(version)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "computeplane-fn "+version+" ") {
		t.Fatalf("install %s: %+v", version, r)
	}
	if _, err := os.Stat(filepath.Join(added, "computeplane-fn")); err != nil {
		t.Fatalf("install put %q on GITHUB_PATH: %v", added, err)
	}
	for _, tc := range []struct{ version, want string }{
		{"latest", "must be a release tag"},
		{"", "must be a release tag"},
		{"v9.9.9", "failed to download"},
	} {
		if r, _ := install(tc.version); r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("install %q: %+v, want a failure saying %q", tc.version, r, tc.want)
		}
	}
	// The binary says another version than the release it came as.
	const other = "v0.0.2"
	if err := os.MkdirAll(filepath.Join(releases, other), 0o755); err != nil {
		t.Fatal(err)
	}
	testfs.CopyTree(t, filepath.Join(releases, version), filepath.Join(releases, other))
	if r, _ := install(other); r.code == 0 || !strings.Contains(r.stderr, "the binary of "+other+" says it is") {
		t.Errorf("install a binary that says another version: %+v", r)
	}
	// A tampered binary.
	if err := os.WriteFile(bin, append(data, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if r, _ := install(version); r.code == 0 || !strings.Contains(r.stderr, "does not match SHA256SUMS") {
		t.Errorf("install a tampered binary: %+v", r)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}

	// The check of the CI example, with the inputs its workflow gives.
	var w workflow
	readYAML(t, filepath.Join("ci", ".github", "workflows", "fleet.yaml"), &w)
	with := map[string]string{}
	for _, job := range w.Jobs {
		for _, step := range job.Steps {
			if strings.HasPrefix(step.Uses, "computeplane-dev/computeplane-fn@") {
				with = step.With
			}
		}
	}
	repo := t.TempDir()
	for _, sub := range []string{"fleet", "rendered"} {
		testfs.CopyTree(t, filepath.Join("ci", sub), filepath.Join(repo, sub))
	}
	env := []string{"PATH=" + added + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, in := range []string{"mode", "config", "output-dir", "summary", "summary-json"} {
		env = append(env, "COMPUTEPLANE_FN_"+strings.ToUpper(strings.ReplaceAll(in, "-", "_"))+"="+with[in])
	}
	script, err := filepath.Abs("../tools/action/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	r = run(t, repo, env, script)
	if r.code != 0 || !strings.Contains(r.stderr, "is up to date") {
		t.Fatalf("run.sh on the CI example: %+v", r)
	}
	got, err := os.ReadFile(filepath.Join(repo, with["summary"]))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, filepath.Join("ci", "expected-summary.md"), string(got))
	if _, err := os.Stat(filepath.Join(repo, with["summary-json"])); err != nil {
		t.Errorf("no JSON summary: %v", err)
	}
	// Out of date: the check fails with the diff.
	if err := os.WriteFile(filepath.Join(repo, "rendered", "stray.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var removed []string
	entries, _ := os.ReadDir(filepath.Join(repo, "rendered"))
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "tenant-") {
			removed = append(removed, e.Name())
		}
	}
	slices.Sort(removed)
	if len(removed) == 0 {
		t.Fatal("the CI example's rendered/ has no tenant folder")
	}
	if err := os.RemoveAll(filepath.Join(repo, "rendered", removed[0])); err != nil {
		t.Fatal(err)
	}
	if r := run(t, repo, env, script); r.code != 1 || !strings.Contains(r.stderr, "out of date") {
		t.Errorf("run.sh on an out-of-date fleet: %+v, want exit 1", r)
	}
	if r := run(t, repo, append(env, "COMPUTEPLANE_FN_MODE=apply"), script); r.code != 2 || !strings.Contains(r.stderr, "mode must be check or render") {
		t.Errorf("run.sh with mode apply: %+v", r)
	}
}
