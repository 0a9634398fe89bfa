package input_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/input"
)

// TestReadStream: the one document that is not empty comes back with its
// own lines alone (from its "---"), whatever comments and empty documents
// surround it; the
// stream is charged to the budget; and what is not one YAML document is
// refused with the stream's name.
func TestReadStream(t *testing.T) {
	const doc = "kind: ResourceList\nitems: [] # none\n"
	for _, c := range []struct {
		name, in string
		root     bool // a document that is not empty is found
		doc      string
		problem  string
	}{
		{name: "alone", in: doc, root: true, doc: doc},
		{name: "comments and empty documents around", in: "# a\n---\n" + doc + "---\n# b\n--- # c\n", root: true, doc: "---\n" + doc},
		{name: "empty", in: "# nothing\n---\n"},
		{name: "two documents", in: doc + "---\n" + doc, problem: "stdin: expected one ResourceList, found a second YAML document (document 2)"},
		{name: "invalid YAML", in: "kind: [\n", problem: "stdin: invalid YAML: yaml: line 1"},
		{name: "binary", in: "\x7fELF\x00", problem: "stdin: not a YAML file (binary or not UTF-8)"},
		{name: "not UTF-8 past the first 64 KiB", in: strings.Repeat("# x\n", 20_000) + "a: \xe9\n", problem: "stdin: not a YAML file (binary or not UTF-8)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			budget := new(input.Budget)
			root, got, problems := budget.ReadStream(strings.NewReader(c.in), "stdin", "ResourceList")
			if c.problem != "" {
				if len(problems) != 1 || !strings.HasPrefix(problems[0].Error(), c.problem) {
					t.Fatalf("want one problem %q, got %v", c.problem, problems)
				}
				return
			}
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			if (root != nil) != c.root {
				t.Fatalf("root %v, want one: %v", root, c.root)
			}
			if diff := cmp.Diff(c.doc, string(got)); c.root && diff != "" {
				t.Errorf("the document's lines (-want +got):\n%s", diff)
			}
			if n := budget.Stats().Bytes; n != int64(len(c.in)) {
				t.Errorf("charged %d bytes, want %d", n, len(c.in))
			}
		})
	}
}

// TestReadStreamRefusesALargeFileFromItsSize: a regular file redirected to
// the stream that is larger than a run reads is refused without reading it.
func TestReadStreamRefusesALargeFileFromItsSize(t *testing.T) {
	name := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(input.MaxInputBytes + 1<<20); err != nil {
		t.Fatal(err)
	}
	_, _, problems := new(input.Budget).ReadStream(f, "stdin", "ResourceList")
	want := "stdin: the ResourceList is 257 MiB, larger than the 256 MiB one run reads"
	if len(problems) != 1 || problems[0].Error() != want {
		t.Fatalf("want %q, got %v", want, problems)
	}
}
