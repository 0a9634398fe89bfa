package input_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/input"
)

// BenchmarkEstimateNodes measures the estimate on the fixtures' YAML.
func BenchmarkEstimateNodes(b *testing.B) {
	files, _ := filepath.Glob("../../fixtures/*/*.yaml")
	var data []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d...)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		input.EstimateNodes(data)
	}
}

// BenchmarkDecode measures reading the fixtures' YAML with every check:
// the files that read without problems (the error- fixtures hold input
// that is refused).
func BenchmarkDecode(b *testing.B) {
	files, _ := filepath.Glob("../../fixtures/*/*.yaml")
	var data []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if _, problems := input.Decode(d, f); len(problems) > 0 {
			continue
		}
		data = append(data, append(d, []byte("\n---\n")...)...)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, problems := input.Decode(data, "x.yaml"); len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}
