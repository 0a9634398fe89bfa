package yamltext_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

// library encodes n the way the project's output does without this package.
func library(t testing.TB, n *yaml.Node) (out string, ok bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			ok = false // the library panics on some trees; nothing to compare
		}
	}()
	// This package quotes every string << the library would write plain
	// (see the package doc): compare with the library on the tree so marked.
	n = yamlnode.Clone(n)
	yamlnode.QuoteMergeKeys(n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(n); err != nil {
		return "", false
	}
	if err := enc.Close(); err != nil {
		return "", false
	}
	return buf.String(), true
}

func compare(t testing.TB, n *yaml.Node) bool {
	t.Helper()
	prefix := []byte("prefix")
	got, ok := yamltext.EmitDocument(prefix, n)
	if !bytes.HasPrefix(got, []byte("prefix")) {
		t.Fatalf("the buffer's content was changed")
	}
	if !ok {
		if string(got) != "prefix" {
			t.Fatalf("an unsupported tree left %q in the buffer", got)
		}
		return false
	}
	want, libOK := library(t, n)
	if !libOK {
		t.Fatalf("the library cannot encode a tree this package wrote:\n%s", got[len(prefix):])
	}
	if string(got[len(prefix):]) != want {
		var in bytes.Buffer
		dump(&in, n, "")
		t.Fatalf("output differs from the library's\ntree:\n%s\nlibrary:\n%q\nemitter:\n%q", in.String(), want, got[len(prefix):])
	}
	return true
}

func dump(b *bytes.Buffer, n *yaml.Node, indent string) {
	fmt.Fprintf(b, "%skind=%d tag=%q style=%d value=%q\n", indent, n.Kind, n.Tag, n.Style, n.Value)
	for _, c := range n.Content {
		dump(b, c, indent+"  ")
	}
}

// Scalars that exercise every decision of the scalar analysis.
var tricky = []string{
	"", " ", "a", "a b", " leading", "trailing ", "two  spaces", "true", "false", "True", "TRUE", "yes", "no", "on", "off", "y", "n",
	"null", "Null", "~", "5", "-5", "+5", "0", "00", "012", "0x1F", "0o17", "0b101", "1_000", "1e3", "1.5e", ".5", "1.0", "-1.5",
	".inf", "-.inf", "+.inf", ".nan", ".NaN", "2001-12-14", "2001-12-14T21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "12:30", "1:2:3",
	"-", "- a", "-a", "--", "---", "--- x", "...", "....", "?", "? x", "?x", ":", ": x", "a: b", "a:b", "a:", "a #b", "a#b", "#x",
	"&a", "*a", "!x", "|", ">", "'q'", `"q"`, "%x", "@x", "`x", "{a}", "[a]", "a,b", "a, b", "a[b]", "=", "<<", "a\\b", `say "hi"`, "it's",
	"a\nb", "a\n", "a\n\n", "a\n\n\n", "\n", "\n\n", "\na", " \na", "a \nb", "a\n b", "a\n\nb", "  indented\nblock\n", "\tx", "a\tb", "tab\t",
	"a\n\tb\n", "\r", "a\r\nb", "a\rb", "é", "日本語", "emoji 😀", "\u0085", "a\u0085b", "a\u2028b", "a\u2029", "\u00a0", "a\u00a0b",
	"\ufeffbom", "x\ufeff", "\ufffe", "\x00", "\x07", "\x1b", "\x7f", "a\x01b", "\u00ff", "\U0001F600\n", "line one\nline two\n",
	"#!/bin/sh\nset -eu\necho \"$@\"\n", "key: value\nlist:\n  - a\n", "trailing space \nline", "ends with spaces  \n",
	strings.Repeat("x", 129), strings.Repeat("word ", 40), "http://example.com/a?b=c#d", "s3://bucket/path/", "10.0.0.0/8", "*.example.org",
}

var tags = []string{"!!str", "!!str", "!!str", "!!str", "", "!!int", "!!bool", "!!null", "!!float", "tag:yaml.org,2002:str", "!custom", "!!binary", "!!timestamp"}

// clean makes randomScalar draw only what the trees of this project hold:
// default or literal style, no comments, tags the plain form implies.
var cleanTags = []string{"!!str", "!!str", "!!str", ""}

func randomScalar(r *rand.Rand) *yaml.Node {
	return randomScalarOf(r, false)
}

func randomScalarOf(r *rand.Rand, clean bool) *yaml.Node {
	if clean {
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: tricky[r.IntN(len(tricky))], Tag: cleanTags[r.IntN(len(cleanTags))]}
		if r.IntN(6) == 0 {
			n.Value += tricky[r.IntN(len(tricky))]
		}
		if r.IntN(8) == 0 {
			n.Style = yaml.LiteralStyle
		}
		if n.Tag == "" && r.IntN(2) == 0 {
			n.Tag = (&yaml.Node{Kind: yaml.ScalarNode, Value: n.Value}).ShortTag()
		}
		if n.Tag == "!!str" && n.Style == 0 && yamlnode.Quoted(n.Value) {
			n.Style = yaml.DoubleQuotedStyle // as yamlnode.String marks it
		}
		return n
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: tricky[r.IntN(len(tricky))]}
	if r.IntN(6) == 0 {
		// Concatenations find interactions between classes of characters.
		n.Value += tricky[r.IntN(len(tricky))]
	}
	n.Tag = tags[r.IntN(len(tags))]
	switch r.IntN(10) {
	case 0:
		n.Style = yaml.LiteralStyle
	case 1:
		n.Style = []yaml.Style{yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle, yaml.FoldedStyle, yaml.FlowStyle, yaml.TaggedStyle}[r.IntN(5)]
	}
	if r.IntN(50) == 0 {
		n.LineComment = "# c"
	}
	return n
}

func randomTree(r *rand.Rand, depth int) *yaml.Node {
	return randomTreeOf(r, depth, false)
}

func randomTreeOf(r *rand.Rand, depth int, clean bool) *yaml.Node {
	if depth == 0 || r.IntN(3) == 0 {
		return randomScalarOf(r, clean)
	}
	if r.IntN(2) == 0 {
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		if r.IntN(10) == 0 {
			n.Tag = ""
		}
		for range r.IntN(5) {
			k := randomScalarOf(r, clean)
			if r.IntN(3) > 0 || clean {
				k.Tag, k.Style = "!!str", 0
			}
			if clean && (len(k.Value) > 128 || strings.ContainsAny(k.Value, "\r\n\u0085\u2028\u2029")) {
				k.Value = "key"
			}
			if clean {
				k = yamlnode.String(k.Value)
			}
			n.Content = append(n.Content, k, randomTreeOf(r, depth-1, clean))
		}
		return n
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for range r.IntN(5) {
		n.Content = append(n.Content, randomTreeOf(r, depth-1, clean))
	}
	return n
}

// TestMatchesLibrary compares random trees with the library's encoding.
func TestMatchesLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	written := 0
	const trees = 20000
	for range trees {
		if compare(t, randomTree(r, 6)) {
			written++
		}
	}
	// The random trees include unsupported nodes on purpose; most must still
	// be written here, or the comparison proves little.
	if written < trees/4 {
		t.Fatalf("only %d of %d random trees were written", written, trees)
	}
	t.Logf("%d of %d random trees written and identical", written, trees)
}

// TestMatchesLibraryOnCleanTrees compares random trees of the kind this
// project writes: every one of them must be written here, and identically.
func TestMatchesLibraryOnCleanTrees(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		n := randomTreeOf(r, 6, true)
		if !compare(t, n) {
			var in bytes.Buffer
			dump(&in, n, "")
			t.Fatalf("clean tree %d was not written:\n%s", i, in.String())
		}
	}
}

// TestMatchesLibraryOnEveryScalar puts every tricky scalar as a key, as a
// value, as a list item and at the root.
func TestMatchesLibraryOnEveryScalar(t *testing.T) {
	for _, v := range tricky {
		for _, tag := range []string{"!!str", ""} {
			for _, style := range []yaml.Style{0, yaml.LiteralStyle, yaml.DoubleQuotedStyle} {
				s := func() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Style: style, Value: v} }
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "k"}
				item := &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{s(), s()}}
				trees := []*yaml.Node{
					s(),
					{Kind: yaml.MappingNode, Content: []*yaml.Node{key, s()}},
					{Kind: yaml.MappingNode, Content: []*yaml.Node{s(), key}},
					{Kind: yaml.MappingNode, Content: []*yaml.Node{key, {Kind: yaml.MappingNode, Content: []*yaml.Node{key, s(), s(), item}}}},
					{Kind: yaml.SequenceNode, Content: []*yaml.Node{s(), item, {Kind: yaml.MappingNode, Content: []*yaml.Node{key, s(), s(), item}}}},
				}
				for _, tree := range trees {
					compare(t, tree)
				}
			}
		}
	}
}

// FuzzMatchesLibrary decodes arbitrary YAML, normalises it the way app
// values are copied into releases (yamlnode.NormalizedCopy) and compares both
// encodings.
func FuzzMatchesLibrary(f *testing.F) {
	for _, seed := range []string{
		"a: 1\nb: [x, {y: z}]\nc: |\n  text\n",
		"- - a\n  - b\n- {}\n- []\n- k: v\n  l: [1, 2]\n",
		"s: \"quoted\\ttab\"\nt: 'single'\nu: >\n  folded\n  text\n",
		"? complex\n: value\nlong: " + strings.Repeat("y", 150) + "\n",
		"x: !!binary aGVsbG8=\ny: !custom z\nz: &a [1]\nw: *a\n",
		"e: \"\\u00e9\\U0001F600\\x01\"\nn: null\nb: yes\nd: 2001-12-14\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(in), &doc); err != nil {
			return
		}
		n, err := yamlnode.NormalizedCopy(&doc, 100_000)
		if err != nil || n == nil {
			return
		}
		compare(t, n)
	})
}

// TestResolvedTag checks the shortcut of resolvedTag against the library on
// strings made of the characters numbers and timestamps are made of, and a
// few others.
func TestResolvedTag(t *testing.T) {
	alphabet := "0123456789-+._:eExXoObBtTZ abcfgGiKMmyYnNFfrRuUlLsS~"
	r := rand.New(rand.NewPCG(5, 6))
	check := func(v string) {
		want := (&yaml.Node{Kind: yaml.ScalarNode, Value: v}).ShortTag()
		n := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "k"},
			{Kind: yaml.ScalarNode, Tag: want, Value: v},
		}}
		// Tagged with what the library reads it as, the value is written
		// with no tag; a wrong shortcut would refuse or quote it.
		got, ok := yamltext.EmitDocument(nil, n)
		lib, _ := library(t, n)
		if !ok || string(got) != lib {
			t.Fatalf("value %q (library: %s): wrote %q, ok %v; library %q", v, want, got, ok, lib)
		}
	}
	for _, v := range tricky {
		check(v)
	}
	for range 40000 {
		b := make([]byte, 1+r.IntN(12))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		check(string(b))
	}
	for _, v := range []string{"2001-12-14", "2001-12-14t21:59:43.10Z", "2001-1-2 3:4:5", "2001-12-14T21:59:43+05:00", "0x_1F", "-0b101", "-0o17", "1__0", "+12e3", "-.5", "0.", "1e", "10Gi", "500m", "1.5Gi", "3h", "v1.2.3", "yes", "No", "on", "OFF", "y", "Y", "tRUE", "nULL", "~x", "NaN", ".nan", ".NaN", ".5", "._5", ".e3", ".1e3"} {
		check(v)
	}
}

// copyThenLibrary is what EmitNormalized stands for: yamlnode.NormalizedCopy, then the
// library's encoder.
func copyThenLibrary(t testing.TB, n *yaml.Node, budget int) (string, bool) {
	c, err := yamlnode.NormalizedCopy(n, budget)
	if err != nil || c == nil {
		return "", false
	}
	return library(t, c)
}

func compareCopy(t testing.TB, n *yaml.Node, budget int) bool {
	t.Helper()
	got, ok := yamltext.EmitNormalized(nil, n, budget, yamlnode.MaxDepth)
	want, wantOK := copyThenLibrary(t, n, budget)
	if !ok {
		return false
	}
	if !wantOK {
		t.Fatalf("EmitNormalized wrote a tree that NormalizedCopy refuses or the library cannot write:\n%s", got)
	}
	if string(got) != want {
		t.Fatalf("emitNormalized differs from NormalizedCopy and the library\nlibrary:\n%q\nemitter:\n%q", want, got)
	}
	return true
}

var copySeeds = []string{
	"a: 1\nb: [x, {y: z}]\nc: |\n  text\n",
	"# head\na: &x {k: v} # line\nb: *x\nc: [*x, *x]\n",
	"s: \"quoted\\ttab\"\nt: 'single'\nu: >\n  folded\n  text\nv: !!str 5\nw: !!int \"7\"\n",
	"? complex\n: value\nlong: " + strings.Repeat("y", 150) + "\n",
	"x: !!binary aGVsbG8=\ny: !custom z\n<<: {m: 1}\n",
	"base: &b {a: 1}\nderived:\n  <<: *b\n  c: 2\n",
	"e: \"\\u00e9\\U0001F600\\x01\"\nn: null\nb: yes\nd: 2001-12-14\nf: {a: [1, 2], b: {}}\n",
	"- - a\n  - b\n- {}\n- []\n- k: v\n  l: [1, 2]\n",
	"a: &a [1, 2]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n",
}

// TestEmitNormalizedMatchesCopy compares EmitNormalized with NormalizedCopy and the library on
// documents with what NormalizedCopy normalises away: comments, anchors and aliases,
// flow and quoted styles, folded blocks, tags, merge keys.
func TestEmitNormalizedMatchesCopy(t *testing.T) {
	written := 0
	for _, seed := range copySeeds {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(seed), &doc); err != nil {
			t.Fatal(err)
		}
		if compareCopy(t, doc.Content[0], yamlnode.DefaultBudget) {
			written++
		}
		// A small budget: EmitNormalized must give up no later than Copy.
		for budget := 0; budget < 30; budget++ {
			compareCopy(t, doc.Content[0], budget)
		}
	}
	if written < len(copySeeds)/2 {
		t.Fatalf("only %d of %d documents written", written, len(copySeeds))
	}
	// Nesting past the depth limit.
	deep := strings.Repeat("[", yamlnode.MaxDepth+5) + strings.Repeat("]", yamlnode.MaxDepth+5)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(deep), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := yamltext.EmitNormalized(nil, doc.Content[0], yamlnode.DefaultBudget, yamlnode.MaxDepth); ok {
		t.Fatal("a document deeper than MaxDepth was written")
	}
}

// FuzzEmitNormalized compares EmitNormalized with NormalizedCopy and the library on arbitrary
// YAML.
func FuzzEmitNormalized(f *testing.F) {
	for _, seed := range copySeeds {
		f.Add(seed, uint16(1000))
	}
	f.Fuzz(func(t *testing.T, in string, budget uint16) {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(in), &doc); err != nil || len(doc.Content) == 0 {
			return
		}
		compareCopy(t, doc.Content[0], int(budget))
	})
}

// TestAnalyzeShortcut writes values made of the characters the analysis
// shortcut accepts, alone and next to the ones it does not.
func TestAnalyzeShortcut(t *testing.T) {
	alphabet := "aZ09._/-+=()@%~$;^<>:# ,?!&*|'\"`[]{}\t\n"
	r := rand.New(rand.NewPCG(9, 10))
	for range 25000 {
		b := make([]byte, 1+r.IntN(6))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		for _, tag := range []string{"!!str", ""} {
			compare(t, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "k"},
				{Kind: yaml.ScalarNode, Tag: tag, Value: string(b)},
			}})
		}
	}
}
