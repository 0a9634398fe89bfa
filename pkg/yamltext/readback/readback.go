package readback

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Applied returns the JSON that sigs.k8s.io/yaml makes of one YAML
// document: what kubectl and Flux apply.
func Applied(doc []byte) ([]byte, error) {
	j, err := sigsyaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("failed to read the document as Flux does: %w", err)
	}
	return j, nil
}

// Meant returns the JSON of a node as the function means it: YAML 1.2 with
// the node's tags (yamlnode.ToValue).
func Meant(n *yaml.Node) ([]byte, error) {
	v, err := yamlnode.ToValue(n, yamlnode.DefaultBudget)
	if err != nil {
		return nil, fmt.Errorf("failed to convert the node: %w", err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal the node: %w", err)
	}
	return j, nil
}

// separator is a document separator line of a stream.
var separator = regexp.MustCompile(`(?m)^---[ \t]*\n`)

// Documents splits a YAML stream at its "---" lines; documents that hold
// nothing but comments and blank lines are left out.
func Documents(stream []byte) [][]byte {
	var out [][]byte
	for _, doc := range separator.Split(string(stream), -1) {
		if !empty(doc) {
			out = append(out, []byte(doc))
		}
	}
	return out
}

func empty(doc string) bool {
	for _, line := range bytes.Split([]byte(doc), []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}

// Agree checks that every document of a stream reads as the same JSON to
// Flux's reader (Applied) and to the function's (Meant of go-yaml v3's
// node).
func Agree(stream []byte) error {
	for i, doc := range Documents(stream) {
		var n yaml.Node
		if err := yaml.Unmarshal(doc, &n); err != nil {
			return fmt.Errorf("document %d: failed to decode: %w\n%s", i+1, err, doc)
		}
		meant, err := Meant(&n)
		if err != nil {
			return fmt.Errorf("document %d: %w", i+1, err)
		}
		if err := compare(doc, meant); err != nil {
			return fmt.Errorf("document %d: %w", i+1, err)
		}
	}
	return nil
}

// Matches checks that document i of a stream, read as Flux reads it, is the
// node meant[i]; a nil node skips its document (an object that passes
// through, written as the user wrote it).
func Matches(stream []byte, meant []*yaml.Node) error {
	docs := Documents(stream)
	if len(docs) != len(meant) {
		return fmt.Errorf("the stream holds %d documents, want %d", len(docs), len(meant))
	}
	for i, doc := range docs {
		if meant[i] == nil {
			continue
		}
		want, err := Meant(meant[i])
		if err != nil {
			return fmt.Errorf("document %d: %w", i+1, err)
		}
		if err := compare(doc, want); err != nil {
			return fmt.Errorf("document %d: %w", i+1, err)
		}
	}
	return nil
}

func compare(doc, meant []byte) error {
	applied, err := Applied(doc)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, doc)
	}
	if !bytes.Equal(applied, meant) {
		return fmt.Errorf("Flux would apply another object than the one meant\nmeant:   %s\napplied: %s\ndocument:\n%s", meant, applied, doc)
	}
	return nil
}
