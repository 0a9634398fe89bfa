package disttest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBinariesAreReproducible builds the release binaries a second time
// from a copy of the source tree in another folder, through the same make
// target with the same VERSION and COMMIT, and compares the bytes with
// dist/. linux/amd64 is built with an empty build cache, so that every
// package is compiled again, not taken from the cache of the first build;
// the other platforms share the cache for the dependencies (the module's
// own packages are compiled again: their folder differs).
func TestBinariesAreReproducible(t *testing.T) {
	e := setup(t)
	src := filepath.Join(t.TempDir(), "elsewhere", "computeplane-fn")
	copySource(t, e.project, src)
	out := filepath.Join(t.TempDir(), "dist")
	build := func(platforms string, gocache string) {
		t.Helper()
		cmd := exec.Command("make", "--no-print-directory", "-C", src, "dist-bin",
			"DIST="+out, "DIST_PLATFORMS="+platforms, "VERSION="+e.version, "COMMIT="+e.commit)
		cmd.Env = os.Environ()
		if gocache != "" {
			cmd.Env = append(cmd.Env, "GOCACHE="+gocache)
		}
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make dist-bin in %s: %v\n%s", src, err, b)
		}
	}
	build("linux/amd64", t.TempDir())
	build("linux/arm64 darwin/amd64 darwin/arm64", "")
	for _, p := range distPlatforms {
		name := filepath.Base(e.binary(p))
		first, second := sha256File(t, e.binary(p)), sha256File(t, filepath.Join(out, name))
		if first != second {
			t.Errorf("%s: sha256 %s in dist/, %s built again from %s", name, first, second, src)
		} else {
			t.Logf("%s: sha256 %s both times", name, first)
		}
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// copySource copies the project's source tree, without what builds and
// tests leave in it (bin, dist, .work) and without Git: the copy is no
// work tree, which is why the build gets VERSION and COMMIT from the test.
func copySource(t *testing.T, from, to string) {
	t.Helper()
	if err := copyDir(from, to, ".git", "bin", "dist", ".work"); err != nil {
		t.Fatalf("copy the source: %v", err)
	}
}

// copyDir copies the regular files and folders below from to to, leaving
// out the top-level entries named in skip, and symbolic links (the build
// and the function need none).
func copyDir(from, to string, skip ...string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		if slices.Contains(skip, strings.SplitN(filepath.ToSlash(rel), "/", 2)[0]) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, info.Mode().Perm()|0o444)
		}
		return nil
	})
}
