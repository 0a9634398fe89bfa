package yamlnode_test

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext/readback"
)

// encodeBoth writes n with the project's writer (yamltext, or the library
// as fallback) and with kyaml's encoder, as the KRM path does; both must
// write the same.
func encodeBoth(t *testing.T, n *yaml.Node) string {
	t.Helper()
	ours, err := yamltext.AppendDocument(nil, n)
	if err != nil {
		t.Fatal(err)
	}
	kyaml, err := yaml.String(n)
	if err != nil {
		t.Fatal(err)
	}
	if string(ours) != kyaml {
		t.Fatalf("yamltext.AppendDocument wrote\n%s\nkyaml wrote\n%s", ours, kyaml)
	}
	return kyaml
}

func TestStringQuotesYAML11(t *testing.T) {
	m := yamlnode.Map("N", yamlnode.String("Y"), "region", yamlnode.String("NO"), "time", yamlnode.String("1:20"),
		"fine", yamlnode.String("Norway"))
	got := encodeBoth(t, m)
	want := "\"N\": \"Y\"\nregion: \"NO\"\ntime: \"1:20\"\nfine: Norway\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if err := readback.Agree([]byte(got)); err != nil {
		t.Error(err)
	}
	if got := encodeBoth(t, yamlnode.Map("<<", yamlnode.String("<<"))); got != "\"<<\": \"<<\"\n" {
		t.Errorf("got %q", got)
	}
}

func TestCopyQuotesYAML11(t *testing.T) {
	in := parseDoc(t, "b: yes\na: [\"on\", off, Off, y, n, 1:20, -1:30, 1:60, '<<x']\n1.0: x\n0x10: y\ntrue: z\nbin: !!binary PDw=\nlit: |\n  yes\n")
	c, err := yamlnode.NormalizedCopy(in, yamlnode.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	got := encodeBoth(t, c)
	want := "\"0x10\": \"y\"\n\"1.0\": x\na:\n- \"on\"\n- \"off\"\n- \"Off\"\n- \"y\"\n- \"n\"\n- \"1:20\"\n- \"-1:30\"\n- 1:60\n- <<x\nb: \"yes\"\nbin: !!binary PDw=\nlit: |\n  yes\ntrue: z\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	meant, err := readback.Meant(in)
	if err != nil {
		t.Fatal(err)
	}
	applied, err := readback.Applied([]byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if string(meant) != string(applied) {
		t.Errorf("the copy reads back as\n%s\nnot as the original\n%s", applied, meant)
	}
}

func TestCopyRefusesMergeKeys(t *testing.T) {
	for _, src := range []string{"\"<<\": {a: 1}\n", "x: {'<<': 1}\n", "!!str <<: 1\n"} {
		if _, err := yamlnode.NormalizedCopy(parseDoc(t, src), yamlnode.DefaultBudget); err == nil {
			t.Errorf("NormalizedCopy(%q) accepted a << key", src)
		}
		if _, err := yamlnode.ToValue(parseDoc(t, src), yamlnode.DefaultBudget); err == nil {
			t.Errorf("ToValue(%q) accepted a << key", src)
		}
	}
}

// TestNoPlainMergeKey builds a tree with a plain string << key, which no
// input can hold (Check refuses it) and no builder of this package makes:
// the writer still quotes it, on its fast path and on the library's.
func TestNoPlainMergeKey(t *testing.T) {
	for _, comment := range []string{"", "# a comment sends it to the library"} {
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: yamlnode.TagMap, HeadComment: comment, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: yamlnode.TagString, Value: "<<"},
			yamlnode.Map("a", yamlnode.String("b")),
		}}
		got, err := yamltext.AppendDocument(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		var back yaml.Node
		if err := yaml.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q: %v", got, err)
		}
		if _, err := yamlnode.Check(&back, 100); err == nil || yamlnode.Get(&back, "<<") == nil {
			t.Errorf("wrote %q: not a quoted << key", got)
		}
		if _, err := readback.Applied(got); err != nil {
			t.Errorf("wrote %q, which Flux cannot read: %v", got, err)
		}
	}
}

func TestQuoteForYAML11(t *testing.T) {
	n := parseDoc(t, "# kept\na: yes # c\nb: {x: NO, y: 'on'}\n1.0: [n, Norway]\n? &k 2.0\n: 1\nc: *k\nd: !!binary PDw=\n")
	yamlnode.QuoteForYAML11(n)
	var buf []byte
	buf, err := yamltext.AppendDocument(buf, n)
	if err != nil {
		t.Fatal(err)
	}
	want := "# kept\na: \"yes\" # c\nb: {x: \"NO\", \"y\": 'on'}\n\"1.0\": [\"n\", Norway]\n&k 2.0: 1\nc: *k\nd: !!binary PDw=\n"
	if string(buf) != want {
		t.Errorf("got\n%s\nwant\n%s", buf, want)
	}
}
