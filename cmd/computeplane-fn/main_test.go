package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
)

// fleetRepo copies the quickstart example into a temporary fleet repo and
// makes it the working directory; the rendered folder is "fleet".
func fleetRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	src := "../../examples/quickstart"
	for _, sub := range []string{"config.yaml", "definitions", "tenants", "apps"} {
		testfs.CopyTree(t, filepath.Join(src, sub), filepath.Join(dir, sub))
	}
	t.Chdir(dir)
	return dir
}

type result struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr, nil)
	return result{code, stdout.String(), stderr.String()}
}

// tree reads every file under dir (dot files included) with its
// modification time.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[filepath.ToSlash(rel)+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = info.ModTime().String() + "\n" + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFleetRepoLifecycle(t *testing.T) {
	repo := fleetRepo(t)

	// First render: every object in its file.
	r := cli(t, "--output-dir", "fleet", "config.yaml")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "wrote fleet: 22 added, 0 changed, 0 removed") {
		t.Fatalf("render: %+v", r)
	}
	stream := cli(t, "config.yaml")
	var files []string
	for p, content := range tree(t, filepath.Join(repo, "fleet")) {
		if strings.HasSuffix(p, "/") {
			continue
		}
		files = append(files, p)
		_, data, _ := strings.Cut(content, "\n")
		// Each file names its fleet, the config relative to the folder,
		// in its first line.
		header, data, _ := strings.Cut(data, "\n")
		if header != "# computeplane.dev/fleet: ../config.yaml" {
			t.Errorf("%s starts with %q, want the fleet's identity", p, header)
		}
		if !strings.Contains(stream.stdout, data) {
			t.Errorf("%s is not a document of the rendered stream", p)
		}
	}
	// The source, 7 of the tenant, the guard's two, the shard-label
	// policy's two, the fleet's account (3), the installer's role and the
	// tenant's installer (6).
	if len(files) != 22 {
		t.Errorf("files: %v", files)
	}

	// Foreign files and a hand edit.
	must(t, os.WriteFile("fleet/README.md", []byte("# our fleet\n"), 0o644))
	must(t, os.WriteFile("fleet/tenant-acme/extra.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n  namespace: tenant-acme\n"), 0o644))
	edited := "fleet/tenant-acme/helmrelease-jupyterhub-research.yaml"
	orig, err := os.ReadFile(edited)
	must(t, err)
	must(t, os.WriteFile(edited, bytes.Replace(orig, []byte("interval: 5m0s"), []byte("interval: 1m0s"), 1), 0o644))

	r = cli(t, "--output-dir", "fleet", "--check", "config.yaml")
	wantDiff := `--- a/tenant-acme/helmrelease-jupyterhub-research.yaml
+++ b/tenant-acme/helmrelease-jupyterhub-research.yaml
@@ -23,7 +23,7 @@
       name: RetryOnFailure
       retryInterval: 30s
     timeout: 10m0s
-  interval: 1m0s
+  interval: 5m0s
   kubeConfig:
     secretRef:
       key: super-admin.svc
`
	if r.code != 1 || !strings.Contains(r.stderr, "fleet is out of date: 0 added, 1 changed, 0 removed") {
		t.Errorf("check of a hand-edited folder: %+v", r)
	}
	if diff := cmp.Diff(wantDiff, r.stdout); diff != "" {
		t.Errorf("check diff (-want +got):\n%s", diff)
	}

	// Write restores the edit and keeps the foreign files.
	r = cli(t, "--output-dir", "fleet", "config.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, "0 added, 1 changed, 0 removed") {
		t.Errorf("write after a hand edit: %+v", r)
	}
	if got, _ := os.ReadFile(edited); !bytes.Equal(got, orig) {
		t.Errorf("the hand edit was not undone")
	}
	for _, p := range []string{"fleet/README.md", "fleet/tenant-acme/extra.yaml"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("foreign file %s: %v", p, err)
		}
	}
	r = cli(t, "--output-dir", "fleet", "--check", "config.yaml")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("check of an up-to-date folder with foreign files: %+v", r)
	}

	// Re-running unchanged writes nothing.
	before := tree(t, filepath.Join(repo, "fleet"))
	time.Sleep(10 * time.Millisecond)
	r = cli(t, "--output-dir", "fleet", "config.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, "up to date; nothing written") {
		t.Errorf("unchanged run: %+v", r)
	}
	if diff := cmp.Diff(before, tree(t, filepath.Join(repo, "fleet"))); diff != "" {
		t.Errorf("an unchanged run touched the folder (-before +after):\n%s", diff)
	}

	// Remove tenant dev (and its app): its folder goes.
	dropDocument(t, "tenants/tenants.yaml", "name: dev\n")
	dropDocument(t, "apps/acme.yaml", "namespace: tenant-acme-dev\n")
	r = cli(t, "--output-dir", "fleet", "--check", "--summary", "summary.md", "config.yaml")
	if r.code != 1 || !strings.Contains(r.stdout, "--- a/tenant-acme-dev/helmrelease-redis-cache.yaml\n+++ /dev/null\n") {
		t.Errorf("check after removing a tenant: %+v", r)
	}
	sum, err := os.ReadFile("summary.md")
	must(t, err)
	for _, want := range []string{"and remove 1.", "`tenant-acme-dev/helmrelease-redis-cache.yaml`", "| `tenant-acme-dev` | removed |"} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
	r = cli(t, "--output-dir", "fleet", "config.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, "0 added, 1 changed, 1 removed") { // acme's egress policy no longer names the child
		t.Errorf("write after removing a tenant: %+v", r)
	}
	if _, err := os.Stat("fleet/tenant-acme-dev"); err == nil {
		t.Errorf("the emptied tenant folder is still there")
	}

	// A refused run leaves the folder byte-identical and says why in the
	// summary.
	must(t, os.WriteFile("apps/bad.yaml", []byte("apiVersion: apps.cozystack.io/v1alpha1\nkind: JupyterHub\nmetadata:\n  name: lab\n  namespace: tenant-nobody\nspec: {}\n"), 0o644))
	before = tree(t, filepath.Join(repo, "fleet"))
	r = cli(t, "--output-dir", "fleet", "--summary", "summary.md", "config.yaml")
	if r.code != 1 || !strings.Contains(r.stderr, "tenant-nobody") {
		t.Errorf("refused run: %+v", r)
	}
	if diff := cmp.Diff(before, tree(t, filepath.Join(repo, "fleet"))); diff != "" {
		t.Errorf("a refused run changed the folder (-before +after):\n%s", diff)
	}
	sum, err = os.ReadFile("summary.md")
	must(t, err)
	if !strings.Contains(string(sum), "**Refused**") || !strings.Contains(string(sum), "tenant-nobody") {
		t.Errorf("summary of a refused run:\n%s", sum)
	}
}

func TestFleetRepoConflict(t *testing.T) {
	fleetRepo(t)
	must(t, os.MkdirAll("fleet/tenant-acme", 0o755))
	own := []byte("# written by hand\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: computeplane\n")
	must(t, os.WriteFile("fleet/tenant-acme/helmrelease-computeplane.yaml", own, 0o644))
	for _, args := range [][]string{{"--output-dir", "fleet", "config.yaml"}, {"--output-dir", "fleet", "--check", "config.yaml"}} {
		r := cli(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "tenant-acme/helmrelease-computeplane.yaml: not written by computeplane-fn") {
			t.Errorf("%v: %+v", args, r)
		}
	}
	if got, _ := os.ReadFile("fleet/tenant-acme/helmrelease-computeplane.yaml"); !bytes.Equal(got, own) {
		t.Errorf("a foreign file was overwritten")
	}
	if entries, _ := os.ReadDir("fleet"); len(entries) != 1 {
		t.Errorf("a refused run wrote into the folder: %v", entries)
	}
}

func TestUsageErrors(t *testing.T) {
	fleetRepo(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--check", "config.yaml"}, "--check needs --output-dir"},
		{[]string{"--output-dir", "fleet"}, "need a CONFIG"},
		{[]string{"--summary", "s.md"}, "need a CONFIG"},
		{[]string{"config.yaml", "--output-dir", "fleet"}, "flags go before CONFIG"},
		{[]string{"--no-such-flag", "config.yaml"}, "flag provided but not defined"},
	} {
		r := cli(t, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: got %+v, want exit 2 and %q", tc.args, r, tc.want)
		}
	}
	if _, err := os.Stat("fleet"); err == nil {
		t.Errorf("a usage error created the folder")
	}
}

func TestSummaryWithoutFolder(t *testing.T) {
	fleetRepo(t)
	r := cli(t, "--summary", "summary.md", "config.yaml")
	if r.code != 0 || !strings.Contains(r.stdout, "kind: HelmRelease") {
		t.Fatalf("%+v", r)
	}
	sum, err := os.ReadFile("summary.md")
	must(t, err)
	if !strings.Contains(string(sum), "| `tenant-acme` (acme) | yes | restricted | JupyterHub `research`, N8N `automations` | Postgres `notebooks` |") || strings.Contains(string(sum), "Fleet folder") {
		t.Errorf("summary:\n%s", sum)
	}
}

// TestSummaryJSON: the JSON summary is written in check mode and when
// writing, and a refused run leaves none behind, not even an old one.
func TestSummaryJSON(t *testing.T) {
	fleetRepo(t)
	for _, args := range [][]string{{"--check"}, {}} {
		r := cli(t, append(append([]string{"--output-dir", "fleet"}, args...), "--summary-json", "summary.json", "config.yaml")...)
		if r.code != 0 && r.code != 1 {
			t.Fatalf("%+v", r)
		}
		data, err := os.ReadFile("summary.json")
		must(t, err)
		var got struct {
			Tenants []struct{ Namespace string } `json:"tenants"`
			Files   struct{ Added []string }     `json:"files"`
		}
		must(t, json.Unmarshal(data, &got))
		if len(got.Tenants) != 3 || len(got.Files.Added) == 0 {
			t.Errorf("%v: summary.json: %s", args, data)
		}
	}
	must(t, os.WriteFile("config.yaml", []byte("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata: {name: fleet}\nspec: {delivery: Nowhere}\n"), 0o644))
	if r := cli(t, "--output-dir", "fleet", "--summary-json", "summary.json", "config.yaml"); r.code != 1 {
		t.Fatalf("a refused run: %+v", r)
	}
	if _, err := os.Stat("summary.json"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run left summary.json: %v", err)
	}
}

// dropDocument removes the YAML documents of file that contain marker.
func dropDocument(t *testing.T, file, marker string) {
	t.Helper()
	data, err := os.ReadFile(file)
	must(t, err)
	var keep []string
	for _, doc := range strings.Split(string(data), "---\n") {
		if !strings.Contains(doc, marker) {
			keep = append(keep, doc)
		}
	}
	if len(keep) == len(strings.Split(string(data), "---\n")) {
		t.Fatalf("%s has no document with %q", file, marker)
	}
	must(t, os.WriteFile(file, []byte(strings.Join(keep, "---\n")), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFleetRepoUnits writes the Flux unit layout of spec.fleet: the
// kustomization.yaml files and the wiring are the writer's own files too, so
// removing a tenant prunes its unit folder and its Kustomization, and an
// unchanged run writes nothing.
func TestFleetRepoUnits(t *testing.T) {
	repo := fleetRepo(t)
	cfg, err := os.ReadFile("config.yaml")
	must(t, err)
	cfg = append(cfg, "  fleet:\n    sourceRef: {kind: GitRepository, name: fleet, namespace: flux-system}\n    path: ./clusters/fleet\n    wiringGroups: 1\n"...)
	must(t, os.WriteFile("config.yaml", cfg, 0o644))

	// The folder that holds the config and the inputs is no fleet folder.
	if r := cli(t, "--output-dir", ".", "config.yaml"); r.code != 2 || !strings.Contains(r.stderr, "--output-dir . holds the config config.yaml") {
		t.Fatalf("render into the config's folder: %+v", r)
	}
	must(t, os.MkdirAll("out", 0o755))
	must(t, os.WriteFile("out/README.md", []byte("# fleet repo\n"), 0o644))
	r := cli(t, "--output-dir", "out", "config.yaml")
	if r.code != 0 {
		t.Fatalf("render: %+v", r)
	}
	for _, p := range []string{"_platform/kustomization.yaml", "tenant-acme/kustomization.yaml", "tenant-acme-dev/kustomization.yaml",
		"_flux/kustomization.yaml", "_flux/0-of-1/kustomization-computeplane-tenant-acme-dev.yaml"} {
		if _, err := os.Stat(filepath.Join("out", p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	before := tree(t, repo)
	if r := cli(t, "--output-dir", "out", "config.yaml"); r.code != 0 || !strings.Contains(r.stderr, "nothing written") {
		t.Errorf("unchanged run: %+v", r)
	}
	if diff := cmp.Diff(before, tree(t, repo)); diff != "" {
		t.Errorf("an unchanged run touched the repo (-before +after):\n%s", diff)
	}

	dropDocument(t, "tenants/tenants.yaml", "name: dev\n")
	dropDocument(t, "apps/acme.yaml", "namespace: tenant-acme-dev\n")
	r = cli(t, "--output-dir", "out", "--check", "config.yaml")
	for _, want := range []string{"--- a/tenant-acme-dev/kustomization.yaml\n+++ /dev/null\n", "--- a/_flux/0-of-1/kustomization-computeplane-tenant-acme-dev.yaml\n+++ /dev/null\n"} {
		if r.code != 1 || !strings.Contains(r.stdout, want) {
			t.Errorf("check after removing a tenant lacks %q: %+v", want, r)
		}
	}
	if r := cli(t, "--output-dir", "out", "config.yaml"); r.code != 0 {
		t.Fatalf("write: %+v", r)
	}
	for _, gone := range []string{"out/tenant-acme-dev", "out/_flux/0-of-1/kustomization-computeplane-tenant-acme-dev.yaml"} {
		if _, err := os.Stat(gone); err == nil {
			t.Errorf("%s was not pruned", gone)
		}
	}
	for _, kept := range []string{"out/README.md", "config.yaml", "tenants/tenants.yaml", "apps/acme.yaml", "definitions/jupyterhub.yaml"} {
		if _, err := os.Stat(kept); err != nil {
			t.Errorf("the foreign file %s did not survive: %v", kept, err)
		}
	}
}

// TestVersion checks the wiring of --version; what it prints for a stamped
// build is checked on the release binaries (tools/release/disttest).
func TestVersion(t *testing.T) {
	r := cli(t, "--version")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("--version: got %+v, want exit 0 and no stderr", r)
	}
	if !strings.HasPrefix(r.stdout, "computeplane-fn ") || !strings.Contains(r.stdout, "(commit ") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("--version printed %q, want one line: computeplane-fn VERSION (commit COMMIT, GO, OS/ARCH)", r.stdout)
	}
	if r := cli(t, "--version", "--check"); r.code != 0 {
		t.Errorf("--version with other flags: got %+v, want exit 0", r)
	}
}

// TestPlatformWarningOnStderr: under delivery: Platform the CLI renders,
// exits 0 and says on stderr, per tenant with a ComputePlane, that it runs
// without Pod Security, that the chart gives the tenant's users its
// kubeconfig, and that the guard holds it less.
func TestPlatformWarningOnStderr(t *testing.T) {
	dir := "../../fixtures/platform-delivery/"
	r := cli(t, dir+"config.yaml", dir+"input-apps.yaml", dir+"input-defs.yaml", dir+"input-tenants.yaml")
	if r.code != 0 || !strings.Contains(r.stdout, "kind: CiliumNetworkPolicy") {
		t.Fatalf("%+v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "Pod Security") || !strings.Contains(lines[1], "dashboard-resources") || !strings.Contains(lines[2], "is guarded less") {
		t.Errorf("stderr:\n%s\nwant three warnings naming Tenant tenant-root/acme: Pod Security, the chart's dashboard Role, then the guard", r.stderr)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "computeplane-fn: warning: ") || !strings.Contains(l, "Tenant tenant-root/acme") {
			t.Errorf("stderr line %q is no warning naming Tenant tenant-root/acme", l)
		}
	}
}

// TestFleetRepoSafetyRails: a fleet-folder run that would remove every
// tenant, or whose inputs hold no object, is refused and leaves the folder
// as it was, unless --allow-empty says it is meant; paths that clash are
// usage errors.
func TestFleetRepoSafetyRails(t *testing.T) {
	repo := fleetRepo(t)
	if r := cli(t, "--output-dir", "fleet", "config.yaml"); r.code != 0 {
		t.Fatalf("render: %+v", r)
	}
	before := tree(t, filepath.Join(repo, "fleet"))
	unchanged := func(step string) {
		t.Helper()
		if diff := cmp.Diff(before, tree(t, filepath.Join(repo, "fleet"))); diff != "" {
			t.Errorf("%s changed the folder (-before +after):\n%s", step, diff)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"one file for both summaries", []string{"--output-dir", "fleet", "--summary", "s.out", "--summary-json", "./s.out", "config.yaml"}, "--summary and --summary-json name the same file"},
		{"the output inside an input folder", []string{"--output-dir", "apps/fleet", "config.yaml"}, "--output-dir apps/fleet is inside the input apps/"},
		{"the output an input folder", []string{"--output-dir", "tenants", "config.yaml"}, "--output-dir tenants holds the input tenants/"},
		{"the output holds the config", []string{"--output-dir", ".", "config.yaml"}, "--output-dir . holds the config config.yaml"},
		{"the output holds an input", []string{"--output-dir", "..", "config.yaml"}, "--output-dir .. holds the config config.yaml"},
		{"the output holds a command-line input", []string{"--output-dir", "extra", "config.yaml", "extra/x.yaml"}, "--output-dir extra holds the input extra/x.yaml"},
		{"--allow-prune without a folder", []string{"--allow-prune", "config.yaml"}, "--allow-prune needs --output-dir"},
		{"--base without a summary", []string{"--output-dir", "fleet", "--base", "HEAD", "config.yaml"}, "--base needs --output-dir and --summary"},
		{"the output inside a command-line input", []string{"--output-dir", "extra/fleet", "config.yaml", "extra"}, "is inside the input extra"},
		{"--allow-empty without a folder", []string{"--allow-empty", "config.yaml"}, "--allow-empty needs --output-dir"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			must(t, os.MkdirAll("extra", 0o755))
			must(t, os.WriteFile("extra/x.yaml", nil, 0o644))
			r := cli(t, tc.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.says) {
				t.Errorf("%v: %+v, want exit 2 saying %q", tc.args, r, tc.says)
			}
			unchanged(tc.name)
			for _, p := range []string{"s.out", "apps/fleet", "extra/fleet"} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
		})
	}

	// Every tenant and app gone (an emptied checkout, say): refused.
	must(t, os.WriteFile("tenants/tenants.yaml", nil, 0o644))
	must(t, os.WriteFile("apps/acme.yaml", nil, 0o644))
	r := cli(t, "--output-dir", "fleet", "config.yaml")
	if r.code != 1 || !strings.Contains(r.stderr, "the render has no tenant and would remove") || !strings.Contains(r.stderr, "--allow-empty") {
		t.Errorf("a render that removes every tenant: %+v", r)
	}
	unchanged("a render without tenants")

	// No input object at all: refused, also with --check.
	for _, d := range []string{"jupyterhub", "n8n", "postgres", "redis"} {
		must(t, os.WriteFile("definitions/"+d+".yaml", nil, 0o644))
	}
	for _, args := range [][]string{{"--output-dir", "fleet", "config.yaml"}, {"--output-dir", "fleet", "--check", "config.yaml"}} {
		r = cli(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "the inputs hold no object at all") {
			t.Errorf("%v with empty inputs: %+v", args, r)
		}
	}
	unchanged("a render of no input")

	// Meant: written.
	r = cli(t, "--output-dir", "fleet", "--allow-empty", "config.yaml")
	if r.code != 0 || !strings.Contains(r.stderr, "removed") {
		t.Errorf("--allow-empty: %+v", r)
	}
	if _, err := os.Stat("fleet/tenant-acme"); err == nil {
		t.Errorf("--allow-empty left the tenant's folder")
	}
}

// TestHelp: help asked for is printed on stdout with exit 0 (-h, --help,
// help), which is what `kpt fn doc --image` shows (it runs the image with
// --help and reads stdout); help, completion and schema are never taken for
// a CONFIG file.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}} {
		r := cli(t, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stdout, "-output-dir") || r.stderr != "" {
			t.Errorf("%v: %+v, want the usage on stdout and exit 0", args, r)
		}
	}
	r := cli(t, "completion")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "completion needs one shell") {
		t.Errorf("completion: %+v, want a usage error", r)
	}
	r = cli(t, "--bogus")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("an unknown flag: %+v, want the usage on stderr and exit 2", r)
	}
}

// TestSchema: computeplane-fn schema prints the config's JSON Schema, the
// file in the repository byte for byte, and takes no arguments.
func TestSchema(t *testing.T) {
	r := cli(t, "schema")
	want, err := os.ReadFile("../../pkg/api/computeplanegenerator.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.code != 0 || r.stderr != "" || r.stdout != string(want) {
		t.Errorf("schema: exit %d, stderr %q, stdout equal to the file: %v", r.code, r.stderr, r.stdout == string(want))
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc["title"] != "ComputePlaneGenerator" {
		t.Errorf("schema: not the JSON Schema of ComputePlaneGenerator: %v", err)
	}
	if r := cli(t, "schema", "x"); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "schema takes no arguments") {
		t.Errorf("schema x: %+v, want a usage error", r)
	}
}
