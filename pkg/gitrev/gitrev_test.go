package gitrev_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/gitrev"
)

// gitRun runs git in dir, failing the test on an error.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, root string, files map[string]string) {
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

// TestFolderAtRevision reads a folder as a commit holds it, whatever the
// working tree holds now, from the folder or from below it.
func TestFolderAtRevision(t *testing.T) {
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q", "-b", "main")
	write(t, repo, map[string]string{
		"clusters/prod/rendered/tenant-a/helmrelease-x.yaml":    "x: 1\n",
		"clusters/prod/rendered/big.yaml":                       strings.Repeat("y", 100),
		"clusters/prod/rendered/sub dir/we\"ird.yaml":           "w: 1\n",
		"clusters/prod/config.yaml":                             "c: 1\n",
		"clusters/staging/rendered/tenant-a/helmrelease-x.yaml": "s: 1\n",
	})
	if err := os.Symlink("../config.yaml", filepath.Join(repo, "clusters/prod/rendered/link.yaml")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "-m", "base")
	base := gitRun(t, repo, "rev-parse", "HEAD")
	// The working tree moves on: the base is what the commit holds.
	write(t, repo, map[string]string{"clusters/prod/rendered/tenant-a/helmrelease-x.yaml": "x: 2\n"})
	gitRun(t, repo, "commit", "-q", "-am", "head")

	dir := filepath.Join(repo, "clusters", "prod", "rendered")
	f, err := gitrev.Open(dir, "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	if f.Path != "clusters/prod/rendered" || f.Commit != base {
		t.Errorf("Open: %+v, want path clusters/prod/rendered at %s", f, base)
	}
	files, err := f.Files(func(p string, size int64) bool { return size < 50 })
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, file := range files {
		got[file.Path] = string(file.Data)
	}
	want := map[string]string{"tenant-a/helmrelease-x.yaml": "x: 1\n", "sub dir/we\"ird.yaml": "w: 1\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files at the base (-want +got):\n%s", diff)
	}

	// A folder that does not exist yet, asked from below the repository's
	// top, and one the base does not hold.
	f, err = gitrev.Open(filepath.Join(repo, "clusters", "dev", "rendered"), base)
	if err != nil {
		t.Fatal(err)
	}
	if files, err := f.Files(nil); err != nil || len(files) != 0 || f.Path != "clusters/dev/rendered" {
		t.Errorf("a folder the base does not hold: %+v %v %v", f, files, err)
	}

	// A revision the clone does not have.
	if _, err := gitrev.Open(dir, "0123456789abcdef0123456789abcdef01234567"); err == nil || !strings.Contains(err.Error(), "git fetch --depth=1 origin 0123456789abcdef0123456789abcdef01234567") {
		t.Errorf("an unknown revision: %v, want the advice to fetch it", err)
	}
	if _, err := gitrev.Open(dir, "--output=x"); err == nil {
		t.Errorf("an option as the revision was taken")
	}
	if _, err := gitrev.Open(t.TempDir(), "HEAD"); err == nil || !strings.Contains(err.Error(), "no Git repository") {
		t.Errorf("a folder in no repository: %v", err)
	}
}
