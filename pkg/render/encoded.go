package render

import (
	"bytes"
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// placeholderLine is the line of a release that holds the placeholder of
// encoded values: spec.values, two spaces in, since no other mapping at that
// depth of a release has a key named values.
var placeholderLine = []byte("\n  values: " + yamlnode.PlaceholderValue + "\n")

// AppendYAML appends the object as one YAML document to buf, byte for byte
// what the library's encoder writes for its Build: text held ready is
// copied, a release put off is rendered, and encoded values are spliced in
// where the release holds their placeholder. Writers call it for each object
// just before writing it, so that a large fleet never holds the nodes, nor
// the text, of all its releases at once.
func (o Object) AppendYAML(buf []byte) ([]byte, error) {
	if o.Node == nil && o.Text != nil {
		return append(buf, o.Text...), nil
	}
	if o.pending != nil {
		rendered, err := o.pending.releases.render(o.pending.app)
		if err != nil {
			return buf, fmt.Errorf("failed to render %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
		o = rendered
	}
	start := len(buf)
	out, err := yamlnode.AppendDocument(buf, o.Node)
	if err != nil {
		return buf, fmt.Errorf("failed to encode %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
	}
	if o.Values == nil {
		return out, nil
	}
	doc := out[start:]
	i := bytes.Index(doc, placeholderLine)
	if i < 0 || bytes.Contains(doc[i+len(placeholderLine):], placeholderLine) {
		return buf[:start], fmt.Errorf("failed to encode %s %s/%s: internal error: the release does not hold one placeholder for its values", o.Kind, o.Namespace, o.Name)
	}
	at := start + i + len("\n  values:")
	tail := bytes.Clone(out[start+i+len(placeholderLine):])
	out = append(out[:at], o.Values.Text...)
	return append(out, tail...), nil
}
