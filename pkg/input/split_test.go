package input

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/fleetgen"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// describe renders what Read returns of a file: identity, origin and the
// whole node with its comments, or the problems.
func describe(t *testing.T, objs []api.Object, problems api.Problems) string {
	t.Helper()
	if len(problems) > 0 {
		return "problems: " + problems.Error()
	}
	var b strings.Builder
	for _, o := range objs {
		fmt.Fprintf(&b, "--- %s %d %s %s %s/%s\n", o.Origin.File, o.Origin.Index, o.APIVersion, o.Kind, o.Namespace, o.Name)
		out, err := yaml.Marshal(o.Node)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
	}
	return b.String()
}

var splitCases = []string{
	"a: 1\n---\nb: 2\n---\nc: 3\n",
	"# head\na: 1 # line\n# foot\n---\n# head of b\nb: 2\n...\n---\nc: 3\n",
	"---\n---\na: 1\n---\n\n---\nb: 2\n--- # a comment on the marker\nc: 3\n---\td: 4\n",
	"a: |\n  text\n  ---\n  more\n---\nb: >\n  folded\n---\nc: \"multi\n  line\"\n",
	"a: \"x\n---\ny\"\n---\nb: 2\n",
	"a: [1,\n---\n2]\n---\nb: 2\n",
	"a: x\n  y\n---\nb: 1\n",
	"%YAML 1.2\n---\na: 1\n---\nb: 2\n",
	"--- |\nline1\n---\nline2\n",
	"a: 1\r\n---\r\nb: 2\r\n---\r\nc: 3\r\n",
	"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: A, metadata: {name: a}}\n- {apiVersion: v1, kind: B, metadata: {name: b}}\n---\napiVersion: v1\nkind: C\nmetadata: {name: c}\n",
	"a: &x {k: v}\nb: *x\n---\nc: *x\n",
	"- not an object\n---\na: 1\n",
	"a: 1\n---x: 2\n---\nb: 3\n",
	"a: 1\n# foot\n\n  \n---\nb: 2\n  # indented foot\n---\nc: 3\n#\n---\nd: 4\n",
	"a: |\n  # text, not a comment\n---\nb: 2\n",
}

// TestDecodeInPiecesMatchesWhole decodes every case and the fixtures'
// inputs in pieces as small as one document and compares the objects,
// their document numbers and their nodes, comments included, or the error,
// with decoding the file in one piece.
func TestDecodeInPiecesMatchesWhole(t *testing.T) {
	cases := append([]string(nil), splitCases...)
	files, _ := filepath.Glob("../../fixtures/*/input*.yaml")
	var all bytes.Buffer
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, string(data))
		if all.Len() > 0 {
			all.WriteString("---\n")
		}
		all.Write(data)
	}
	cases = append(cases, all.String())

	// A generated fleet as one file.
	dir := t.TempDir()
	p := fleetgen.Defaults(20)
	p.AppsPerTenant = 4
	if _, err := fleetgen.Generate(dir, p); err != nil {
		t.Fatal(err)
	}
	var fleetFile bytes.Buffer
	fleetFiles, _ := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	for _, f := range fleetFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fleetFile.WriteString("---\n")
		fleetFile.Write(data)
	}
	cases = append(cases, fleetFile.String())

	for i, c := range cases {
		data := []byte(c)
		objs, problems := Decode(data, "f.yaml")
		want := describe(t, objs, problems)
		for _, size := range []int{1, 7, 64, 1000, 1 << 20} {
			got, problems := decodeFileAs(new(Budget), data, "f.yaml", size, asRead, objectOf)
			if diff := cmp.Diff(want, describe(t, got, problems)); diff != "" {
				t.Errorf("case %d, pieces of %d bytes (-whole +pieces):\n%s\ninput:\n%s", i, size, diff, c)
			}
		}
	}
}

func TestSplitDocuments(t *testing.T) {
	data := []byte("a: 1\n---\nb: 2\n---x\n--- \nc: 3\n---")
	got := splitDocuments(data, 1)
	want := []string{"a: 1\n", "---\nb: 2\n---x\n", "--- \nc: 3\n", "---"}
	var gotS []string
	for _, p := range got {
		gotS = append(gotS, string(p))
	}
	if diff := cmp.Diff(want, gotS); diff != "" {
		t.Errorf("pieces (-want +got):\n%s", diff)
	}
	if splitDocuments([]byte("%YAML 1.2\n---\na: 1\n---\nb: 2\n"), 1) != nil {
		t.Error("a file with a directive was cut")
	}
	if splitDocuments([]byte("a: 1\n---\n\uFEFFb: 2\n"), 1) != nil {
		t.Error("a file with a byte order mark past its start was cut")
	}
}
