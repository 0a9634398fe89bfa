package examples_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
	"github.com/computeplane-dev/computeplane-fn/pkg/summary"
)

// gitEnv keeps the user's and the system's Git configuration out of the
// tests' repositories, and names the author.
var gitEnv = []string{
	"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull,
	"GIT_AUTHOR_NAME=fleet", "GIT_AUTHOR_EMAIL=fleet@example.com",
	"GIT_COMMITTER_NAME=fleet", "GIT_COMMITTER_EMAIL=fleet@example.com",
}

// git runs git in dir and returns its trimmed stdout, failing the test on an
// error.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed to play a pull request: %v", err)
	}
	r := run(t, dir, gitEnv, "git", args...)
	if r.code != 0 {
		t.Fatalf("git %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

// TestPullRequestFlow plays examples/ci as its README has people and CI run
// it, on a real Git repository: the base branch holds fleet/ and rendered/
// committed together; each change of ci/changes (every folder there, so
// that a new one is played with no edit here) becomes a pull-request branch
// that applies it, runs ./fleet.sh render and commits fleet/ and rendered/
// together. Then the gate runs twice, as a person runs it
// (BASE=main ./fleet.sh check) and as the workflow runs the action (its
// script, in a shallow clone of the pull request, with the inputs the
// workflow and the pull_request event give it): both pass, since rendered/
// is up to date, and both summaries state the change from the base, the
// same posture changes as the change's expected summary; a weakening's
// JSON says weakens and its Markdown warns before anything else, a change
// that weakens nothing carries no warning.
func TestPullRequestFlow(t *testing.T) {
	changes, err := filepath.Glob(filepath.Join("ci", "changes", "*"))
	if err != nil || len(changes) == 0 {
		t.Fatalf("no changes in ci/changes: %v", err)
	}
	fnEnv := []string{"COMPUTEPLANE_FN=" + binary}
	script, err := filepath.Abs("../tools/action/run.sh")
	if err != nil {
		t.Fatal(err)
	}

	// The fleet repo on its base branch, rendered and committed.
	origin := t.TempDir()
	git(t, origin, "init", "-q", "-b", "main")
	for _, sub := range []string{"fleet", "rendered", "fleet.sh", "README.md", ".gitignore", ".github"} {
		testfs.CopyTree(t, filepath.Join("ci", sub), filepath.Join(origin, sub))
	}
	if r := run(t, origin, fnEnv, "./fleet.sh", "render"); r.code != 0 {
		t.Fatalf("./fleet.sh render on the base: exit %d\n%s", r.code, r.stderr)
	}
	git(t, origin, "add", "-A")
	git(t, origin, "commit", "-q", "-m", "the fleet")
	base := git(t, origin, "rev-parse", "HEAD")

	// A base the clone does not hold: refused, naming it and how to fetch
	// it, and no JSON summary that could pass for a verdict.
	r := run(t, origin, append(fnEnv, "BASE=origin/main"), "./fleet.sh", "check")
	if r.code != 1 || !strings.Contains(r.stderr, "--base origin/main: origin/main is not a revision") || !strings.Contains(r.stderr, "git fetch --depth=1 origin main") {
		t.Errorf("BASE=origin/main ./fleet.sh check without a remote: exit %d, want 1 naming the base and the fetch\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(origin, "summary.json")); err == nil {
		t.Errorf("a failed base left a summary.json")
	}

	weakenings, others := 0, 0
	for _, change := range changes {
		name := filepath.Base(change)
		var want summary.JSON
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(change, "expected-summary.json"))), &want); err != nil {
			t.Fatalf("%s: %v", change, err)
		}
		weakens := weakening(want.Changes)
		if weakens {
			weakenings++
		} else {
			others++
		}
		t.Run(name, func(t *testing.T) {
			// The pull request: the change, rendered and committed with it.
			branch := "change/" + name
			git(t, origin, "checkout", "-q", "-B", branch, "main")
			testfs.CopyTree(t, filepath.Join(change, "fleet"), filepath.Join(origin, "fleet"))
			if r := run(t, origin, fnEnv, "./fleet.sh", "render"); r.code != 0 {
				t.Fatalf("./fleet.sh render: exit %d\n%s", r.code, r.stderr)
			}
			git(t, origin, "add", "fleet", "rendered")
			git(t, origin, "commit", "-q", "-m", name)
			t.Cleanup(func() { git(t, origin, "checkout", "-q", "main") })

			// Without a base the gate compares with the folder the pull
			// request commits: no posture change, whatever the change.
			r := run(t, origin, fnEnv, "./fleet.sh", "check")
			if r.code != 0 {
				t.Fatalf("./fleet.sh check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if got := readSummary(t, origin); len(got.Changes) != 0 {
				t.Errorf("./fleet.sh check without BASE: %d posture changes, want none (rendered/ is the head's)", len(got.Changes))
			}

			// A person: BASE=main ./fleet.sh check.
			r = run(t, origin, append(fnEnv, "BASE=main"), "./fleet.sh", "check")
			if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "rendered is up to date") {
				t.Fatalf("BASE=main ./fleet.sh check: exit %d, want 0 (rendered/ is up to date)\n%s%s", r.code, r.stdout, r.stderr)
			}
			checkSummaries(t, origin, "BASE=main ./fleet.sh check", "main", base, want.Changes, weakens)

			// CI: the workflow's checkout (one commit of the pull request)
			// and the action's script with the inputs the workflow and the
			// event give it; the script fetches the base.
			clone := filepath.Join(t.TempDir(), "checkout")
			git(t, ".", "clone", "-q", "--depth=1", "--branch", branch, "file://"+origin, clone)
			if r := run(t, clone, gitEnv, "git", "rev-parse", "--verify", "--quiet", base+"^{commit}"); r.code == 0 {
				t.Fatalf("the shallow clone holds the base already; the test would not show the fetch")
			}
			env := append(actionEnv(t, map[string]string{"github.event.pull_request.base.sha": base}), gitEnv...)
			env = append(env, "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
			r = run(t, clone, env, script)
			if r.code != 0 || !strings.Contains(r.stderr, "rendered is up to date") {
				t.Fatalf("the action's script: exit %d, want 0 (rendered/ is up to date)\n%s%s", r.code, r.stdout, r.stderr)
			}
			checkSummaries(t, clone, "the action's script", base, base, want.Changes, weakens)
		})
	}
	if weakenings == 0 || others == 0 {
		t.Errorf("ci/changes holds %d weakenings and %d other changes; the flow needs both", weakenings, others)
	}
}

func weakening(changes []posture.Change) bool {
	for _, c := range changes {
		if c.Weakens {
			return true
		}
	}
	return false
}

func readSummary(t *testing.T, dir string) summary.JSON {
	t.Helper()
	var s summary.JSON
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "summary.json"))), &s); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	return s
}

// checkSummaries checks the summaries a gate with a base wrote into dir.
func checkSummaries(t *testing.T, dir, gate, ref, commit string, want []posture.Change, weakens bool) {
	t.Helper()
	got := readSummary(t, dir)
	if got.Base == nil || got.Base.Ref != ref || got.Base.Commit != commit {
		t.Errorf("%s: summary.json base %+v, want ref %s at %s", gate, got.Base, ref, commit)
	}
	if diff := cmp.Diff(want, got.Changes); diff != "" {
		t.Errorf("%s: the posture changes differ from the change's expected summary (-want +got):\n%s", gate, diff)
	}
	if weakening(got.Changes) != weakens {
		t.Errorf("%s: summary.json says weakens=%v, want %v", gate, weakening(got.Changes), weakens)
	}
	md := readFile(t, filepath.Join(dir, "summary.md"))
	warning := strings.Index(md, "**⚠️")
	switch {
	case weakens && warning < 0:
		t.Errorf("%s: summary.md carries no warning for a weakening:\n%s", gate, md)
	case weakens:
		// The posture section is the first, the warning its first word
		// after the line that names the base.
		sections := regexp.MustCompile(`(?m)^### .*$`).FindAllStringIndex(md, -1)
		if len(sections) == 0 || md[sections[0][0]:sections[0][1]] != "### Isolation posture" ||
			(len(sections) > 1 && sections[1][0] < warning) {
			t.Errorf("%s: the warning is not the first thing summary.md says:\n%s", gate, md)
		}
		if !strings.Contains(md[:warning], "at the base `"+ref+"`") {
			t.Errorf("%s: summary.md does not name the base before the warning:\n%s", gate, md)
		}
	case strings.Contains(md, "⚠️"):
		t.Errorf("%s: summary.md warns of a change that weakens nothing:\n%s", gate, md)
	}
}

// actionEnv is the environment action.yml gives its script: each variable
// of the step that runs tools/action/run.sh, its ${{ inputs.<name> }} set
// as the CI example's workflow sets the input, or else to the input's
// default, whose ${{ <context> }} come from context (the event's fields).
func actionEnv(t *testing.T, context map[string]string) []string {
	t.Helper()
	var a action
	readYAML(t, "../action.yml", &a)
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
	expr := regexp.MustCompile(`\$\{\{\s*([^}]+?)\s*\}\}`)
	eval := func(s string, lookup func(string) string) string {
		return expr.ReplaceAllStringFunc(s, func(m string) string { return lookup(expr.FindStringSubmatch(m)[1]) })
	}
	var env []string
	for _, step := range a.Runs.Steps {
		if !strings.Contains(step.Run, "tools/action/run.sh") {
			continue
		}
		for name, value := range step.Env {
			env = append(env, name+"="+eval(value, func(e string) string {
				input, ok := strings.CutPrefix(e, "inputs.")
				if !ok {
					t.Fatalf("action.yml gives %s ${{ %s }}; the test knows only inputs", name, e)
				}
				if v, set := with[input]; set {
					return v
				}
				return eval(a.Inputs[input].Default, func(c string) string {
					v, known := context[c]
					if !known {
						t.Fatalf("the default of input %s reads ${{ %s }}, which the test does not give", input, c)
					}
					return v
				})
			}))
		}
	}
	if len(env) == 0 {
		t.Fatal("action.yml has no step that runs tools/action/run.sh")
	}
	return env
}
