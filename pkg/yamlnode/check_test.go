package yamlnode_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

func parseDoc(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	return doc.Content[0]
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name, src string
		max       int
		nodes     int    // expanded size when accepted
		path, err string // when refused
		is        error
	}{
		{name: "plain", src: "a: [1, 2]\nb: {c: d}\n", nodes: 9},
		{name: "aliases count each time", src: "a: &a [1, 2]\nb: *a\nc: *a\n", nodes: 13},
		{name: "anchored key", src: "? &k x\n: 1\ny: *k\n", nodes: 5},
		{name: "anchored integer key", src: "&k 80: 1\ny: *k\n", nodes: 5},
		{name: "anchored null key", src: "&k null: 1\ny: *k\n", path: "null", is: yamlnode.ErrAnchoredKey},
		{name: "anchored float key", src: "&k 1.0: 1\n", path: "[1.0]", is: yamlnode.ErrAnchoredKey},
		{name: "alias bomb", src: "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n", max: 1000, path: "c[7]", is: yamlnode.ErrBudget},
		{name: "cycle", src: "a: &a [x, *a]\n", path: "a[1]", err: "alias *a refers to a node that contains it"},
		{name: "merge key", src: "a: &a {x: 1}\nb: {<<: *a}\n", path: "b.<<", is: yamlnode.ErrMergeKey},
		{name: "double-quoted <<", src: "\"<<\": 1\n", path: "<<", is: yamlnode.ErrMergeKey},
		{name: "single-quoted <<", src: "a: {'<<': {b: 1}}\n", path: "a.<<", is: yamlnode.ErrMergeKey},
		{name: "!!str <<", src: "a:\n  !!str <<: {b: 1}\n", path: "a.<<", is: yamlnode.ErrMergeKey},
		{name: "!!merge <<", src: "a:\n  !!merge <<: {b: 1}\n", path: "a.<<", is: yamlnode.ErrMergeKey},
		{name: "<< as a value is a string", src: "a: <<\nb: \"<<\"\n", nodes: 5},
		{name: "duplicate key", src: "a: 1\nb: 2\na: 3\n", path: "a", is: yamlnode.ErrDuplicateKey},
		{name: "duplicate key in a large map", src: "{" + manyKeys(40) + ", k7: 1}", path: "k7", is: yamlnode.ErrDuplicateKey},
		{name: "list as key", src: "? [a]\n: 1\n", path: "[0]", is: yamlnode.ErrKeyNotString},
		{name: "dotted key in brackets", src: "m:\n  app.kubernetes.io/name: 1\n  app.kubernetes.io/name: 2\n", path: "m[app.kubernetes.io/name]", is: yamlnode.ErrDuplicateKey},
		{name: "deep", src: strings.Repeat("[", 101) + strings.Repeat("]", 101), path: strings.Repeat("[0]", 100), is: yamlnode.ErrDepth},
		{name: "100 levels", src: strings.Repeat("[", 100) + strings.Repeat("]", 100), nodes: 100},
		{name: "deep through aliases", src: chain(120), path: "a99[0]", is: yamlnode.ErrDepth},
		{name: "bad !!int", src: "a: !!int x\n", path: "a", err: `!!int "x" is not a valid !!int`},
		{name: "NaN", src: "a: .nan\n", path: "a", err: "cannot be represented in JSON"},
		{name: "!!binary", src: "a: !!binary aGVsbG8=\n", nodes: 3},
		{name: "!!binary of bytes that are not UTF-8", src: "b: {0: !!binary 0000}\n", path: "b.0", err: "not UTF-8 text"},
		{name: "custom tag", src: "a: !x y\n", nodes: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := tt.max
			if max == 0 {
				max = 1_000_000
			}
			nodes, err := yamlnode.Check(parseDoc(t, tt.src), max)
			if tt.path == "" && tt.err == "" && tt.is == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if nodes != tt.nodes {
					t.Errorf("%d nodes, want %d", nodes, tt.nodes)
				}
				return
			}
			var pe *yamlnode.PathError
			if !errors.As(err, &pe) {
				t.Fatalf("want a *PathError, got %v", err)
			}
			if pe.Path != yamlnode.ClipPath(tt.path) {
				t.Errorf("path %q, want %q", pe.Path, yamlnode.ClipPath(tt.path))
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v, want %v", err, tt.is)
			}
			if tt.err != "" && !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %v, want %q in it", err, tt.err)
			}
		})
	}
}

// TestCheckOutside refuses an alias to an anchor outside the checked tree,
// which items of one list can have.
func TestCheckOutside(t *testing.T) {
	list := parseDoc(t, "- &a {x: 1}\n- {y: *a}\n")
	if _, err := yamlnode.Check(list.Content[0], 100); err != nil {
		t.Fatalf("the first item stands on its own: %v", err)
	}
	_, err := yamlnode.Check(list.Content[1], 100)
	if !errors.Is(err, yamlnode.ErrAliasOutside) {
		t.Fatalf("want ErrAliasOutside, got %v", err)
	}
}

func manyKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "k" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + ": 1"
	}
	keys[7] = "k7: 1"
	return strings.Join(keys, ", ")
}

// chain nests through aliases only: anchor i holds anchor i-1.
func chain(n int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 x\n")
	for i := 1; i < n; i++ {
		b.WriteString(fmt.Sprintf("a%d: &a%d [*a%d]\n", i, i, i-1))
	}
	return b.String()
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1000000: "1,000,000", -12345: "-12,345"} {
		if got := yamlnode.Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
