package yamlnode

import (
	"bytes"
	"fmt"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/yamlemit"
)

// Encoded is a value encoded as YAML text ahead of time, so that a large run
// can drop the value's node tree and hold compact text instead.
// EncodeValues makes it (the text that follows "values:" in a HelmRelease);
// package render splices it where a generated object holds the node
// returned by Placeholder.
type Encoded struct {
	// Text is the encoded value.
	Text []byte
	// Err is why the value could not be prepared (a *PathError from NormalizedCopy);
	// it is reported where the value would have been copied.
	Err error
}

// PlaceholderValue is the scalar that stands in for an Encoded value in a
// generated object until the object is written.
const PlaceholderValue = "computeplane-fn.encoded-value"

// Placeholder returns the node that stands in for an Encoded value.
func Placeholder() *yaml.Node { return String(PlaceholderValue) }

// valuesContext is how a HelmRelease document reads up to its values: the
// values are encoded inside it, so that their text is exactly what the
// encoder writes at that place of a release (the same indentation, the same
// state), and then cut out.
const valuesContext = "spec:\n  values:"

// scratchBuffers hold the text of values while they are encoded.
var scratchBuffers = sync.Pool{New: func() any { return new([]byte) }}

// EncodeValues encodes an app's spec ahead of time as the values of its
// HelmRelease, normalised as releases copy them (NormalizedCopy: aliases
// expanded, keys sorted; comments, anchors and styles other than literal
// blocks dropped). Once encoded, the spec's node tree can be dropped: a
// large fleet then holds compact text instead of nodes until its releases
// are written. A spec that cannot be copied yields an Encoded with Err set,
// which rendering its release reports.
func EncodeValues(spec *yaml.Node) *Encoded {
	// NormalizedCopy's checks and limits apply to spec, not to the two levels around
	// it; counting those makes the limits a shade stricter for the fast path
	// only, which then leaves the tree to Copy.
	doc := Map("spec", Map("values", spec))
	scratch := scratchBuffers.Get().(*[]byte)
	defer scratchBuffers.Put(scratch)
	text, ok := yamlemit.AppendCopy((*scratch)[:0], doc, DefaultBudget, MaxDepth)
	if cap(text) <= 1<<20 {
		*scratch = text
	}
	if !ok {
		values, err := NormalizedCopy(spec, DefaultBudget)
		if err != nil {
			return &Encoded{Err: err}
		}
		doc = Map("spec", Map("values", values))
		if text, err = AppendDocument(nil, doc); err != nil {
			return &Encoded{Err: err}
		}
	}
	if !bytes.HasPrefix(text, []byte(valuesContext)) {
		return &Encoded{Err: fmt.Errorf("internal error: encoded values start with %q", text[:min(len(text), 40)])}
	}
	// A copy of just the text: the scratch buffer is used again.
	return &Encoded{Text: bytes.Clone(text[len(valuesContext):])}
}

// Node decodes the values back into the node their release would hold.
func (e *Encoded) Node() (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(append([]byte(valuesContext), e.Text...), &doc); err != nil {
		return nil, fmt.Errorf("failed to decode encoded values: %w", err)
	}
	return NormalizedCopy(Lookup(&doc, "spec", "values"), DefaultBudget)
}
