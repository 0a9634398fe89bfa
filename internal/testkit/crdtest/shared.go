package crdtest

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedDir returns <module root>/../shared, the folder of reference data
// (CustomResourceDefinitions, Cozystack schemas) that sits beside the
// project in development and CI. The module root is the nearest folder
// above the working directory (a test's package folder) holding go.mod. When
// the folder is absent SharedDir skips the test, saying why, so that the
// project's tests still pass where the reference data is not available.
func SharedDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Skipf("failed to find the working directory (%v): ../shared is absent", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			shared := filepath.Join(filepath.Dir(dir), "shared")
			if info, err := os.Stat(shared); err != nil || !info.IsDir() {
				t.Skipf("%s: ../shared is absent", shared)
			}
			return shared
		}
		if filepath.Dir(dir) == dir {
			t.Skipf("no go.mod above %s: ../shared is absent", wd)
		}
	}
}

// LoadShared loads the CustomResourceDefinitions in SharedDir(t)/crds,
// skipping the test when ../shared is absent and failing it when they do not
// load.
func LoadShared(t testing.TB) *Registry {
	t.Helper()
	r, err := Load(filepath.Join(SharedDir(t), "crds"))
	if err != nil {
		t.Fatalf("failed to load the shared CustomResourceDefinitions: %v", err)
	}
	return r
}
