package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Floor is the serialization floor of a run: the time the project's YAML
// library (kyaml's go.yaml.in/yaml/v3) needs just to decode the input files
// into nodes and to encode the output documents from nodes, on one
// goroutine, doing nothing else.
type Floor struct {
	Decode      time.Duration `json:"decode"`
	Encode      time.Duration `json:"encode"`
	InputBytes  int64         `json:"inputBytes"`
	OutputBytes int64         `json:"outputBytes"`
	InputDocs   int           `json:"inputDocs"`
	OutputDocs  int           `json:"outputDocs"`
}

// Total is decode plus encode.
func (f Floor) Total() time.Duration { return f.Decode + f.Encode }

// MeasureFloor decodes every .yaml file below inputDir and encodes the
// documents of outputFile, timing only the library calls. Each input file is
// decoded into nodes that are then dropped; the output is decoded (untimed)
// in batches of documents that are then encoded (timed), each with a fresh
// encoder of the settings kyaml writes with, which is the fastest way the
// library offers (one encoder over a long stream slows down with every
// document it has written).
func MeasureFloor(inputDir, outputFile string) (Floor, error) {
	var f Floor
	var files []string
	err := filepath.WalkDir(inputDir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return f, err
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return f, err
		}
		f.InputBytes += int64(len(data))
		start := time.Now()
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var n yaml.Node
			if err := dec.Decode(&n); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return f, fmt.Errorf("%s: %w", name, err)
			}
			f.InputDocs++
		}
		f.Decode += time.Since(start)
	}

	data, err := os.ReadFile(outputFile)
	if err != nil {
		return f, err
	}
	f.OutputBytes = int64(len(data))
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var buf bytes.Buffer
	const batch = 2000
	for done := false; !done; {
		docs := make([]*yaml.Node, 0, batch)
		for len(docs) < batch {
			n := new(yaml.Node)
			if err := dec.Decode(n); err != nil {
				if errors.Is(err, io.EOF) {
					done = true
					break
				}
				return f, fmt.Errorf("%s: %w", outputFile, err)
			}
			docs = append(docs, n)
		}
		start := time.Now()
		for _, n := range docs {
			buf.Reset()
			enc := yaml.NewEncoder(&buf)
			if err := enc.Encode(n); err != nil {
				return f, err
			}
			if err := enc.Close(); err != nil {
				return f, err
			}
		}
		f.Encode += time.Since(start)
		f.OutputDocs += len(docs)
	}
	return f, nil
}
