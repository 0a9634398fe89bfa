package checksums_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/tools/release/checksums"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriteAndVerify(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"b":        "bee\n",
		"a":        "",
		".hidden":  "left out",
		"oci/blob": "left out: a folder",
	})
	if _, err := checksums.Write(dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, checksums.File))
	if err != nil {
		t.Fatal(err)
	}
	// The sums sha256sum prints for an empty file and for "bee\n".
	want := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a\n" +
		"c150e5a8a604acebd8d15bd7bf8ea96b2874bdcc91dee6319977d353251283b0  b\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("SHA256SUMS (-want +got):\n%s", diff)
	}
	if err := checksums.Verify(dir); err != nil {
		t.Errorf("Verify right after Write: %v", err)
	}

	writeFiles(t, dir, map[string]string{"b": "changed\n", "c": "new\n"})
	if err := os.Remove(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	err = checksums.Verify(dir)
	for _, want := range []string{"a: named in SHA256SUMS but missing", "b: sha256 ", "c: not in SHA256SUMS"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Verify of a changed folder: %v; want %q", err, want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, line := range []string{"nothex  a\n", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n"} {
		if _, err := checksums.Parse([]byte(line)); err == nil {
			t.Errorf("Parse(%q) accepted it", line)
		}
	}
	sums, err := checksums.Parse([]byte("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 *a\n"))
	if err != nil || len(sums) != 1 || sums[0].Name != "a" {
		t.Errorf("Parse of binary mode: %v, %v", sums, err)
	}
}
