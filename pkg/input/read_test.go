package input_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/input"
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
		{"list item not an object", "apiVersion: v1\nkind: List\nitems: [3]\n", "items[0] must be an object"},
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
