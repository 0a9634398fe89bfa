package yamlnode

import (
	"bytes"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// HasComments reports whether any node below n carries a comment.
func HasComments(n *yaml.Node) bool {
	if n == nil {
		return false
	}
	if n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
		return true
	}
	if n.Kind == yaml.AliasNode {
		return false
	}
	for _, c := range n.Content {
		if HasComments(c) {
			return true
		}
	}
	return false
}

// Canonical returns n as go-yaml reads it back after writing it as a
// document of its own, for a node that passes through to the output with
// its comments.
//
// go-yaml attaches a comment by where it stands: one after the last entry
// of a nested map belongs to that entry when another document follows, and
// to the document when the stream ends there, and a document's comments are
// not part of the object. An object that keeps its comments would then write
// differently on the next run, where it may stand elsewhere in the stream.
// Written out once and read back alone, it holds what every later run reads
// again. Values, anchors and styles are kept; if the round trip fails, which
// it cannot for a node read by go-yaml, n is returned as it is.
func Canonical(n *yaml.Node) *yaml.Node {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(n); err != nil {
		return n
	}
	if err := enc.Close(); err != nil {
		return n
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(&buf).Decode(&doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != n.Kind {
		return n
	}
	return doc.Content[0]
}
