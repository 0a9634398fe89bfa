package yamltext_test

import (
	"bytes"
	"os"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

// benchDocs are the documents of a rendered fleet, when BENCH_YAML names
// one, or of a small stream otherwise.
func benchDocs(b *testing.B) ([]*yaml.Node, int64) {
	b.Helper()
	data := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    a: b\ndata:\n  k: |\n    multi\n    line\n  list: \"[1, 2]\"\n")
	if name := os.Getenv("BENCH_YAML"); name != "" {
		var err error
		if data, err = os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		n := new(yaml.Node)
		if dec.Decode(n) != nil {
			break
		}
		// As rendered: styles and comments of the text are not in the trees.
		c, err := yamlnode.NormalizedCopy(n, yamlnode.DefaultBudget)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, c)
	}
	return docs, int64(len(data))
}

func BenchmarkAppendDocument(b *testing.B) {
	docs, size := benchDocs(b)
	b.SetBytes(size)
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		for _, d := range docs {
			buf = buf[:0]
			var ok bool
			if buf, ok = yamltext.EmitDocument(buf, d); !ok {
				b.Fatal("not written")
			}
		}
	}
}

func BenchmarkLibrary(b *testing.B) {
	docs, size := benchDocs(b)
	b.SetBytes(size)
	b.ReportAllocs()
	var buf bytes.Buffer
	for b.Loop() {
		for _, d := range docs {
			buf.Reset()
			enc := yaml.NewEncoder(&buf)
			if err := enc.Encode(d); err != nil {
				b.Fatal(err)
			}
			enc.Close()
		}
	}
}
