package yamltext

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// DecodeValues returns encoded values (EncodeValues) as their release
// holds them: the text decoded back into the tree normalised as releases
// copy it (yamlnode.NormalizedCopy: aliases expanded, keys sorted; comments,
// anchors and styles other than literal blocks dropped); nil for no values.
// Every call returns a new tree.
func DecodeValues(text []byte) (*yaml.Node, error) {
	if text == nil {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(append([]byte(valuesContext), text...), &doc); err != nil {
		return nil, fmt.Errorf("failed to decode encoded values: %w", err)
	}
	return yamlnode.NormalizedCopy(yamlnode.Lookup(&doc, "spec", "values"), yamlnode.DefaultBudget)
}

// ReadValues returns encoded values (EncodeValues) as a tree to read, the
// text decoded and nothing more: EncodeValues wrote it normalised already,
// so it reads as DecodeValues returns it, without DecodeValues' copy.
// nil for no values.
func ReadValues(text []byte) (*yaml.Node, error) {
	if text == nil {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(append([]byte(valuesContext), text...), &doc); err != nil {
		return nil, fmt.Errorf("failed to decode encoded values: %w", err)
	}
	return yamlnode.Lookup(&doc, "spec", "values"), nil
}

// valuesContext is how a HelmRelease document reads up to its values: the
// values are encoded inside it, so that their text is exactly what the
// encoder writes at that place of a release (the same indentation, the same
// state), and then cut out.
const valuesContext = "spec:\n  values:"

// scratchBuffers hold the text of values while they are encoded.
var scratchBuffers = sync.Pool{New: func() any { return new([]byte) }}

// EncodeValues returns spec, an app's spec as read, as the text it takes
// in its release (the Helm values at spec.values), normalised as
// yamlnode.NormalizedCopy copies it: compact text that a run holds instead
// of a node tree until the release is written. A nil spec gives nil. A tree
// that cannot be copied (too deep, a merge key, too large) gives
// NormalizedCopy's *yamlnode.PathError, with the path below spec.
func EncodeValues(spec *yaml.Node) ([]byte, error) {
	if spec == nil {
		return nil, nil
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
			return nil, err
		}
		if text, err = AppendDocument(nil, yamlnode.Map("spec", yamlnode.Map("values", values))); err != nil {
			return nil, err
		}
	}
	if !bytes.HasPrefix(text, []byte(valuesContext)) {
		return nil, fmt.Errorf("encoded values start with %q", text[:min(len(text), 40)])
	}
	// A copy of just the text: the scratch buffer is used again.
	return bytes.Clone(text[len(valuesContext):]), nil
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
var errPlaceholder = errors.New("the release does not hold one placeholder for its values")

// AppendRelease appends release, a HelmRelease whose spec.values is
// Placeholder(), as one YAML document with the encoded values (EncodeValues)
// in the placeholder's place: byte for byte what AppendDocument writes for
// the release holding DecodeValues(values). The release is encoded, then the
// values' text is spliced in, so that their tree is never rebuilt.
func AppendRelease(buf []byte, release *yaml.Node, values []byte) ([]byte, error) {
	start := len(buf)
	out, err := AppendDocument(buf, release)
	if err != nil {
		return buf, err
	}
	doc := out[start:]
	i := bytes.Index(doc, placeholderLine)
	if i < 0 || bytes.Contains(doc[i+len(placeholderLine):], placeholderLine) || values == nil {
		return buf[:start], errPlaceholder
	}
	at := start + i + len("\n  values:")
	tail := bytes.Clone(out[start+i+len(placeholderLine):])
	out = append(out[:at], values...)
	return append(out, tail...), nil
}
