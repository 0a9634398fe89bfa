package yamltext

import (
	"bytes"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// AppendDocument appends n as one YAML document (without a "---" line) to
// buf, byte for byte as kyaml's encoder writes it: with this package's
// emitter, which writes the same bytes several times faster, or with the
// library itself when the tree holds what the emitter leaves to it
// (comments, anchors, flow styles of an input that passes through, for one).
func AppendDocument(buf []byte, n *yaml.Node) ([]byte, error) {
	if out, ok := emitDocument(buf, n); ok {
		return out, nil
	}
	// The library writes a string << plain, which YAML 1.1 readers take for
	// a merge key; the emitter never does.
	yamlnode.QuoteMergeKeys(n)
	w := bytes.NewBuffer(buf)
	enc := yaml.NewEncoder(w)
	if err := enc.Encode(n); err != nil {
		return buf, err
	}
	if err := enc.Close(); err != nil {
		return buf, err
	}
	return w.Bytes(), nil
}
