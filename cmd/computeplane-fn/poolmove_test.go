package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPoolMoveFollowsTheFolder walks the move from the Combined cluster
// chart to split worker pools as docs/flux-wiring.md gives it, in a fleet
// folder, and each step taken out of order: a SplitPools render of a
// ComputePlane whose workers the folder's cluster release still holds
// (not pinned), or holds pinned while the render does not Adopt, is
// refused with the step to take and leaves the folder as it was.
func TestPoolMoveFollowsTheFolder(t *testing.T) {
	repo := fleetRepo(t)
	config, err := os.ReadFile("config.yaml")
	must(t, err)
	step := func(chart, migration string) result {
		t.Helper()
		platform := "  platform: {clusterChart: " + chart
		if migration != "" {
			platform += ", poolMigration: " + migration
		}
		must(t, os.WriteFile("config.yaml", []byte(string(config)+platform+"}\n"), 0o644))
		return cli(t, "--output-dir", "fleet", "config.yaml")
	}
	refused := func(r result, want string) {
		t.Helper()
		before := tree(t, filepath.Join(repo, "fleet"))
		if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "tenant-acme/computeplane") {
			t.Errorf("exit %d, stderr %q; want a refusal naming tenant-acme/computeplane and %q", r.code, r.stderr, want)
		}
		if after := tree(t, filepath.Join(repo, "fleet")); len(after) != len(before) {
			t.Errorf("the refused run changed the folder")
		}
	}
	ok := func(r result) {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	}

	ok(step("Combined", ""))
	snapshot := tree(t, filepath.Join(repo, "fleet"))
	refused(step("SplitPools", "Adopt"), "Render clusterChart: Combined with poolMigration: Pin first")
	refused(step("SplitPools", ""), "Render clusterChart: Combined with poolMigration: Pin first")
	if got := tree(t, filepath.Join(repo, "fleet")); len(got) != len(snapshot) {
		t.Fatalf("the refusals changed the folder")
	}
	for p, content := range snapshot {
		if tree(t, filepath.Join(repo, "fleet"))[p] != content {
			t.Errorf("%s changed after a refusal", p)
		}
	}
	// --check refuses the same, and writes nothing either.
	r := cli(t, "--output-dir", "fleet", "--check", "config.yaml")
	refused(r, "Render clusterChart: Combined with poolMigration: Pin first")

	ok(step("Combined", "Pin"))
	refused(step("SplitPools", ""), "Render SplitPools with poolMigration: Adopt")
	ok(step("SplitPools", "Adopt"))
	// Once split, the pools hold the workers: the move is over.
	ok(step("SplitPools", ""))
	ok(step("SplitPools", ""))
}
