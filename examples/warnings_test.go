package examples_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
)

// warningLines returns the warning lines of a run's stderr, sorted.
func warningLines(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "computeplane-fn: warning: ") {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// TestWarningsOnStderrEveryMode runs the platform-delivery example, whose
// tenants' ComputePlanes run without Pod Security (a warning each), in
// every mode: standalone, the KRM function on stdin, and as a generator
// under the real kustomize CLI, which drops a function's results. Each
// prints the same warning lines on stderr, each once, and succeeds.
func TestWarningsOnStderrEveryMode(t *testing.T) {
	example, err := filepath.Abs("platform-delivery")
	if err != nil {
		t.Fatal(err)
	}
	standalone := run(t, example, nil, binary, "config.yaml")
	if standalone.code != 0 {
		t.Fatalf("standalone: exit %d: %s", standalone.code, standalone.stderr)
	}
	want := warningLines(standalone.stderr)
	if len(want) == 0 || !strings.Contains(strings.Join(want, "\n"), "Pod Security") {
		t.Fatalf("standalone: no Pod Security warning on stderr: %q", standalone.stderr)
	}

	// The KRM function, with its items from the ResourceList on stdin.
	krm := run(t, example, nil, "sh", "-c", `{ printf 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n'; sed 's/^/  /' config.yaml; printf 'items: []\n'; } | "$0"`, binary)
	if krm.code != 0 {
		t.Fatalf("KRM function: exit %d: %s", krm.code, krm.stderr)
	}
	if got := warningLines(krm.stderr); !slices.Equal(got, want) {
		t.Errorf("KRM function: warnings on stderr\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(krm.stdout, "severity: warning") {
		t.Errorf("KRM function: no result of severity warning in the ResourceList")
	}

	// A kustomize generator: kustomize hands it no items and drops its
	// results; stderr is all its user sees.
	dir := t.TempDir()
	for _, f := range []string{"definitions.yaml", "tenants.yaml", "apps.yaml"} {
		testfs.CopyTree(t, filepath.Join(example, f), filepath.Join(dir, f))
	}
	config, err := os.ReadFile(filepath.Join(example, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	generator := strings.Replace(string(config), "    config.kubernetes.io/local-config: \"true\"\n",
		"    config.kubernetes.io/local-config: \"true\"\n    config.kubernetes.io/function: |\n      exec:\n        path: "+binary+"\n", 1)
	if generator == string(config) {
		t.Fatal("platform-delivery/config.yaml has no local-config annotation to put the function beside")
	}
	for name, content := range map[string]string{
		"generator.yaml":     generator,
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\ngenerators:\n- generator.yaml\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	k := run(t, dir, nil, kustomize(t), "build", "--enable-alpha-plugins", "--enable-exec", ".")
	if k.code != 0 {
		t.Fatalf("kustomize build: exit %d: %s", k.code, k.stderr)
	}
	if got := warningLines(k.stderr); !slices.Equal(got, want) {
		t.Errorf("kustomize generator: warnings on stderr\n%s\nwant\n%s\n(all of stderr: %q)", strings.Join(got, "\n"), strings.Join(want, "\n"), k.stderr)
	}
	if !strings.Contains(k.stdout, "kind: HelmRelease") {
		t.Errorf("kustomize build rendered no HelmRelease:\n%s", k.stdout)
	}
}

// TestAppValuesChecked edits an app of the CI example as a person would,
// with a misspelled field and a value of the wrong type, and runs the
// example's own script: `./fleet.sh render` warns, naming the file, the app
// and each field, and renders; with spec.apps.values: Refuse the same
// inputs are refused, the fleet folder left as it was.
func TestAppValuesChecked(t *testing.T) {
	env := []string{"COMPUTEPLANE_FN=" + binary}
	dir := t.TempDir()
	testfs.CopyTree(t, "ci", dir)
	apps := filepath.Join(dir, "fleet", "apps", "acme.yaml")
	writeFile(t, apps, strings.Replace(readFile(t, apps), "spec:\n  users: 20\n", "spec:\n  users: twenty\n  admns: [alice]\n", 1))
	r := run(t, dir, env, "sh", "fleet.sh", "render")
	if r.code != 0 {
		t.Fatalf("render: exit %d: %s", r.code, r.stderr)
	}
	want := []string{
		"computeplane-fn: warning: fleet/apps/acme.yaml: JupyterHub tenant-acme/research: spec.admns: unknown field: the openAPISchema of ApplicationDefinition jupyterhub declares no such field",
		`computeplane-fn: warning: fleet/apps/acme.yaml: JupyterHub tenant-acme/research: spec.users: Invalid value: "string": spec.users in body must be of type integer: "string" (the openAPISchema of ApplicationDefinition jupyterhub)`,
	}
	got := warningLines(r.stderr)
	if len(got) != len(want) {
		t.Fatalf("render: warnings\n%s\nwant %d, beginning\n%s", strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("render: warning\n%s\nwant it to begin\n%s", got[i], want[i])
		}
	}
	release := readFile(t, filepath.Join(dir, "rendered", "tenant-acme", "helmrelease-jupyterhub-research.yaml"))
	if !strings.Contains(release, "users: twenty") {
		t.Errorf("the release does not hold the values as written:\n%s", release)
	}

	config := filepath.Join(dir, "fleet", "config.yaml")
	writeFile(t, config, readFile(t, config)+"  apps:\n    values: Refuse\n")
	before := readTree(t, filepath.Join(dir, "rendered"))
	writeFile(t, apps, strings.Replace(readFile(t, apps), "  users: twenty\n", "  users: 20\n", 1))
	r = run(t, dir, env, "sh", "fleet.sh", "render")
	if r.code != 1 || !strings.Contains(r.stderr, "fleet/apps/acme.yaml: JupyterHub tenant-acme/research: spec.admns: unknown field") ||
		strings.Contains(r.stderr, "spec.users") {
		t.Errorf("render under Refuse: exit %d, want 1 naming spec.admns alone:\n%s", r.code, r.stderr)
	}
	if diff := cmp.Diff(before, readTree(t, filepath.Join(dir, "rendered"))); diff != "" {
		t.Errorf("a refused render changed the fleet folder (-before +after):\n%s", diff)
	}
}
