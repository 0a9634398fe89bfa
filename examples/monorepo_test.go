package examples_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
)

// monorepo lays out two fleets in one repository, as the issue that asked
// for fleet identities found them: clusters/prod (the quickstart's fleet)
// and clusters/staging (the CI example's), each a config named fleet with
// its inputs beside it and its own rendered/, written by the binary from
// the fleet's folder. It returns the repository's folder.
func monorepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	for fleet, src := range map[string]string{"prod": "quickstart", "staging": filepath.Join("ci", "fleet")} {
		for _, sub := range []string{"config.yaml", "definitions", "tenants", "apps"} {
			testfs.CopyTree(t, filepath.Join(src, sub), filepath.Join(repo, "clusters", fleet, sub))
		}
		if r := run(t, filepath.Join(repo, "clusters", fleet), nil, binary, "--output-dir", "rendered", "config.yaml"); r.code != 0 {
			t.Fatalf("render %s: exit %d\n%s", fleet, r.code, r.stderr)
		}
	}
	return repo
}

// TestMonorepoFleetsKeepToThemselves: a run of one fleet never writes into
// the folder that holds its config or inputs, never removes a file another
// config wrote, prunes its own files only where its layout writes, and
// asks before removing most of its fleet.
func TestMonorepoFleetsKeepToThemselves(t *testing.T) {
	repo := monorepo(t)
	prod := filepath.Join(repo, "clusters", "prod")
	staging := readTree(t, filepath.Join(repo, "clusters", "staging"))
	stagingUntouched := func(step string) {
		t.Helper()
		if diff := cmp.Diff(staging, readTree(t, filepath.Join(repo, "clusters", "staging"))); diff != "" {
			t.Errorf("%s changed clusters/staging (-before +after):\n%s", step, diff)
		}
	}

	// Each file names the config that wrote it, relative to its folder.
	if got := readFile(t, filepath.Join(prod, "rendered", "tenant-acme", "helmrelease-computeplane.yaml")); !strings.HasPrefix(got, "# computeplane.dev/fleet: ../config.yaml\n") {
		t.Errorf("a file of prod does not start with its fleet's identity:\n%s", got[:min(200, len(got))])
	}

	// The case: the folder above, and the config's own folder.
	for _, dir := range []string{"..", "."} {
		r := run(t, prod, nil, binary, "--output-dir", dir, "config.yaml")
		if r.code != 2 || !strings.Contains(r.stderr, "--output-dir "+dir+" holds the config config.yaml") {
			t.Errorf("--output-dir %s from clusters/prod: exit %d, want 2 naming the folder and the config\n%s", dir, r.code, r.stderr)
		}
		stagingUntouched("--output-dir " + dir)
	}
	if r := run(t, prod, nil, binary, "--output-dir", "apps", "config.yaml"); r.code != 2 || !strings.Contains(r.stderr, "--output-dir apps holds the input apps/") {
		t.Errorf("--output-dir apps: exit %d, want 2 naming the input\n%s", r.code, r.stderr)
	}

	// Into staging's folder: its files are another fleet's, and where prod's
	// would go the run is refused, naming them.
	r := run(t, prod, nil, binary, "--output-dir", "../staging/rendered", "config.yaml")
	if r.code != 1 || !strings.Contains(r.stderr, "written by another fleet (# computeplane.dev/fleet: ../config.yaml)") {
		t.Errorf("--output-dir ../staging/rendered: exit %d, want a refusal naming staging's files\n%s", r.code, r.stderr)
	}
	stagingUntouched("writing prod into staging's folder")

	// Staging's files inside prod's folder: one where prod's layout writes,
	// as staging's writer stamps it there (its config, relative to prod's
	// folder); copies of staging's folder below prod's, which name
	// staging's config relative to staging's folder; and a file of an
	// earlier version (no identity) where no layout writes. A render of
	// prod removes none of them.
	release := readFile(t, filepath.Join(repo, "clusters", "staging", "rendered", "tenant-globex", "helmrelease-postgres-orders.yaml"))
	foreign := map[string]string{
		"tenant-globex/helmrelease-postgres-orders.yaml":                "# computeplane.dev/fleet: ../../staging/config.yaml\n" + withoutIdentity(release),
		"copy/staging/tenant-globex/helmrelease-postgres-orders.yaml":   release,
		"old/tenant-globex/helmrelease-postgres-orders.yaml":            withoutIdentity(release),
		"tenant-acme/notes/helmrelease-postgres-notebooks-by-hand.yaml": withoutIdentity(release),
	}
	for p, content := range foreign {
		full := filepath.Join(prod, "rendered", filepath.FromSlash(p))
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		writeFile(t, full, content)
	}
	if r := run(t, prod, nil, binary, "--output-dir", "rendered", "--check", "config.yaml"); r.code != 0 {
		t.Errorf("check with other fleets' files in the folder: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, prod, nil, binary, "--output-dir", "rendered", "config.yaml"); r.code != 0 || !strings.Contains(r.stderr, "nothing written") {
		t.Errorf("render with other fleets' files in the folder: exit %d\n%s", r.code, r.stderr)
	}
	for p, content := range foreign {
		if got := readFile(t, filepath.Join(prod, "rendered", filepath.FromSlash(p))); got != content {
			t.Errorf("%s, not prod's, was changed", p)
		}
	}

	// Removing most of the fleet asks first, naming what would go.
	before := readTree(t, filepath.Join(prod, "rendered"))
	// acme's ComputePlane turned off, and every app gone: most of the
	// fleet's files.
	writeFile(t, filepath.Join(prod, "apps", "acme.yaml"), "")
	tenants := filepath.Join(prod, "tenants", "tenants.yaml")
	writeFile(t, tenants, strings.Replace(strings.Join(strings.Split(readFile(t, tenants), "---\n")[:2], "---\n"), "computeplane: true", "computeplane: false", 1))
	r = run(t, prod, nil, binary, "--output-dir", "rendered", "config.yaml")
	if r.code != 1 || !strings.Contains(r.stderr, "refusing to remove") || !strings.Contains(r.stderr, "tenant-acme/helmrelease-computeplane.yaml") || !strings.Contains(r.stderr, "--allow-prune") {
		t.Errorf("a render that removes most of the fleet: exit %d, want a refusal naming the files and --allow-prune\n%s", r.code, r.stderr)
	}
	if diff := cmp.Diff(before, readTree(t, filepath.Join(prod, "rendered"))); diff != "" {
		t.Errorf("a refused prune changed the folder (-before +after):\n%s", diff)
	}
	if r := run(t, prod, nil, binary, "--output-dir", "rendered", "--allow-prune", "config.yaml"); r.code != 0 || !strings.Contains(r.stderr, "removed") {
		t.Errorf("--allow-prune: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(prod, "rendered", "tenant-acme", "helmrelease-computeplane.yaml")); err == nil {
		t.Errorf("--allow-prune left the removed tenant's cluster")
	}
	for p, content := range foreign {
		if got := readFile(t, filepath.Join(prod, "rendered", filepath.FromSlash(p))); got != content {
			t.Errorf("%s, not prod's, was changed by a prune", p)
		}
	}
	stagingUntouched("prod's renders")
}

// TestMonorepoAdoptsFilesWithoutIdentity: a folder written before fleet
// identities (managed files without the identity line) is adopted where
// the layout writes: the next run stamps every file it still renders, and
// prunes those it no longer renders; a managed file elsewhere stays.
func TestMonorepoAdoptsFilesWithoutIdentity(t *testing.T) {
	repo := monorepo(t)
	prod := filepath.Join(repo, "clusters", "prod")
	rendered := filepath.Join(prod, "rendered")
	old := readTree(t, rendered)
	for p, content := range old {
		writeFile(t, filepath.Join(rendered, filepath.FromSlash(p)), withoutIdentity(content))
	}
	stray := filepath.Join(rendered, "tenant-acme", "by-hand", "helmrelease-x.yaml")
	must(t, os.MkdirAll(filepath.Dir(stray), 0o755))
	writeFile(t, stray, withoutIdentity(old["tenant-acme/helmrelease-computeplane.yaml"]))
	// The dev tenant leaves with this run.
	dev := "tenant-acme-dev/helmrelease-redis-cache.yaml"
	if _, ok := old[dev]; !ok {
		t.Fatalf("prod renders no %s", dev)
	}
	tenants := filepath.Join(prod, "tenants", "tenants.yaml")
	writeFile(t, tenants, strings.Split(readFile(t, tenants), "---\n")[0])
	apps := filepath.Join(prod, "apps", "acme.yaml")
	var kept []string
	for _, doc := range strings.Split(readFile(t, apps), "---\n") {
		if !strings.Contains(doc, "namespace: tenant-acme-dev") {
			kept = append(kept, doc)
		}
	}
	writeFile(t, apps, strings.Join(kept, "---\n"))

	if r := run(t, prod, nil, binary, "--output-dir", "rendered", "config.yaml"); r.code != 0 {
		t.Fatalf("render over a folder without identities: exit %d\n%s", r.code, r.stderr)
	}
	got := readTree(t, rendered)
	if _, ok := got[dev]; ok {
		t.Errorf("%s, of a tenant no longer rendered, was not pruned", dev)
	}
	for p, content := range got {
		if p == "tenant-acme/by-hand/helmrelease-x.yaml" {
			continue
		}
		if !strings.HasPrefix(content, "# computeplane.dev/fleet: ../config.yaml\n") {
			t.Errorf("%s was not stamped with the fleet's identity", p)
		}
	}
	if readFile(t, stray) != withoutIdentity(old["tenant-acme/helmrelease-computeplane.yaml"]) {
		t.Errorf("a managed file outside the layout's places was changed")
	}
}

// TestConfigFromAnyWorkingDirectory: spec.inputs are relative to the
// config's folder, so the same config renders the same from the repository,
// from its folder, from a folder beside it and by an absolute path; the
// fleet folder too.
func TestConfigFromAnyWorkingDirectory(t *testing.T) {
	repo := monorepo(t)
	config := filepath.Join(repo, "clusters", "prod", "config.yaml")
	want := run(t, filepath.Join(repo, "clusters", "prod"), nil, binary, "config.yaml")
	if want.code != 0 || want.stdout == "" {
		t.Fatalf("render from the config's folder: exit %d\n%s", want.code, want.stderr)
	}
	for _, tc := range []struct{ dir, config string }{
		{repo, "clusters/prod/config.yaml"},
		{filepath.Join(repo, "clusters"), "prod/config.yaml"},
		{filepath.Join(repo, "clusters", "staging"), "../prod/config.yaml"},
		{t.TempDir(), config},
	} {
		r := run(t, tc.dir, nil, binary, tc.config)
		if r.code != 0 || r.stdout != want.stdout {
			t.Errorf("computeplane-fn %s from %s: exit %d, and the output differs: %v\n%s", tc.config, tc.dir, r.code, r.stdout != want.stdout, r.stderr)
		}
		r = run(t, tc.dir, nil, binary, "--output-dir", filepath.Join(repo, "clusters", "prod", "rendered"), "--check", tc.config)
		if r.code != 0 {
			t.Errorf("computeplane-fn --check %s from %s: exit %d, want the folder up to date\n%s%s", tc.config, tc.dir, r.code, r.stdout, r.stderr)
		}
	}
	// A problem names the file as the working directory reaches it.
	writeFile(t, filepath.Join(repo, "clusters", "prod", "apps", "broken.yaml"), "apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: Bad_Name, namespace: tenant-root}\n")
	if r := run(t, repo, nil, binary, "clusters/prod/config.yaml"); r.code != 1 || !strings.Contains(r.stderr, "clusters/prod/apps/broken.yaml") {
		t.Errorf("a refusal from the repository's top: exit %d, want the file named from there\n%s", r.code, r.stderr)
	}
}

// withoutIdentity is a file as a version before fleet identities wrote it.
func withoutIdentity(content string) string {
	if first, rest, ok := strings.Cut(content, "\n"); ok && strings.HasPrefix(first, "# computeplane.dev/fleet: ") {
		return rest
	}
	return content
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
