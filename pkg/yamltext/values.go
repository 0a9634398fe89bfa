package yamltext

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Values are the Helm values of one release (an app's spec), held as the
// text they take in their release (EncodeValues), so that a run holds
// compact text rather than node trees until the release is written. The
// zero Values is an app without a spec.
type Values struct {
	text []byte
	// err is why the tree could not be encoded (a *yamlnode.PathError of
	// NormalizedCopy): EncodeValues keeps it for whoever renders the release.
	err error
}

// IsZero reports whether there are no values (the app has no spec).
func (v Values) IsZero() bool { return v.text == nil && v.err == nil }

// Err is why encoding the values failed; nil for values encoded without
// trouble.
func (v Values) Err() error { return v.err }

// Node returns the values as their release holds them: the text decoded
// back into the tree normalised as releases copy it
// (yamlnode.NormalizedCopy: aliases expanded, keys sorted; comments,
// anchors and styles other than literal blocks dropped). Every call returns
// a new tree.
func (v Values) Node() (*yaml.Node, error) {
	switch {
	case v.err != nil:
		return nil, v.err
	case v.text != nil:
		var doc yaml.Node
		if err := yaml.Unmarshal(append([]byte(valuesContext), v.text...), &doc); err != nil {
			return nil, fmt.Errorf("failed to decode encoded values: %w", err)
		}
		return yamlnode.NormalizedCopy(yamlnode.Lookup(&doc, "spec", "values"), yamlnode.DefaultBudget)
	}
	return nil, nil
}

// valuesContext is how a HelmRelease document reads up to its values: the
// values are encoded inside it, so that their text is exactly what the
// encoder writes at that place of a release (the same indentation, the same
// state), and then cut out.
const valuesContext = "spec:\n  values:"

// scratchBuffers hold the text of values while they are encoded.
var scratchBuffers = sync.Pool{New: func() any { return new([]byte) }}

// EncodeValues returns spec, an app's spec as read, as the text it takes
// in its release, normalised as yamlnode.NormalizedCopy copies it; nil
// gives the zero Values. A tree that cannot be copied gives Values whose
// Err says why, reported where the release is rendered.
func EncodeValues(spec *yaml.Node) Values {
	if spec == nil {
		return Values{}
	}
	// NormalizedCopy's checks and limits apply to the spec, not to the two
	// levels around it; counting those makes the limits a shade stricter
	// for the fast path only, which then leaves the tree to NormalizedCopy.
	doc := yamlnode.Map("spec", yamlnode.Map("values", spec))
	scratch := scratchBuffers.Get().(*[]byte)
	defer scratchBuffers.Put(scratch)
	text, ok := emitNormalized((*scratch)[:0], doc, yamlnode.DefaultBudget, yamlnode.MaxDepth)
	if cap(text) <= 1<<20 {
		*scratch = text
	}
	if !ok {
		values, err := yamlnode.NormalizedCopy(spec, yamlnode.DefaultBudget)
		if err != nil {
			return Values{err: err}
		}
		if text, err = AppendDocument(nil, yamlnode.Map("spec", yamlnode.Map("values", values))); err != nil {
			return Values{err: err}
		}
	}
	if !bytes.HasPrefix(text, []byte(valuesContext)) {
		return Values{err: fmt.Errorf("internal error: encoded values start with %q", text[:min(len(text), 40)])}
	}
	// A copy of just the text: the scratch buffer is used again.
	return Values{text: bytes.Clone(text[len(valuesContext):])}
}

// placeholderValue is the scalar that stands in for encoded values in a
// release until the release is written.
const placeholderValue = "computeplane-fn.encoded-value"

// Placeholder returns the node that holds the place of encoded values at
// spec.values of a release, for AppendRelease.
func Placeholder() *yaml.Node { return yamlnode.String(placeholderValue) }

// placeholderLine is the line of a release that holds the placeholder:
// spec.values, two spaces in, since no other mapping at that depth of a
// release has a key named values.
var placeholderLine = []byte("\n  values: " + placeholderValue + "\n")

// errPlaceholder says a release given to AppendRelease does not hold the
// placeholder exactly once.
var errPlaceholder = errors.New("internal error: the release does not hold one placeholder for its values")

// AppendRelease appends release, a HelmRelease whose spec.values is
// Placeholder(), as one YAML document with the encoded values v in the
// placeholder's place: byte for byte what AppendDocument writes for the
// release holding v.Node(). The release is encoded, then the values' text
// is spliced in, so that their tree is never rebuilt.
func AppendRelease(buf []byte, release *yaml.Node, v Values) ([]byte, error) {
	if v.err != nil {
		return buf, v.err
	}
	start := len(buf)
	out, err := AppendDocument(buf, release)
	if err != nil {
		return buf, err
	}
	doc := out[start:]
	i := bytes.Index(doc, placeholderLine)
	if i < 0 || bytes.Contains(doc[i+len(placeholderLine):], placeholderLine) || v.text == nil {
		return buf[:start], errPlaceholder
	}
	at := start + i + len("\n  values:")
	tail := bytes.Clone(out[start+i+len(placeholderLine):])
	out = append(out[:at], v.text...)
	return append(out, tail...), nil
}
