package output_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/output"
)

// managed returns the YAML of a generated object.
func managed(kind, ns, name string, extra ...string) []byte {
	return fmt.Appendf(nil, `apiVersion: helm.toolkit.fluxcd.io/v2
kind: %s
metadata:
  name: %s
  namespace: %s
  labels:
    app.kubernetes.io/managed-by: computeplane-fn
spec:
  interval: 5m
%s`, kind, name, ns, strings.Join(extra, ""))
}

func file(p string, data []byte) output.File { return output.File{Path: p, Data: data} }

// fleetFiles is a small fleet: two tenants with a cluster and an app each,
// and the platform source.
func fleetFiles(tenants ...string) []output.File {
	files := []output.File{file("cozy-system/artifactgenerator-computeplane-application.yaml", managed("ArtifactGenerator", "cozy-system", "computeplane-application"))}
	for _, t := range tenants {
		ns := "tenant-" + t
		files = append(files,
			file(ns+"/helmrelease-computeplane.yaml", managed("HelmRelease", ns, "computeplane")),
			file(ns+"/helmrelease-jupyterhub-lab.yaml", managed("HelmRelease", ns, "jupyterhub-lab")))
	}
	return files
}

// entry is what snapshot records of one path.
type entry struct {
	Mode    fs.FileMode
	Content string // file bytes or link target
	ModTime time.Time
}

// snapshot records everything under root, dot entries and links included,
// without following links.
func snapshot(t *testing.T, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{Mode: info.Mode()}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			e.Content, err = os.Readlink(p)
		case info.Mode().IsRegular():
			var b []byte
			b, err = os.ReadFile(p)
			e.Content = string(b)
			e.ModTime = info.ModTime()
		}
		out[filepath.ToSlash(rel)] = e
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// contents drops the modification times of a snapshot.
func contents(s map[string]entry) map[string]entry {
	out := make(map[string]entry, len(s))
	for p, e := range s {
		e.ModTime = time.Time{}
		out[p] = e
	}
	return out
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustWrite(t *testing.T, dir string, files []output.File) output.Changes {
	t.Helper()
	changes, err := output.WriteDir(context.Background(), dir, files, output.DirOptions{})
	if err != nil {
		t.Fatalf("WriteDir: %v", err)
	}
	return changes
}

func summarize(cs output.Changes) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Op)+" "+c.Path)
	}
	return out
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, e := range snapshot(t, root) {
		if e.Mode.IsRegular() {
			out[p] = e.Content
		}
	}
	return out
}

func TestWriteDirCreatesFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo", "clusters", "fleet")
	files := fleetFiles("a")
	changes := mustWrite(t, dir, files)
	want := []string{
		"added cozy-system/artifactgenerator-computeplane-application.yaml",
		"added tenant-a/helmrelease-computeplane.yaml",
		"added tenant-a/helmrelease-jupyterhub-lab.yaml",
	}
	if diff := cmp.Diff(want, summarize(changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	wantTree := map[string]string{}
	for _, f := range files {
		wantTree[f.Path] = string(f.Data)
	}
	if diff := cmp.Diff(wantTree, readTree(t, dir)); diff != "" {
		t.Errorf("folder (-want +got):\n%s", diff)
	}
	info, err := os.Stat(filepath.Join(dir, files[1].Path))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("a new file has mode %v, want 0644", info.Mode().Perm())
	}
}

func TestWriteDirUnchangedWritesNothing(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "fleet")
	files := fleetFiles("a", "b")
	mustWrite(t, dir, files)
	// Age every file, so that a rewrite would show in the modification time.
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, f := range files {
		if err := os.Chtimes(filepath.Join(dir, f.Path), old, old); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, root)
	changes := mustWrite(t, dir, files)
	if len(changes) != 0 {
		t.Errorf("an unchanged run reports changes: %v", summarize(changes))
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("an unchanged run touched the disk (-before +after):\n%s", diff)
	}
	check, err := output.WriteDir(context.Background(), dir, files, output.DirOptions{Check: true})
	if err != nil || len(check) != 0 {
		t.Errorf("a check of an up-to-date folder: %v, %v", summarize(check), err)
	}
}

func TestWriteDirPrunesRemovedTenant(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "fleet")
	mustWrite(t, dir, fleetFiles("a", "b", "c"))
	writeTree(t, dir, map[string]string{
		"tenant-c/README.md": "notes about tenant c\n", // keeps tenant-c alive
	})
	if err := os.Mkdir(filepath.Join(dir, "empty-before"), 0o755); err != nil {
		t.Fatal(err)
	}
	changes := mustWrite(t, dir, fleetFiles("a"))
	want := []string{
		"removed tenant-b/helmrelease-computeplane.yaml",
		"removed tenant-b/helmrelease-jupyterhub-lab.yaml",
		"removed tenant-c/helmrelease-computeplane.yaml",
		"removed tenant-c/helmrelease-jupyterhub-lab.yaml",
	}
	if diff := cmp.Diff(want, summarize(changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if _, err := os.Lstat(filepath.Join(dir, "tenant-b")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the emptied folder tenant-b is still there (%v)", err)
	}
	for _, keep := range []string{"tenant-c/README.md", "empty-before", "tenant-a/helmrelease-computeplane.yaml"} {
		if _, err := os.Lstat(filepath.Join(dir, keep)); err != nil {
			t.Errorf("%s: %v", keep, err)
		}
	}
	// The removed files show as deletions in their diff.
	if d := changes[0].Diff(); !strings.HasPrefix(d, "--- a/tenant-b/helmrelease-computeplane.yaml\n+++ /dev/null\n@@ -1,9 +0,0 @@\n-apiVersion") {
		t.Errorf("diff of a removed file:\n%s", d)
	}
}

func TestHandEditedFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	files := fleetFiles("a")
	mustWrite(t, dir, files)
	edited := filepath.Join(dir, "tenant-a", "helmrelease-jupyterhub-lab.yaml")
	orig, _ := os.ReadFile(edited)
	if err := os.WriteFile(edited, bytes.Replace(orig, []byte("interval: 5m"), []byte("interval: 1m"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(edited, 0o600); err != nil {
		t.Fatal(err)
	}
	changes, err := output.WriteDir(context.Background(), dir, files, output.DirOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"changed tenant-a/helmrelease-jupyterhub-lab.yaml"}, summarize(changes)); diff != "" {
		t.Fatalf("changes (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := changes.WriteDiff(&buf); err != nil {
		t.Fatal(err)
	}
	wantDiff := `--- a/tenant-a/helmrelease-jupyterhub-lab.yaml
+++ b/tenant-a/helmrelease-jupyterhub-lab.yaml
@@ -6,4 +6,4 @@
   labels:
     app.kubernetes.io/managed-by: computeplane-fn
 spec:
-  interval: 1m
+  interval: 5m
`
	if diff := cmp.Diff(wantDiff, buf.String()); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
	mustWrite(t, dir, files)
	got, _ := os.ReadFile(edited)
	if !bytes.Equal(got, orig) {
		t.Errorf("the hand edit was not undone:\n%s", got)
	}
	info, _ := os.Stat(edited)
	if info.Mode().Perm() != 0o600 {
		t.Errorf("the restored file has mode %v; a replaced file keeps its mode (0600)", info.Mode().Perm())
	}
}

func TestForeignFilesSurvive(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "fleet")
	outside := filepath.Join(root, "outside")
	writeTree(t, outside, map[string]string{"stolen.yaml": string(managed("HelmRelease", "x", "y"))})
	foreign := map[string]string{
		"README.md":                        "# fleet\n",
		"kustomization.yaml":               "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n",
		"tenant-a/extra.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n",
		"tenant-a/mixed.yaml":              string(managed("HelmRelease", "tenant-a", "x")) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n",
		"tenant-a/broken.yaml":             "metadata: [unclosed\n",
		"tenant-a/notes.txt":               string(managed("HelmRelease", "tenant-a", "looks-managed")),
		".hidden.yaml":                     string(managed("HelmRelease", "x", "hidden")),
		".git/config":                      "[core]\n",
		".github/workflows/render.yaml":    string(managed("HelmRelease", "x", "ci")),
		"tenant-gone/.keep":                "",
		"tenant-gone/helmrelease-old.yaml": string(managed("HelmRelease", "tenant-gone", "old")),
	}
	writeTree(t, dir, foreign)
	if err := os.Symlink(filepath.Join(outside, "stolen.yaml"), filepath.Join(dir, "tenant-a", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "linked-dir")); err != nil {
		t.Fatal(err)
	}
	files := fleetFiles("a")
	changes := mustWrite(t, dir, files)
	var added int
	for _, c := range changes {
		if c.Op == output.Added {
			added++
		}
	}
	if added != len(files) || len(changes) != len(files)+1 || changes[len(changes)-1].Path != "tenant-gone/helmrelease-old.yaml" {
		t.Errorf("changes: %v", summarize(changes))
	}
	got := readTree(t, dir)
	for p, content := range foreign {
		if p == "tenant-gone/helmrelease-old.yaml" {
			if _, ok := got[p]; ok {
				t.Errorf("%s: a stale generated file survived", p)
			}
			continue
		}
		if got[p] != content {
			t.Errorf("%s: a foreign file was changed or removed", p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tenant-gone")); err != nil {
		t.Errorf("tenant-gone holds a dot file and must stay: %v", err)
	}
	for _, link := range []string{"tenant-a/link.yaml", "linked-dir"} {
		if info, err := os.Lstat(filepath.Join(dir, link)); err != nil || info.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: the link did not survive (%v)", link, err)
		}
	}
	if got := readTree(t, outside); got["stolen.yaml"] == "" || len(got) != 1 {
		t.Errorf("the folder outside was touched: %v", got)
	}
	// Check ignores all of them: the folder is up to date.
	check, err := output.WriteDir(context.Background(), dir, files, output.DirOptions{Check: true})
	if err != nil || len(check) != 0 {
		t.Errorf("check: %v, %v", summarize(check), err)
	}
}

func TestWriteDirRefusesUnsafePaths(t *testing.T) {
	ok := managed("HelmRelease", "tenant-a", "x")
	cases := []struct {
		name string
		path string
		data []byte
		want string
	}{
		{"parent", "../escape.yaml", ok, "not a clean path"},
		{"deep parent", "tenant-a/../../escape.yaml", ok, "not a clean path"},
		{"absolute", "/tmp/escape.yaml", ok, "not a clean path"},
		{"unclean", "tenant-a//x.yaml", ok, "not a clean path"},
		{"dot segment", "./x.yaml", ok, "not a clean path"},
		{"dot folder", ".git/hooks.yaml", ok, "starts with a dot"},
		{"dot file", "tenant-a/.x.yaml", ok, "starts with a dot"},
		{"backslash", `..\escape.yaml`, ok, "backslash"},
		{"nul", "x\x00.yaml", ok, "NUL"},
		{"empty", "", ok, "an empty path"},
		{"not yaml", "tenant-a/x.sh", ok, "not a .yaml"},
		{"folder", "tenant-a/", ok, "not a clean path"},
		{"no label", "tenant-a/x.yaml", []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"), "label"},
		{"empty file", "tenant-a/x.yaml", nil, "label"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "fleet")
			mustWrite(t, dir, fleetFiles("a"))
			before := snapshot(t, root)
			files := append(fleetFiles(), file(tc.path, tc.data))
			_, err := output.WriteDir(context.Background(), dir, files, output.DirOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteDir: got %v, want an error containing %q", err, tc.want)
			}
			if _, cerr := output.WriteDir(context.Background(), dir, files, output.DirOptions{Check: true}); cerr == nil {
				t.Errorf("a check accepted the path")
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("a refused run changed the disk (-before +after):\n%s", diff)
			}
		})
	}
}

func TestWriteDirRefusesClashes(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, root, dir string)
		files []output.File
		want  string
	}{
		{
			name: "foreign file at a generated path",
			setup: func(t *testing.T, root, dir string) {
				writeTree(t, dir, map[string]string{"tenant-a/helmrelease-computeplane.yaml": "# mine\nkind: HelmRelease\n"})
			},
			files: fleetFiles("a"),
			want:  "tenant-a/helmrelease-computeplane.yaml: not written by computeplane-fn",
		},
		{
			name: "link to a folder outside",
			setup: func(t *testing.T, root, dir string) {
				if err := os.MkdirAll(filepath.Join(root, "outside"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(root, "outside"), filepath.Join(dir, "tenant-a")); err != nil {
					t.Fatal(err)
				}
			},
			files: fleetFiles("a"),
			want:  "tenant-a: is a symbolic link",
		},
		{
			name: "link at a generated path",
			setup: func(t *testing.T, root, dir string) {
				writeTree(t, root, map[string]string{"outside/target.yaml": string(managed("HelmRelease", "tenant-a", "computeplane"))})
				if err := os.MkdirAll(filepath.Join(dir, "tenant-a"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(root, "outside/target.yaml"), filepath.Join(dir, "tenant-a/helmrelease-computeplane.yaml")); err != nil {
					t.Fatal(err)
				}
			},
			files: fleetFiles("a"),
			want:  "tenant-a/helmrelease-computeplane.yaml: is a symbolic link",
		},
		{
			name: "folder at a generated path",
			setup: func(t *testing.T, root, dir string) {
				if err := os.MkdirAll(filepath.Join(dir, "tenant-a/helmrelease-computeplane.yaml"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			files: fleetFiles("a"),
			want:  "is a folder",
		},
		{
			name:  "two files at one path",
			setup: func(t *testing.T, root, dir string) {},
			files: append(fleetFiles("a"), file("tenant-a/helmrelease-computeplane.yaml", managed("HelmRelease", "tenant-a", "other"))),
			want:  "given twice",
		},
		{
			name:  "file and folder of one name",
			setup: func(t *testing.T, root, dir string) {},
			files: append(fleetFiles("a"), file("tenant-a/helmrelease-computeplane.yaml/x.yaml", managed("HelmRelease", "tenant-a", "other"))),
			want:  "is a file and the folder of",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "fleet")
			mustWrite(t, dir, fleetFiles("z"))
			tc.setup(t, root, dir)
			before := snapshot(t, root)
			_, err := output.WriteDir(context.Background(), dir, tc.files, output.DirOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("WriteDir: got %v, want an error containing %q", err, tc.want)
			}
			if _, cerr := output.WriteDir(context.Background(), dir, tc.files, output.DirOptions{Check: true}); cerr == nil || !strings.Contains(cerr.Error(), tc.want) {
				t.Errorf("check: got %v, want an error containing %q", cerr, tc.want)
			}
			if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
				t.Errorf("a refused run changed the disk (-before +after):\n%s", diff)
			}
		})
	}
}

// TestWriteDirInterrupted makes every single change the writer makes to the
// disk fail in turn: in a run that adds, replaces and prunes files and
// creates and removes folders, and in a first run that creates the output
// folder and its parents. Whichever step fails, the disk, the folder next to
// the output folder included, must be exactly as before.
func TestWriteDirInterrupted(t *testing.T) {
	scenarios := map[string]func(t *testing.T) (root, dir string, files []output.File){
		"update": func(t *testing.T) (root, dir string, files []output.File) {
			root = t.TempDir()
			dir = filepath.Join(root, "fleet")
			mustWrite(t, dir, fleetFiles("a", "b", "gone"))
			writeTree(t, dir, map[string]string{"README.md": "mine\n"})
			files = fleetFiles("a", "b", "new")
			files[1].Data = managed("HelmRelease", "tenant-a", "computeplane", "  timeout: 30m\n")
			return root, dir, files
		},
		"first run": func(t *testing.T) (root, dir string, files []output.File) {
			root = t.TempDir()
			return root, filepath.Join(root, "repo", "clusters", "fleet"), fleetFiles("a", "b")
		},
	}
	for name, setup := range scenarios {
		t.Run(name, func(t *testing.T) {
			// A run without failures, to count its steps.
			root, dir, files := setup(t)
			calls := output.FailAt(t, -1)
			mustWrite(t, dir, files)
			steps := calls()
			want := snapshot(t, root)
			if steps < 8 {
				t.Fatalf("only %d steps; the test exercises too little", steps)
			}
			for n := 1; n <= steps; n++ {
				t.Run(fmt.Sprintf("step %d of %d", n, steps), func(t *testing.T) {
					root, dir, files := setup(t)
					before := snapshot(t, root)
					output.FailAt(t, n)
					_, err := output.WriteDir(context.Background(), dir, files, output.DirOptions{})
					got := snapshot(t, root)
					if err == nil {
						// Some steps have a fallback (staging inside the
						// output folder, moving instead of linking): the run
						// then completes and leaves nothing behind.
						if diff := cmp.Diff(contents(want), contents(got)); diff != "" {
							t.Errorf("a run recovering from a failure at step %d wrote (-want +got):\n%s", n, diff)
						}
						return
					}
					if !errors.Is(err, output.ErrInjected) {
						t.Fatalf("WriteDir: %v, want the injected failure", err)
					}
					if n == steps {
						// The last step removes the staging folder: the output
						// folder is complete and the error says what is left.
						if !strings.Contains(err.Error(), "failed to remove the staging folder") {
							t.Errorf("error: %v", err)
						}
						for p, e := range want {
							if g, ok := got[p]; !ok || g.Content != e.Content {
								t.Errorf("%s: not written", p)
							}
						}
						return
					}
					if diff := cmp.Diff(before, got); diff != "" {
						t.Errorf("a run failing at step %d changed the disk (%v) (-before +after):\n%s", n, err, diff)
					}
				})
			}
		})
	}
}

func TestWriteDirCancelled(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "fleet")
	mustWrite(t, dir, fleetFiles("a"))
	before := snapshot(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := output.WriteDir(ctx, dir, fleetFiles("a", "b"), output.DirOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteDir: %v, want context.Canceled", err)
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a cancelled run changed the disk (-before +after):\n%s", diff)
	}
}

func TestWriteDirThroughLinkedFolder(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "checkout", "fleet")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "fleet")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, link, fleetFiles("a"))
	if len(readTree(t, real)) != 3 {
		t.Errorf("the output folder given as a link was not written through: %v", readTree(t, real))
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link itself was replaced: %v", err)
	}
}

func TestWriteDirRefusesFileAsFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "fleet")
	writeTree(t, root, map[string]string{"fleet": "not a folder\n"})
	for _, check := range []bool{false, true} {
		if _, err := output.WriteDir(context.Background(), dir, fleetFiles("a"), output.DirOptions{Check: check}); err == nil || !strings.Contains(err.Error(), "is not a folder") {
			t.Errorf("got %v, want an error saying the output folder is not a folder", err)
		}
	}
}

func TestCheckDirMissingFolder(t *testing.T) {
	root := t.TempDir()
	changes, err := output.WriteDir(context.Background(), filepath.Join(root, "fleet"), fleetFiles("a"), output.DirOptions{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 3 || changes[0].Op != output.Added {
		t.Errorf("changes: %v", summarize(changes))
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("a check created %v", entries)
	}
	if d := changes[0].Diff(); !strings.HasPrefix(d, "--- /dev/null\n+++ b/cozy-system/artifactgenerator-computeplane-application.yaml\n@@ -0,0 +1,9 @@\n+apiVersion") {
		t.Errorf("diff of an added file:\n%s", d)
	}
}

func TestIsManaged(t *testing.T) {
	cases := []struct {
		name string
		data string
		want bool
	}{
		{"generated", string(managed("HelmRelease", "a", "b")), true},
		{"two generated", string(managed("HelmRelease", "a", "b")) + "---\n" + string(managed("HelmRelease", "a", "c")), true},
		{"kustomization with the label", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata:\n  name: unit\n  labels:\n    app.kubernetes.io/managed-by: computeplane-fn\nresources: [a.yaml]\n", true},
		{"with comments and empty documents", "# generated\n---\n" + string(managed("HelmRelease", "a", "b")) + "---\n", true},
		{"one document without the label", string(managed("HelmRelease", "a", "b")) + "---\nkind: ConfigMap\n", false},
		{"other manager", "metadata:\n  labels:\n    app.kubernetes.io/managed-by: Helm\n", false},
		{"label elsewhere", "spec:\n  labels:\n    app.kubernetes.io/managed-by: computeplane-fn\n", false},
		{"label as a list", "metadata:\n  labels:\n    app.kubernetes.io/managed-by: [computeplane-fn]\n", false},
		{"empty", "", false},
		{"only comments", "# nothing\n", false},
		{"not a mapping", "- a\n- b\n", false},
		{"broken", "metadata: {labels: [\n", false},
		{"binary", "\xff\xfe", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := output.IsManaged([]byte(tc.data)); got != tc.want {
				t.Errorf("IsManaged = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWriteDirUnwritableFolder makes a real write fail: a tenant folder
// without write permission (which root ignores, so the test skips there;
// TestWriteDirInterrupted covers every step with injected failures).
func TestWriteDirUnwritableFolder(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which may write into any folder")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "fleet")
	mustWrite(t, dir, fleetFiles("a", "b"))
	locked := filepath.Join(dir, "tenant-b")
	if err := os.Chmod(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	before := snapshot(t, root)
	files := fleetFiles("a", "b")
	files = append(files, file("tenant-b/helmrelease-n8n-flows.yaml", managed("HelmRelease", "tenant-b", "n8n-flows")))
	files[1].Data = managed("HelmRelease", "tenant-a", "computeplane", "  timeout: 30m\n")
	if _, err := output.WriteDir(context.Background(), dir, files, output.DirOptions{}); err == nil {
		t.Fatal("WriteDir wrote into a folder without write permission")
	}
	if diff := cmp.Diff(before, snapshot(t, root)); diff != "" {
		t.Errorf("a failed run changed the disk (-before +after):\n%s", diff)
	}
}
