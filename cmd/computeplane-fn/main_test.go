package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
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
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "wrote fleet: 23 added, 0 changed, 0 removed") {
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
	if len(files) != 23 {
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
@@ -24,7 +24,7 @@
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
		{[]string{"config.yaml", "--allow-empty"}, "--allow-empty needs --output-dir"},
		{[]string{"--output-dir", "fleet"}, "--output-dir needs a CONFIG"},
		{[]string{"--summary", "s.md", "--check"}, "--check, --summary need a CONFIG"},
		{[]string{"--no-such-flag", "config.yaml"}, "unknown flag: --no-such-flag"},
		{[]string{"config.yaml", "-o", "x"}, "unknown shorthand flag: 'o' in -o"},
		{[]string{"--output-dir"}, "flag needs an argument: --output-dir"},
		{[]string{"--summary", "-", "--summary-json", "-", "config.yaml"}, "--summary and --summary-json both write to stdout"},
	} {
		r := cli(t, tc.args...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tc.want) || !strings.HasSuffix(r.stderr, "\nRun 'computeplane-fn --help' for usage.\n") {
			t.Errorf("%v: got %+v, want exit 2, %q and the pointer to --help", tc.args, r, tc.want)
		}
	}
	if _, err := os.Stat("fleet"); err == nil {
		t.Errorf("a usage error created the folder")
	}
}

// TestUnknownFlag: an unknown flag is cobra's message and a pointer to
// --help, on stderr, with exit status 2; not the whole usage.
func TestUnknownFlag(t *testing.T) {
	r := cli(t, "--frobnicate")
	want := "computeplane-fn: unknown flag: --frobnicate\nRun 'computeplane-fn --help' for usage.\n"
	if r.code != 2 || r.stdout != "" || r.stderr != want {
		t.Errorf("--frobnicate: %+v, want exit 2 and stderr %q", r, want)
	}
}

// TestMistypedCommand: a CONFIG that does not exist and reads like a
// command is taken for a mistyped command, with cobra's suggestion; one
// that exists is a CONFIG.
func TestMistypedCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	r := cli(t, "verison")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown command "verison" for "computeplane-fn"`) || !strings.Contains(r.stderr, "Did you mean this?\n\tversion\n") {
		t.Errorf("verison: %+v, want a usage error suggesting version", r)
	}
	must(t, os.WriteFile("verison", []byte("kind: Nothing\n"), 0o644))
	if r := cli(t, "verison"); r.code != 1 || strings.Contains(r.stderr, "unknown command") {
		t.Errorf("verison, a file: %+v, want it read as the CONFIG (and refused)", r)
	}
}

// TestFlagsAnywhere: flags may follow CONFIG and the INPUTs, and "--" ends
// them, for an input whose name starts with a dash.
func TestFlagsAnywhere(t *testing.T) {
	fleetRepo(t)
	if r := cli(t, "config.yaml", "--output-dir", "fleet"); r.code != 0 || !strings.Contains(r.stderr, "wrote fleet: 23 added") {
		t.Errorf("a flag after CONFIG: %+v", r)
	}
	must(t, os.WriteFile("-more.yaml", []byte("# no object\n"), 0o644))
	before := cli(t, "config.yaml")
	if r := cli(t, "config.yaml", "--", "-more.yaml"); r.code != 0 || r.stdout != before.stdout {
		t.Errorf("an input after --: exit %d, stderr %q, the same output: %v", r.code, r.stderr, r.stdout == before.stdout)
	}
	if r := cli(t, "config.yaml", "-more.yaml"); r.code != 2 || !strings.Contains(r.stderr, "unknown shorthand flag: 'm' in -more.yaml") {
		t.Errorf("an input like a flag without --: %+v, want a usage error", r)
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
	cfg = append(cfg, "  fleet:\n    sourceRef: {kind: GitRepository, name: fleet, namespace: flux-system}\n    path: ./clusters/fleet\n    wiringGroups: 1\n    unitSource: FleetSource\n"...)
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

// TestVersion checks the wiring of the version command and of --version,
// which is kept for the scripts that ask it (the GitHub Action's
// installer, the release checks); what a stamped build prints is checked
// on the release binaries (tools/release/disttest).
func TestVersion(t *testing.T) {
	r := cli(t, "version")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("version: got %+v, want exit 0 and no stderr", r)
	}
	if !strings.HasPrefix(r.stdout, "computeplane-fn ") || !strings.Contains(r.stdout, "(commit ") || strings.Count(r.stdout, "\n") != 1 {
		t.Errorf("version printed %q, want one line: computeplane-fn VERSION (commit COMMIT, GO, OS/ARCH)", r.stdout)
	}
	for _, args := range [][]string{{"--version"}, {"--version", "--check"}} {
		if got := cli(t, args...); got != r {
			t.Errorf("%q: got %+v, want what version prints", args, got)
		}
	}
	if r := cli(t, "version", "x"); r.code != 2 || !strings.Contains(r.stderr, `unknown command "x" for "computeplane-fn version"`) {
		t.Errorf("version x: %+v, want a usage error", r)
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
// --help and reads stdout); it names the flags with two dashes and the
// commands, and help COMMAND is that command's.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"--help"}, {"help"}, {"config.yaml", "--help"}} {
		r := cli(t, args...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("%v: %+v, want the help on stdout and exit 0", args, r)
			continue
		}
		for _, want := range []string{"Usage:\n  computeplane-fn [flags] CONFIG [INPUT...]\n", "      --output-dir DIR", "      --summary FILE", "Available Commands:\n  completion", "\n  version ", "Flags may come before or after CONFIG"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: the help lacks %q:\n%s", args, want, r.stdout)
			}
		}
	}
	r := cli(t, "help", "completion")
	if r.code != 0 || !strings.Contains(r.stdout, "computeplane-fn completion [command]") || !strings.Contains(r.stdout, "powershell") {
		t.Errorf("help completion: %+v", r)
	}
}

// TestTerminalStdin: with no arguments on a terminal, where no
// ResourceList is coming, the help is printed instead of waiting for one.
func TestTerminalStdin(t *testing.T) {
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to stand for a terminal: %v", err)
	}
	defer tty.Close()
	var stdout, stderr bytes.Buffer
	done := make(chan int)
	go func() { done <- run(nil, tty, &stdout, &stderr, nil) }()
	select {
	case code := <-done:
		if code != 0 || !strings.HasPrefix(stdout.String(), "computeplane-fn renders") || !strings.Contains(stdout.String(), "Usage:") || stderr.Len() != 0 {
			t.Errorf("exit %d, stdout %q, stderr %q; want the help on stdout", code, stdout.String(), stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waited for a ResourceList on a terminal")
	}
}

// TestKRMStdoutClean: the KRM function writes its ResourceList, and only
// that, to stdout; flags without a CONFIG write nothing there.
func TestKRMStdoutClean(t *testing.T) {
	in := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: fn.computeplane.dev/v1alpha1\n  kind: ComputePlaneGenerator\n  metadata: {name: fleet}\n"
	var stdout, stderr bytes.Buffer
	if code := run(nil, strings.NewReader(in), &stdout, &stderr, nil); code != 0 || !strings.HasPrefix(stdout.String(), "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n") {
		t.Errorf("KRM: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"--summary", "-"}, strings.NewReader(in), &stdout, &stderr, nil); code != 2 || stdout.Len() != 0 {
		t.Errorf("KRM with --summary -: exit %d, stdout %q", code, stdout.String())
	}
}

// TestSummaryToStdout: - writes a summary to stdout, after the output (the
// YAML stream, or the diff of --check); a run without a verdict writes no
// JSON there, and removes no file named -.
func TestSummaryToStdout(t *testing.T) {
	fleetRepo(t)
	stream := cli(t, "config.yaml").stdout
	r := cli(t, "config.yaml", "--summary", "-")
	rest, ok := strings.CutPrefix(r.stdout, stream+"\n## computeplane-fn\n")
	if r.code != 0 || !ok || !strings.Contains(rest, "| `tenant-acme` (acme) | yes | restricted |") {
		t.Errorf("--summary -: exit %d, stderr %q, the stream first: %v, then:\n%s", r.code, r.stderr, ok, rest)
	}
	r = cli(t, "--output-dir", "fleet", "--check", "--summary-json", "-", "--summary", "pr.md", "config.yaml")
	// The diff, then a blank line, then the JSON.
	diff, js, ok := strings.Cut(r.stdout, "\n\n{")
	var got struct{ Tenants []any }
	if r.code != 1 || !ok || !strings.HasPrefix(diff, "--- /dev/null\n") || json.Unmarshal([]byte("{"+js), &got) != nil || len(got.Tenants) != 3 {
		t.Errorf("--check --summary-json -: exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	if r := cli(t, "--output-dir", "fleet", "--summary-json", "-", "config.yaml"); r.code != 0 || !strings.HasPrefix(r.stdout, "{") {
		t.Errorf("writing the folder with --summary-json -: exit %d, stdout %.40q, want the JSON alone", r.code, r.stdout)
	}
	must(t, os.WriteFile("-", []byte("mine\n"), 0o644))
	must(t, os.WriteFile("tenants/bad.yaml", []byte("kind: Tenant\n"), 0o644))
	r = cli(t, "--output-dir", "fleet", "--summary-json", "-", "config.yaml")
	if r.code != 1 || r.stdout != "" {
		t.Errorf("a refused run with --summary-json -: %+v, want exit 1 and nothing on stdout", r)
	}
	if data, err := os.ReadFile("-"); err != nil || string(data) != "mine\n" {
		t.Errorf("the file named - was touched: %q, %v", data, err)
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
	if r := cli(t, "schema", "x"); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `unknown command "x" for "computeplane-fn schema"`) {
		t.Errorf("schema x: %+v, want a usage error", r)
	}
}

// TestBinaryCommandLine runs the built binary as a user does, for what
// issue 42 names: the version, help and completion commands, an unknown
// flag, and a usage error's exit status.
func TestBinaryCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{[]string{"version"}, 0, "computeplane-fn ", ""},
		{[]string{"help"}, 0, "Available Commands:", ""},
		{[]string{"completion", "powershell"}, 0, "Register-ArgumentCompleter", ""},
		{[]string{"--frobnicate"}, 2, "", "computeplane-fn: unknown flag: --frobnicate\nRun 'computeplane-fn --help' for usage.\n"},
		{[]string{"--check", "config.yaml"}, 2, "", "computeplane-fn: --check needs --output-dir\n"},
	} {
		cmd := exec.Command(binary, tc.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if exit, ok := err.(*exec.ExitError); ok {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.HasPrefix(stderr.String(), tc.errs) || (tc.errs == "" && stderr.Len() > 0) {
			t.Errorf("computeplane-fn %q: exit %d, stdout %.80q, stderr %q; want exit %d, %q on stdout and %q on stderr", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.errs)
		}
	}
}

// TestFleetRepoGuardMove: a render that moves the guard to another
// Kustomization out of order (here, laying a fleet of the default layout
// out in units: the operator's Kustomization of the folder would prune the
// guard that the account's unit creates, in no order) is refused, in a
// write and in a check, with the step to take first, and leaves the folder
// as it was and no JSON summary; --allow-guard-move writes it, and the next
// render moves nothing.
func TestFleetRepoGuardMove(t *testing.T) {
	repo := fleetRepo(t)
	if r := cli(t, "--output-dir", "fleet", "config.yaml"); r.code != 0 {
		t.Fatalf("render: %+v", r)
	}
	cfg, err := os.ReadFile("config.yaml")
	must(t, err)
	cfg = append(cfg, "  fleet:\n    sourceRef: {kind: GitRepository, name: fleet, namespace: flux-system}\n    path: ./fleet\n"...)
	must(t, os.WriteFile("config.yaml", cfg, 0o644))
	before := tree(t, filepath.Join(repo, "fleet"))
	must(t, os.WriteFile("s.json", []byte("{}"), 0o644))
	for _, args := range [][]string{
		{"--output-dir", "fleet", "--allow-prune", "--summary", "s.md", "--summary-json", "s.json", "config.yaml"},
		{"--output-dir", "fleet", "--check", "config.yaml"},
	} {
		r := cli(t, args...)
		for _, want := range []string{
			"refusing to move the guard or the fleet's account to another Kustomization",
			"ValidatingAdmissionPolicy computeplane-guard: from the Kustomization that applies the whole folder (fleet) to flux-system/computeplane-fleet-account",
			"kubectl annotate validatingadmissionpolicy,validatingadmissionpolicybinding computeplane-guard kustomize.toolkit.fluxcd.io/prune=disabled",
			"kubectl annotate clusterrole,clusterrolebinding computeplane-fleet kustomize.toolkit.fluxcd.io/prune=disabled",
			"kubectl -n flux-system annotate serviceaccount computeplane-fleet kustomize.toolkit.fluxcd.io/prune=disabled",
			"render again with --allow-guard-move",
			"fleet was left as it was",
		} {
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("%v: lacks %q: %+v", args, want, r)
			}
		}
		if diff := cmp.Diff(before, tree(t, filepath.Join(repo, "fleet"))); diff != "" {
			t.Errorf("%v changed the folder (-before +after):\n%s", args, diff)
		}
	}
	if _, err := os.Stat("s.json"); err == nil {
		t.Errorf("a refused render left a JSON summary")
	}
	if md, err := os.ReadFile("s.md"); err != nil || !strings.Contains(string(md), "refusing to move the guard or the fleet's account") {
		t.Errorf("the Markdown summary does not say why: %v\n%s", err, md)
	}
	if r := cli(t, "--output-dir", "fleet", "--allow-guard-move", "config.yaml"); r.code != 0 {
		t.Fatalf("--allow-guard-move: %+v", r)
	}
	if _, err := os.Stat("fleet/_account/_cluster/validatingadmissionpolicy-computeplane-guard.yaml"); err != nil {
		t.Errorf("the guard is not in the account's unit: %v", err)
	}
	if r := cli(t, "--output-dir", "fleet", "config.yaml"); r.code != 0 || !strings.Contains(r.stderr, "nothing written") {
		t.Errorf("the next render: %+v", r)
	}
}
