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

// BenchmarkDecode measures reading the fixtures' YAML with every check.
func BenchmarkDecode(b *testing.B) {
	files, _ := filepath.Glob("../../fixtures/*/*.yaml")
	var data []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, append(d, []byte("\n---\n")...)...)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := input.Decode(data, "x.yaml"); err != nil {
			b.Fatal(err)
		}
	}
}
