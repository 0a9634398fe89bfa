package output

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/yamlemit"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// valuesContext is how a HelmRelease document reads up to its values: the
// values are encoded inside it, so that their text is exactly what the
// encoder writes at that place of a release (the same indentation, the same
// state), and then cut out.
const valuesContext = "spec:\n  values:"

// placeholderLine is the line of a release that holds the placeholder of
// encoded values: spec.values, two spaces in, since no other mapping at that
// depth of a release has a key named values.
var placeholderLine = []byte("\n  values: " + yamlnode.PlaceholderValue + "\n")

// EncodeValues encodes an app's spec ahead of time as the values of its
// HelmRelease, normalised as render copies them (yamlnode.Copy: aliases
// expanded; comments, anchors and styles other than literal blocks
// dropped). Once encoded, the spec's node tree can be dropped: a large
// fleet then holds compact text instead of nodes until its releases are
// written. A spec that cannot be copied yields an Encoded with Err set.
func EncodeValues(spec *yaml.Node) *yamlnode.Encoded {
	// Copy's checks and limits apply to spec, not to the two levels
	// around it; counting those makes the limits a shade stricter for the
	// fast path only, which then leaves the tree to Copy.
	doc := yamlnode.Map("spec", yamlnode.Map("values", spec))
	scratch := getBuffer()
	defer putBuffer(scratch)
	text, ok := yamlemit.AppendCopy((*scratch)[:0], doc, yamlnode.DefaultBudget, yamlnode.MaxDepth)
	*scratch = text
	if !ok {
		values, err := yamlnode.Copy(spec, yamlnode.DefaultBudget)
		if err != nil {
			return &yamlnode.Encoded{Err: err}
		}
		doc = yamlnode.Map("spec", yamlnode.Map("values", values))
		if text, err = yamlnode.AppendDocument(nil, doc); err != nil {
			return &yamlnode.Encoded{Err: err}
		}
	}
	if !bytes.HasPrefix(text, []byte(valuesContext)) {
		return &yamlnode.Encoded{Err: fmt.Errorf("internal error: encoded values start with %q", text[:min(len(text), 40)])}
	}
	// A copy of just the text: the scratch buffer goes back to the pool.
	return &yamlnode.Encoded{Text: bytes.Clone(text[len(valuesContext):])}
}

// spliceValues replaces the placeholder line of the release document in
// buf[start:] with the encoded values.
func spliceValues(buf []byte, start int, values *yamlnode.Encoded) ([]byte, error) {
	doc := buf[start:]
	i := bytes.Index(doc, placeholderLine)
	if i < 0 || bytes.Contains(doc[i+len(placeholderLine):], placeholderLine) {
		return buf, fmt.Errorf("internal error: the release does not hold one placeholder for its values")
	}
	at := start + i + len("\n  values:")
	end := start + i + len(placeholderLine)
	tail := bytes.Clone(buf[end:])
	buf = append(buf[:at], values.Text...)
	return append(buf, tail...), nil
}
