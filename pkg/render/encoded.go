package render

import (
	"bytes"
	"fmt"
	"sync"

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

// scratchBuffers hold the text of values while they are encoded.
var scratchBuffers = sync.Pool{New: func() any { return new([]byte) }}

// EncodeValues encodes an app's spec ahead of time as the values of its
// HelmRelease, normalised as releases copy them (yamlnode.Copy: aliases
// expanded, keys sorted; comments, anchors and styles other than literal
// blocks dropped). Once encoded, the spec's node tree can be dropped: a
// large fleet then holds compact text instead of nodes until its releases
// are written. A spec that cannot be copied yields an Encoded with Err set,
// which rendering its release reports.
func EncodeValues(spec *yaml.Node) *yamlnode.Encoded {
	// Copy's checks and limits apply to spec, not to the two levels around
	// it; counting those makes the limits a shade stricter for the fast path
	// only, which then leaves the tree to Copy.
	doc := yamlnode.Map("spec", yamlnode.Map("values", spec))
	scratch := scratchBuffers.Get().(*[]byte)
	defer scratchBuffers.Put(scratch)
	text, ok := yamlemit.AppendCopy((*scratch)[:0], doc, yamlnode.DefaultBudget, yamlnode.MaxDepth)
	if cap(text) <= 1<<20 {
		*scratch = text
	}
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
	// A copy of just the text: the scratch buffer is used again.
	return &yamlnode.Encoded{Text: bytes.Clone(text[len(valuesContext):])}
}

// decodeValues turns encoded values back into the node their release would
// hold.
func decodeValues(e *yamlnode.Encoded) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(append([]byte(valuesContext), e.Text...), &doc); err != nil {
		return nil, fmt.Errorf("failed to decode encoded values: %w", err)
	}
	return yamlnode.Copy(yamlnode.Lookup(&doc, "spec", "values"), yamlnode.DefaultBudget)
}

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
