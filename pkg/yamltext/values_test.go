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
			encoded := yamltext.EncodeValues(spec)
			if encoded.IsZero() || encoded.Err() != nil {
				t.Fatalf("EncodeValues: zero %v, err %v", encoded.IsZero(), encoded.Err())
			}
			got, err := yamltext.AppendRelease([]byte("prefix\n"), release(yamltext.Placeholder()), encoded)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("prefix\n"+string(wantText), string(got)); diff != "" {
				t.Errorf("spliced release (-tree +spliced):\n%s", diff)
			}
			back, err := encoded.Node()
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

func TestZeroValues(t *testing.T) {
	var v yamltext.Values
	if !v.IsZero() || v.Err() != nil {
		t.Fatalf("zero Values: IsZero %v, Err %v", v.IsZero(), v.Err())
	}
	if !yamltext.EncodeValues(nil).IsZero() {
		t.Error("no spec must give the zero Values")
	}
	if n, err := v.Node(); n != nil || err != nil {
		t.Errorf("Node of the zero Values = %v, %v", n, err)
	}
}

// TestEncodeKeepsTheCopysError: values NormalizedCopy refuses are encoded
// into an error with the path of what it refused, which every use reports.
func TestEncodeKeepsTheCopysError(t *testing.T) {
	spec := yamlnode.Map("a", yamlnode.Map("<<", yamlnode.Map("b", yamlnode.String("c"))))
	v := yamltext.EncodeValues(spec)
	var pe *yamlnode.PathError
	if !errors.As(v.Err(), &pe) || pe.Path != "a.<<" {
		t.Fatalf("Err = %v, want a PathError at a.<<", v.Err())
	}
	if _, err := v.Node(); err == nil {
		t.Error("Node of values that could not be encoded gave no error")
	}
	if _, err := yamltext.AppendRelease(nil, release(yamltext.Placeholder()), v); err == nil {
		t.Error("AppendRelease of values that could not be encoded gave no error")
	}
}

// TestAppendReleaseNeedsOnePlaceholder: a release without the placeholder,
// or with it twice, is an internal error, and nothing is appended.
func TestAppendReleaseNeedsOnePlaceholder(t *testing.T) {
	v := yamltext.EncodeValues(yamlnode.Map("a", yamlnode.String("b")))
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
