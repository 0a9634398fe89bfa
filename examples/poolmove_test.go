package examples_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPullRequestsMoveThePools plays the move of examples/ci's fleet to
// Cozystack's split worker pools (docs/flux-wiring.md, "Moving to split
// worker pools") as pull requests on a real Git repository, beside a
// second fleet of the same repository that stays on the Combined chart.
// A pull request that goes straight to SplitPools is refused by
// ./fleet.sh render and leaves rendered/ as it was. One that renders Pin
// and then Adopt in one branch passes every local render (the folder is
// pinned by then), but the gate compares with the base, where the workers
// are still the cluster release's own: BASE=main ./fleet.sh check and the
// action's script refuse it, naming the release and its file at the base.
// The move as the docs give it, Pin merged first, then Adopt, then the
// end of the move, passes the gate at each step.
func TestPullRequestsMoveThePools(t *testing.T) {
	origin, fnEnv := twoFleets(t)

	dir := filepath.Join(origin, "acme")
	config := filepath.Join(dir, "fleet", "config.yaml")
	original := readFile(t, config)
	step := func(chart, migration string) {
		t.Helper()
		platform := "  platform: {clusterChart: " + chart
		if migration != "" {
			platform += ", poolMigration: " + migration
		}
		writeFile(t, config, original+platform+"}\n")
	}
	render := func(wantCode int, want string) {
		t.Helper()
		before := readTree(t, filepath.Join(dir, "rendered"))
		r := run(t, dir, fnEnv, "./fleet.sh", "render")
		if r.code != wantCode || !strings.Contains(r.stderr, want) {
			t.Fatalf("./fleet.sh render: exit %d, want %d saying %q\n%s", r.code, wantCode, want, r.stderr)
		}
		if wantCode != 0 {
			after := readTree(t, filepath.Join(dir, "rendered"))
			for p, data := range before {
				if after[p] != data {
					t.Errorf("the refused render changed rendered/%s", p)
				}
			}
			if len(after) != len(before) {
				t.Errorf("the refused render changed rendered/: %d files, then %d", len(before), len(after))
			}
		}
	}
	check := func(wantCode int, want string) {
		t.Helper()
		r := run(t, dir, append(fnEnv, "BASE=main"), "./fleet.sh", "check")
		if r.code != wantCode || !strings.Contains(r.stderr, want) {
			t.Errorf("BASE=main ./fleet.sh check: exit %d, want %d saying %q\n%s", r.code, wantCode, want, r.stderr)
		}
	}
	script, scriptEnv := checkAction(t)
	action := func(wantCode int, want string) {
		t.Helper()
		if r := run(t, dir, scriptEnv, script); r.code != wantCode || !strings.Contains(r.stderr, want) {
			t.Errorf("the action's script: exit %d, want %d saying %q\n%s", r.code, wantCode, want, r.stderr)
		}
	}
	merge := func(branch string) {
		t.Helper()
		git(t, origin, "checkout", "-q", "main")
		git(t, origin, "merge", "-q", "--ff-only", branch)
	}
	const pinFirst = "Render clusterChart: Combined with poolMigration: Pin first"

	// Straight to the split chart: refused, rendered/ untouched.
	git(t, origin, "checkout", "-q", "-b", "straight")
	step("SplitPools", "Adopt")
	render(1, "the cluster release tenant-acme/computeplane (tenant-acme/helmrelease-computeplane.yaml) in rendered was rendered for clusterChart: Combined without poolMigration: Pin")

	// Pin and Adopt rendered one after the other in one branch: each local
	// render follows the folder, the gate follows the base.
	step("Combined", "Pin")
	render(0, "")
	step("SplitPools", "Adopt")
	render(0, "")
	git(t, origin, "add", "acme")
	git(t, origin, "commit", "-q", "-m", "pin and adopt at once")
	if r := run(t, dir, fnEnv, "./fleet.sh", "check"); r.code != 0 {
		t.Errorf("./fleet.sh check without a base: exit %d, want 0 (rendered/ is the head's)\n%s", r.code, r.stderr)
	}
	check(1, "tenant-acme/computeplane (tenant-acme/helmrelease-computeplane.yaml) in rendered at main was rendered for clusterChart: Combined without poolMigration: Pin")
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		t.Errorf("the refused gate left a summary.json")
	}
	action(1, pinFirst)

	// The move as the docs give it: Pin, merged and reconciled first.
	git(t, origin, "checkout", "-q", "main")
	git(t, origin, "checkout", "-q", "-b", "pin")
	step("Combined", "Pin")
	render(0, "")
	git(t, origin, "add", "acme")
	git(t, origin, "commit", "-q", "-m", "pin the workers")
	check(0, "rendered is up to date")
	merge("pin")

	// Then the platform's upgrade, then Adopt; SplitPools without it is
	// refused while the base pins.
	git(t, origin, "checkout", "-q", "-b", "adopt")
	step("SplitPools", "")
	render(1, "Render SplitPools with poolMigration: Adopt")
	step("SplitPools", "Adopt")
	render(0, "")
	if _, err := os.Stat(filepath.Join(dir, "rendered", "tenant-acme", "helmrelease-kubernetes-nodes-computeplane-md0.yaml")); err != nil {
		t.Errorf("the Adopt render has no pool release: %v", err)
	}
	git(t, origin, "add", "acme")
	git(t, origin, "commit", "-q", "-m", "adopt the pools")
	check(0, "rendered is up to date")
	action(0, "")
	merge("adopt")

	// The end of the move: the pools hold the workers.
	git(t, origin, "checkout", "-q", "-b", "done")
	step("SplitPools", "")
	render(0, "")
	git(t, origin, "add", "acme")
	git(t, origin, "commit", "-q", "-m", "the move is over")
	check(0, "rendered is up to date")

	// The other fleet of the repository: untouched, up to date.
	if r := run(t, filepath.Join(origin, "other"), append(fnEnv, "BASE=main"), "./fleet.sh", "check"); r.code != 0 {
		t.Errorf("the other fleet's gate: exit %d\n%s", r.code, r.stderr)
	}
}
