package render

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

// Body is the content of an output object, in whichever form is cheapest to
// hold until the object is written: a node tree (NodeBody), text encoded
// already (a large run holds each cluster's objects so), or a release put
// off until it is written (an app whose values were encoded while its file
// was read). Every form writes the same bytes for the same object.
type Body interface {
	// AppendYAML appends the object as one YAML document, without a "---"
	// line, to buf.
	AppendYAML(buf []byte) ([]byte, error)
	// Node returns the object as a node tree.
	Node() (*yaml.Node, error)
}

// NodeBody is a body held as a node tree. Node returns the tree itself.
func NodeBody(n *yaml.Node) Body { return nodeBody{n} }

type nodeBody struct{ n *yaml.Node }

func (b nodeBody) AppendYAML(buf []byte) ([]byte, error) { return yamltext.AppendDocument(buf, b.n) }
func (b nodeBody) Node() (*yaml.Node, error)             { return b.n, nil }

// textBody is a body held as one encoded YAML document.
type textBody []byte

func (b textBody) AppendYAML(buf []byte) ([]byte, error) { return append(buf, b...), nil }

// Node decodes the text into the tree it was encoded from (no styles of the
// text).
func (b textBody) Node() (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("failed to decode: %w", err)
	}
	return yamlnode.NormalizedCopy(&doc, yamlnode.DefaultBudget)
}

// releaseBody is the release of an app, rendered only when it is written:
// the shared parts of its definition's releases, its own metadata, and the
// text of its values (model.App.Values) spliced in (yamltext.AppendRelease).
// Rendering it then can fail on nothing the user wrote: the check stage
// (package fleet) refused every app whose values could not be encoded.
type releaseBody struct {
	releases *releases
	app      *model.App
}

func (b releaseBody) AppendYAML(buf []byte) ([]byte, error) {
	if b.app.Values == nil {
		n, err := b.releases.node(b.app, nil)
		if err != nil {
			return buf, err
		}
		return yamltext.AppendDocument(buf, n)
	}
	n, err := b.releases.node(b.app, yamltext.Placeholder())
	if err != nil {
		return buf, err
	}
	return yamltext.AppendRelease(buf, n, b.app.Values)
}

// Node builds the release as a tree of its own, which the caller may change
// without touching the template every release shares.
func (b releaseBody) Node() (*yaml.Node, error) {
	values, err := yamltext.DecodeValues(b.app.Values)
	if err != nil {
		return nil, err
	}
	n, err := b.releases.node(b.app, values)
	if err != nil {
		return nil, err
	}
	return yamlnode.Clone(n), nil
}
