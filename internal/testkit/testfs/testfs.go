// Package testfs holds the file-tree helpers that the tests which run the
// built binary share: copying an example or a fleet into a temporary folder.
package testfs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// CopyTree copies the folder from (or a single file) to to, keeping file
// permissions, and fails the test on any error.
func CopyTree(t testing.TB, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("failed to copy %s to %s: %v", from, to, err)
	}
}
