package input_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// addSeeds adds every YAML file of the fixtures and examples, and the
// small hostile documents of hostileSeeds, to the corpus.
func addSeeds(f *testing.F) {
	f.Helper()
	var files []string
	for _, pattern := range []string{"../../fixtures/*/*.yaml", "../../examples/*/*.yaml", "../../examples/*/*/*.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		f.Fatal("no fixtures found for the seed corpus")
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range hostileSeeds {
		f.Add([]byte(s))
	}
}

// hostileSeeds are small documents of the kinds that broke YAML readers
// elsewhere; the fuzzer mutates them further.
var hostileSeeds = []string{
	"a: &a [*a]\n",
	"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n",
	"apiVersion: v1\nkind: List\nitems:\n- &x {apiVersion: v1, kind: A, metadata: {name: a}}\n- *x\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a}\ndata: *m\n",
	"a: {<<: {b: 1}}\n",
	"{[a]: b}\n",
	"a: 1\na: 2\n",
	"a: !!binary aGVsbG8=\n",
	"a: !!int abc\n",
	"- - - - - a\n",
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n",
	"---\n--- |\n  a\n...\n%YAML 1.2\n---\n",
	"\ufeffapiVersion: v1\nkind: A\n",
	"a: \"\\u2028\\x00\"\n",
	"? |\n  a\n: b\n",
}

// FuzzDecode feeds arbitrary bytes to the input reader. It must never
// panic; a refusal returns no objects and problems that each say something;
// what it accepts holds only objects that pass yamlnode.Check, encode, and
// read back the same.
func FuzzDecode(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > slow(len(data)) {
				t.Fatalf("reading and checking %d bytes took %v", len(data), d)
			}
		}()
		checkEstimate(t, data)
		objs, problems := input.Decode(data, "fuzz.yaml")
		if len(problems) > 0 {
			if objs != nil {
				t.Fatalf("a refusal returned %d objects", len(objs))
			}
			for _, p := range problems {
				if strings.TrimSpace(p.Message) == "" {
					t.Fatalf("a problem without a message: %+v", p)
				}
				if strings.HasPrefix(p.Message, api.BugMessage) {
					t.Fatalf("a refusal is a bug: %v", p)
				}
			}
			return
		}
		for _, o := range objs {
			if o.Node == nil || o.Node.Kind != yaml.MappingNode {
				t.Fatalf("object is not a map: %v", o.Node)
			}
			if _, err := yamlnode.Check(o.Node, input.MaxObjectNodes); err != nil {
				t.Fatalf("accepted object fails Check: %v", err)
			}
			// Objects that pass through are written in canonical form
			// (render.FromInput), whose comments stay where they are.
			first := encode(t, yamlnode.Canonical(o.Node))
			again, problems := input.Decode(first, "again.yaml")
			if len(problems) > 0 {
				t.Fatalf("an accepted object does not read back: %v\n%s", problems, first)
			}
			if len(again) != 1 {
				t.Fatalf("an accepted object reads back as %d objects:\n%s", len(again), first)
			}
			if again[0].Ref() != o.Ref() {
				t.Fatalf("an accepted object reads back as %v, not %v", again[0].Ref(), o.Ref())
			}
			if second := encode(t, yamlnode.Canonical(again[0].Node)); !bytes.Equal(first, second) {
				t.Fatalf("encoding is not stable:\n%s\n---- then ----\n%s", first, second)
			}
		}
	})
}

func encode(t *testing.T, n *yaml.Node) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(n); err != nil {
		t.Fatalf("an accepted object does not encode: %v", err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// slow is how long reading n bytes may take in a fuzz run before it counts
// as a hang: far more than a linear reader needs even on a busy machine, and
// little enough that a hang shows up.
func slow(n int) time.Duration {
	return 10*time.Second + time.Duration(n)*50*time.Microsecond
}

// checkEstimate asserts that EstimateNodes is an upper bound of the nodes
// go-yaml makes of data, documents included and aliases not followed, for
// whatever part of data parses.
func checkEstimate(t *testing.T, data []byte) {
	t.Helper()
	estimate := input.EstimateNodes(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	nodes := 0
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			break
		}
		nodes += countNodes(&doc)
	}
	if nodes > estimate {
		t.Fatalf("EstimateNodes says %d, go-yaml made %d nodes of:\n%q", estimate, nodes, data)
	}
}

func countNodes(n *yaml.Node) int {
	c := 1
	for _, child := range n.Content {
		c += countNodes(child)
	}
	return c
}
