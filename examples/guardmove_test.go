package examples_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
)

// TestPullRequestMovesTheGuard plays the pull request that lays
// examples/ci's fleet out in Flux units (spec.fleet added), on a real Git
// repository, beside a second fleet of the same repository that stays as
// it is. The guard moves from the operator's Kustomization of rendered/ to
// the account's unit, in no order (issue 40), so ./fleet.sh render refuses
// and says what to do first; once that is done, ./fleet.sh render
// --allow-guard-move writes it. The gate compares with the base: refused
// without the consent, passed with it; without a base it compares with the
// committed folder, which moves nothing; the action's script likewise, its
// input allow-guard-move giving the consent. The other fleet renders
// unchanged throughout.
func TestPullRequestMovesTheGuard(t *testing.T) {
	origin, fnEnv := twoFleets(t)

	// The pull request: acme's fleet in units.
	git(t, origin, "checkout", "-q", "-b", "units")
	dir := filepath.Join(origin, "acme")
	config := filepath.Join(dir, "fleet", "config.yaml")
	writeFile(t, config, readFile(t, config)+"  fleet:\n    sourceRef: {kind: GitRepository, name: fleet, namespace: flux-system}\n    path: ./acme/rendered\n")
	before := readTree(t, filepath.Join(dir, "rendered"))
	r := run(t, dir, fnEnv, "./fleet.sh", "render")
	for _, want := range []string{
		"refusing to move the guard or the fleet's account to another Kustomization",
		"from the Kustomization that applies the whole folder (rendered) to flux-system/computeplane-fleet-account",
		"kubectl annotate validatingadmissionpolicy,validatingadmissionpolicybinding computeplane-guard kustomize.toolkit.fluxcd.io/prune=disabled",
		"render again with --allow-guard-move",
	} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("./fleet.sh render: exit %d, lacks %q\n%s", r.code, want, r.stderr)
		}
	}
	if after := readTree(t, filepath.Join(dir, "rendered")); len(after) != len(before) {
		t.Errorf("the refused render changed rendered/: %d files, then %d", len(before), len(after))
	}
	// The step taken (on the cluster), the consent given. Every path
	// changes, but every object is still rendered: a move, which needs no
	// --allow-prune.
	if r := run(t, dir, fnEnv, "./fleet.sh", "render", "--allow-guard-move"); r.code != 0 {
		t.Fatalf("./fleet.sh render --allow-guard-move: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "rendered", "_account", "_cluster", "validatingadmissionpolicy-computeplane-guard.yaml")); err != nil {
		t.Errorf("the guard is not in the account's unit: %v", err)
	}
	git(t, origin, "add", "acme")
	git(t, origin, "commit", "-q", "-m", "acme in units")

	if r := run(t, dir, fnEnv, "./fleet.sh", "check"); r.code != 0 {
		t.Errorf("./fleet.sh check without a base: exit %d, want 0 (rendered/ is the head's)\n%s", r.code, r.stderr)
	}
	r = run(t, dir, append(fnEnv, "BASE=main"), "./fleet.sh", "check")
	if r.code != 1 || !strings.Contains(r.stderr, "from the Kustomization that applies the whole folder (rendered at main) to flux-system/computeplane-fleet-account") {
		t.Errorf("BASE=main ./fleet.sh check: exit %d, want 1 refusing the move from the base\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		t.Errorf("the refused gate left a summary.json")
	}
	if r := run(t, dir, append(fnEnv, "BASE=main"), "./fleet.sh", "check", "--allow-guard-move"); r.code != 0 || !strings.Contains(r.stderr, "rendered is up to date") {
		t.Errorf("BASE=main ./fleet.sh check --allow-guard-move: exit %d, want 0\n%s", r.code, r.stderr)
	}

	// CI: the action's script, as the workflow runs it for the pull
	// request (mode check, the base), then with the input that gives the
	// consent.
	script, env := checkAction(t)
	if r := run(t, dir, env, script); r.code != 1 || !strings.Contains(r.stderr, "refusing to move the guard") {
		t.Errorf("the action's script: exit %d, want 1 refusing the move\n%s", r.code, r.stderr)
	}
	if r := run(t, dir, append(env, "COMPUTEPLANE_FN_ALLOW_GUARD_MOVE=true"), script); r.code != 0 {
		t.Errorf("the action's script with allow-guard-move: exit %d, want 0\n%s", r.code, r.stderr)
	}

	// The other fleet of the repository: untouched, up to date.
	if r := run(t, filepath.Join(origin, "other"), append(fnEnv, "BASE=main"), "./fleet.sh", "check"); r.code != 0 {
		t.Errorf("the other fleet's gate: exit %d\n%s", r.code, r.stderr)
	}
}

// twoFleets is a Git repository with two copies of examples/ci, acme and
// other, each rendered, committed on main; and the environment that gives
// ./fleet.sh the binary under test.
func twoFleets(t *testing.T) (origin string, fnEnv []string) {
	t.Helper()
	fnEnv = []string{"COMPUTEPLANE_FN=" + binary}
	origin = t.TempDir()
	git(t, origin, "init", "-q", "-b", "main")
	for _, fleet := range []string{"acme", "other"} {
		for _, sub := range []string{"fleet", "fleet.sh"} {
			testfs.CopyTree(t, filepath.Join("ci", sub), filepath.Join(origin, fleet, sub))
		}
		if r := run(t, filepath.Join(origin, fleet), fnEnv, "./fleet.sh", "render"); r.code != 0 {
			t.Fatalf("%s: ./fleet.sh render on the base: exit %d\n%s", fleet, r.code, r.stderr)
		}
	}
	writeFile(t, filepath.Join(origin, ".gitignore"), "summary.md\nsummary.json\n")
	git(t, origin, "add", "-A")
	git(t, origin, "commit", "-q", "-m", "two fleets")
	return origin, fnEnv
}

// checkAction is the action's script and its environment as the workflow
// runs it for a pull request against main: mode check, from the fleet's
// folder, the binary under test on PATH.
func checkAction(t *testing.T) (script string, env []string) {
	t.Helper()
	script, err := filepath.Abs("../tools/action/run.sh")
	if err != nil {
		t.Fatal(err)
	}
	return script, append([]string{"PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"COMPUTEPLANE_FN_CONFIG=fleet/config.yaml", "COMPUTEPLANE_FN_OUTPUT_DIR=rendered", "COMPUTEPLANE_FN_MODE=check",
		"COMPUTEPLANE_FN_SUMMARY=summary.md", "COMPUTEPLANE_FN_BASE=main"}, gitEnv...)
}
