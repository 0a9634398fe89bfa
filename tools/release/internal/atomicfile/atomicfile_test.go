package atomicfile_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/tools/release/internal/atomicfile"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "file")
	if err := atomicfile.Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "done"); return err }); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "done" {
		t.Errorf("read back %q, %v", data, err)
	}
	failed := errors.New("half way")
	err := atomicfile.Write(path, func(w io.Writer) error { io.WriteString(w, "half"); return failed })
	if !errors.Is(err, failed) {
		t.Errorf("Write: %v, want the writer's error", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "done" {
		t.Errorf("a failed write changed the file: %q", data)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a failed write left files behind: %v", entries)
	}
}
