package yamltext_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

// release is a HelmRelease as package render builds one, with values at
// spec.values and keys after it.
func release(values *yaml.Node) *yaml.Node {
	return yamlnode.Map(
		"apiVersion", yamlnode.String("helm.toolkit.fluxcd.io/v2"),
		"kind", yamlnode.String("HelmRelease"),
		"metadata", yamlnode.Map("name", yamlnode.String("app")),
		"spec", yamlnode.Map(
			"interval", yamlnode.String("5m"),
			"values", values,
			"valuesFrom", &yaml.Node{Kind: yaml.SequenceNode, Tag: yamlnode.TagSeq, Content: []*yaml.Node{
				yamlnode.Map("kind", yamlnode.String("Secret"), "name", yamlnode.String("cozystack-values")),
			}},
		),
	)
}

func parse(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	if _, err := yamlnode.Check(&doc, 1_000_000); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

// TestEncodedValuesWriteAsTheTree: a release written with encoded values
// spliced in is byte for byte the release holding the values' tree, and
// the encoded values decode back into that tree.
func TestEncodedValuesWriteAsTheTree(t *testing.T) {
	for _, src := range []string{
		"{}\n",
		"a: 1\n",
		"z: [1, {b: c}]\na: &x {y: yes, n: \"no\"}\nm: *x\n",
		"script: |\n  #!/bin/sh\n  echo hi\nfolded: >\n  one\n  two\n",
		"# comment\nkey: 'single'\nflow: {a: [1, 2]}\nempty: []\n",
		"values: computeplane-fn.encoded-value\n",
		"deep:\n" + strings.Repeat("  ", 1) + "a:\n    b:\n      c: [x, y]\n",
	} {
		t.Run(src, func(t *testing.T) {
			spec := parse(t, src)
			want, err := yamlnode.NormalizedCopy(spec, yamlnode.DefaultBudget)
			if err != nil {
				t.Fatal(err)
			}
			wantText, err := yamltext.AppendDocument(nil, release(want))
			if err != nil {
				t.Fatal(err)
			}
			encoded, err := yamltext.EncodeValues(spec)
			if encoded == nil || err != nil {
				t.Fatalf("EncodeValues: %q, %v", encoded, err)
			}
			got, err := yamltext.AppendRelease([]byte("prefix\n"), release(yamltext.Placeholder()), encoded)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("prefix\n"+string(wantText), string(got)); diff != "" {
				t.Errorf("spliced release (-tree +spliced):\n%s", diff)
			}
			back, err := yamltext.DecodeValues(encoded)
			if err != nil {
				t.Fatal(err)
			}
			backText, err := yamltext.AppendDocument(nil, release(back))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(wantText), string(backText)); diff != "" {
				t.Errorf("decoded values (-tree +decoded):\n%s", diff)
			}
		})
	}
}

func TestNoValues(t *testing.T) {
	if v, err := yamltext.EncodeValues(nil); v != nil || err != nil {
		t.Errorf("EncodeValues(nil) = %q, %v; want nil, nil", v, err)
	}
	if n, err := yamltext.DecodeValues(nil); n != nil || err != nil {
		t.Errorf("DecodeValues(nil) = %v, %v; want nil, nil", n, err)
	}
}

// TestEncodeReturnsTheCopysError: values NormalizedCopy refuses give its
// error, with the path of what it refused, which the reader reports.
func TestEncodeReturnsTheCopysError(t *testing.T) {
	spec := yamlnode.Map("a", yamlnode.Map("<<", yamlnode.Map("b", yamlnode.String("c"))))
	v, err := yamltext.EncodeValues(spec)
	var pe *yamlnode.PathError
	if v != nil || !errors.As(err, &pe) || pe.Path != "a.<<" {
		t.Fatalf("EncodeValues = %q, %v; want a PathError at a.<<", v, err)
	}
}

// TestAppendReleaseNeedsOnePlaceholder: a release without the placeholder,
// or with it twice, is an internal error, and nothing is appended.
func TestAppendReleaseNeedsOnePlaceholder(t *testing.T) {
	v, err := yamltext.EncodeValues(yamlnode.Map("a", yamlnode.String("b")))
	if err != nil {
		t.Fatal(err)
	}
	// Two spaces in, where spec.values is: another top-level mapping.
	twice := release(yamltext.Placeholder())
	yamlnode.SetKey(yamlnode.Get(twice, "metadata"), "values", yamltext.Placeholder())
	for name, r := range map[string]*yaml.Node{
		"none":  release(yamlnode.Map("a", yamlnode.String("b"))),
		"twice": twice,
	} {
		got, err := yamltext.AppendRelease([]byte("kept"), r, v)
		if err == nil || string(got) != "kept" {
			t.Errorf("%s: got %q, %v; want an error and nothing appended", name, got, err)
		}
	}
}
