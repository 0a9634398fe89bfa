package input_test

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/input"
)

// TestEstimateNodes checks the estimate against the nodes go-yaml makes on
// the shapes that make the most nodes per byte, and on ones the fuzzer
// found the estimate too low for (fixed since).
func TestEstimateNodes(t *testing.T) {
	for _, src := range []string{
		"", "?", ":", "-", "? ?", "[]", "{}", "{a}", "{a,b}", "{a: }", "{: a}", "[a: b]", "[: ]", "[? ]",
		"{" + strings.Repeat("a,", 100) + "a}",
		"[" + strings.Repeat("a,", 100) + "a]",
		strings.Repeat("- ", 50) + "a\n",
		strings.Repeat("a:\n", 100),
		"---\n---\n--- x\n...\n",
		"\ufeffa: b\n\ufeffc: d\n",
		"a:\u2028b: c\n",
		"key: value # comment\nlist:\n- a\n- b: c\n  d: e\n",
		"\"a\":\"b\"\n",
	} {
		var doc yaml.Node
		nodes := 0
		dec := yaml.NewDecoder(bytes.NewReader([]byte(src)))
		for dec.Decode(&doc) == nil {
			nodes += countNodes(&doc)
			doc = yaml.Node{}
		}
		if est := input.EstimateNodes([]byte(src)); est < nodes {
			t.Errorf("%q: estimate %d, go-yaml made %d nodes", src, est, nodes)
		}
	}
}

// TestEstimateDensity pins how much the estimate counts per node for the
// densest YAML, which sets what MaxEstimatedNodes lets through.
func TestEstimateDensity(t *testing.T) {
	for src, perNode := range map[string]float64{
		"{" + strings.Repeat("a,", 10000) + "a}": 1.5,
		strings.Repeat("a:\n", 10000):            1.5,
		strings.Repeat("- ", 5000) + "a\n":       2,
		"[" + strings.Repeat("a,", 10000) + "a]": 3,
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
			t.Fatal(err)
		}
		got := float64(input.EstimateNodes([]byte(src))) / float64(countNodes(&doc))
		if got < perNode-0.01 {
			t.Errorf("%.20q...: %.2f per node, want at least %.2f", src, got, perNode)
		}
	}
}

func TestCountDocuments(t *testing.T) {
	for src, want := range map[string]int{
		"":                      1,
		"a: 1\n":                1,
		"---\na: 1\n":           2,
		"a: 1\n---\nb: 1\n":     2,
		"a: 1\n--- \nb: 1\n---": 3,
		"a: |\n  x\n---\nb\n":   2,
		"a: ---\n":              1,
		"a:\n---x\n":            1,
	} {
		if got := input.CountDocuments([]byte(src)); got != want {
			t.Errorf("CountDocuments(%q) = %d, want %d", src, got, want)
		}
		docs := 0
		dec := yaml.NewDecoder(bytes.NewReader([]byte(src)))
		for {
			var doc yaml.Node
			if dec.Decode(&doc) != nil {
				break
			}
			docs++
		}
		if docs > want {
			t.Errorf("%q: go-yaml reads %d documents, more than the count %d", src, docs, want)
		}
	}
}
