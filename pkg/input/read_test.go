package input_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

func TestDecodeUnwrapsListsAndSkipsEmptyDocuments(t *testing.T) {
	objs, err := input.Decode([]byte(`---
# only a comment
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: n}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: n}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
`), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.Name+"@"+o.Origin.File)
	}
	if diff := cmp.Diff([]string{"a@f.yaml", "b@f.yaml", "c@f.yaml"}, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDecodeRefusals(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"binary", "\x00\x01\x02", "binary"},
		{"malformed", "a: [b\n", "invalid YAML"},
		{"scalar document", "just text\n", "expected an object"},
		{"list items not a list", "apiVersion: v1\nkind: List\nitems: {a: b}\n", "items must be a list"},
		{"list item not an object", "apiVersion: v1\nkind: List\nitems: [3]\n", "items[0]: must be an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := input.Decode([]byte(tc.data), "f.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "f.yaml") {
				t.Errorf("got %v, want an error naming f.yaml and %q", err, tc.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/x.yaml", "a/sub/y.yml", "a/.hidden/z.yaml", "a/readme.md", "b.yaml", "c.yaml"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("{}"), 0o644)
	}
	files, err := input.Expand(dir, []string{"a/", "*.yaml", "b.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		files[i], _ = filepath.Rel(dir, files[i])
	}
	if diff := cmp.Diff([]string{"a/sub/y.yml", "a/x.yaml", "b.yaml", "c.yaml"}, files); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := input.Expand(dir, []string{"missing/"}); err == nil || !strings.Contains(err.Error(), `"missing/"`) {
		t.Errorf("a missing input: got %v", err)
	}
}

func TestDecodeProblems(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string // Problem.Error() of every problem, in order
	}{
		{name: "binary", src: "\x00\x01", want: []string{"x.yaml: not a YAML file (binary or not UTF-8)"}},
		{name: "malformed", src: "a: [\n", want: []string{"x.yaml: document 1: invalid YAML: yaml: line 1: did not find expected node content"}},
		{name: "scalar document", src: "a\n---\nb\n", want: []string{"x.yaml: document 1: expected an object (a YAML map), found the string \"a\"", "x.yaml: document 2: expected an object (a YAML map), found the string \"b\""}},
		{name: "list items not objects", src: "apiVersion: v1\nkind: List\nitems: [1, {apiVersion: v1, kind: A}]\n", want: []string{"x.yaml: List: items[0]: must be an object (a YAML map), not the number 1"}},
		{name: "list item aliases another", src: "apiVersion: v1\nkind: List\nitems:\n- &a {apiVersion: v1, kind: A, metadata: {name: a}}\n- {apiVersion: v1, kind: A, metadata: {name: b}, spec: {x: *a}}\n", want: []string{"x.yaml: A b: spec.x: alias *a refers to an anchor outside this object; every object must stand on its own (objects are written separately and in another order), so write the value out"}},
		{name: "aliased identity", src: "apiVersion: v1\nkind: &k A\nspec: {kind: *k}\nmetadata:\n  name: &n a\n  namespace: *n\n", want: []string{"x.yaml: A a/a: metadata.namespace: must be written out, not a YAML alias (*n): tools that read it do not follow aliases"}},
		{name: "each object reported", src: "apiVersion: v1\nkind: A\nx: {a: 1, a: 2}\n---\napiVersion: v1\nkind: B\ny: {<<: {}}\n", want: []string{"x.yaml: A: x.a: is set twice in this map (duplicate key)", "x.yaml: B: y.<<: " + yamlnode.ErrMergeKey.Error()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, problems := input.Decode([]byte(tt.src), "x.yaml")
			if len(problems) == 0 || objs != nil {
				t.Fatalf("want problems and no objects, got %d problems and %d objects", len(problems), len(objs))
			}
			var got []string
			for _, p := range problems {
				got = append(got, p.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestBudgetIsShared checks that the limits count a whole run: files read
// through one budget add up.
func TestBudgetIsShared(t *testing.T) {
	var b input.Budget
	doc := []byte("apiVersion: v1\nkind: A\n")
	for i := 0; i < 3; i++ {
		if _, err := b.Decode(doc, "x.yaml"); err != nil {
			t.Fatal(err)
		}
	}
	if s := b.Stats(); s.Objects != 3 || s.Bytes != int64(3*len(doc)) || s.Nodes != 15 {
		t.Errorf("stats %+v, want 3 objects, %d bytes, 15 nodes", s, 3*len(doc))
	}
}

func TestExpandInside(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	for _, p := range []string{"in/a.yaml", "in/.hidden/b.yaml", "in/c.txt"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "in", "link.yaml")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if got, err := input.ExpandInside(dir, []string{"in/a.yaml", "in/*.txt"}); err != nil || len(got) != 2 {
		t.Errorf("ExpandInside = %v, %v; want two files", got, err)
	}
	for pattern, want := range map[string]string{
		"../x":                      "must stay inside the config's folder",
		"in/../../x":                "must stay inside the config's folder",
		"/etc/passwd":               "must be relative to the config's folder",
		"in/":                       "in/link.yaml leads outside the config's folder",
		"in/link.yaml":              "in/link.yaml leads outside the config's folder",
		filepath.Join(outside, "*"): "must be relative",
	} {
		_, err := input.ExpandInside(dir, []string{pattern})
		if err == nil || !strings.Contains(filepath.ToSlash(err.Error()), want) {
			t.Errorf("ExpandInside(%q) = %v, want %q", pattern, err, want)
		}
	}
	// Command-line inputs may be anywhere.
	if got, err := input.Expand(dir, []string{filepath.Join(outside, "*.yaml")}); err != nil || len(got) != 1 {
		t.Errorf("Expand outside = %v, %v; want one file", got, err)
	}
}

// TestReadInsideRefusesLinksOut: Read itself opens the inputs of a config
// through an os.Root of the folder, so a file that links out is refused
// however it is named.
func TestReadInsideRefusesLinksOut(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	for _, pattern := range []string{".", "*.yaml", "link.yaml"} {
		if _, err := input.Read([]string{pattern}, input.Options{Dir: dir, Config: &api.Config{}}); err == nil || !strings.Contains(err.Error(), "link.yaml leads outside the config's folder") {
			t.Errorf("Read(%q) = %v, want link.yaml refused", pattern, err)
		}
	}
	// Named on the command line, it is read.
	if objs, err := input.Read([]string{filepath.Join(dir, "link.yaml")}, input.Options{}); err != nil || len(objs) != 1 {
		t.Errorf("Read outside = %v, %v; want the Secret", objs, err)
	}
}

// bomb is an object that expands to 10 million nodes with its aliases
// followed, more than MaxObjectNodes: a limit of the whole run.
const bomb = `apiVersion: v1
kind: ConfigMap
metadata: {name: bomb}
data:
  a: &a [x, x, x, x, x, x, x, x, x, x]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
  g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
`

// bombProblem is the problem of bomb, after its file and object.
const bombProblem = "data.f[7]: expands to more than 1,000,000 YAML nodes with its aliases followed (a YAML alias bomb?)"

// TestExhaustedEndsTheRun checks that a limit of the whole run exhausts
// the budget and ends the reading at once, after the problems before it,
// and that a problem of the user's own does not.
func TestExhaustedEndsTheRun(t *testing.T) {
	var b input.Budget
	if _, problems := b.Decode([]byte("just text\n"), "x.yaml"); len(problems) != 1 || b.Exhausted() {
		t.Fatalf("a scalar document: %v, exhausted %v; want one problem and a budget that is not exhausted", problems, b.Exhausted())
	}

	// In a v1 List, the items after the bomb are not read: the duplicate
	// key of the last one goes unreported.
	list := "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: A, metadata: {name: a}, x: {k: 1, k: 2}}\n- " +
		strings.ReplaceAll(strings.TrimSuffix(bomb, "\n"), "\n", "\n  ") +
		"\n- {apiVersion: v1, kind: C, metadata: {name: c}, x: {k: 1, k: 2}}\n"
	_, problems := new(input.Budget).Decode([]byte(list), "list.yaml")
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	want := []string{
		"list.yaml: A a: x.k: is set twice in this map (duplicate key)",
		"list.yaml: ConfigMap bomb: " + bombProblem,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems of the List (-want +got):\n%s", diff)
	}

	// Read: the files before the bomb are reported, and the bomb; the run
	// ends there.
	dir := t.TempDir()
	for name, data := range map[string]string{"a.yaml": "just text\n", "b.yaml": bomb, "c.yaml": "apiVersion: v1\nkind: C\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b = input.Budget{}
	objs, problems := input.Read([]string{"."}, input.Options{Dir: dir, Budget: &b})
	if !b.Exhausted() || objs != nil || len(problems) != 2 ||
		!strings.HasPrefix(problems[0].Error(), "a.yaml: document 1: expected an object") ||
		problems[1].Error() != "b.yaml: ConfigMap bomb: "+bombProblem {
		t.Errorf("Read = %d objects, %v (exhausted %v); want the problems of a.yaml and b.yaml", len(objs), problems, b.Exhausted())
	}
}
