package yamlnode

import "sigs.k8s.io/kustomize/kyaml/yaml"

// Encoded is a value encoded as YAML text ahead of time, so that a large run
// can drop the value's node tree and hold compact text instead. Package
// output makes it (output.EncodeValues: the text that follows "values:" in a
// HelmRelease) and splices it where a generated object holds the node
// returned by Placeholder.
type Encoded struct {
	// Text is the encoded value.
	Text []byte
	// Err is why the value could not be prepared (a *PathError from Copy);
	// it is reported where the value would have been copied.
	Err error
}

// PlaceholderValue is the scalar that stands in for an Encoded value in a
// generated object until the object is written.
const PlaceholderValue = "computeplane-fn.encoded-value"

// Placeholder returns the node that stands in for an Encoded value.
func Placeholder() *yaml.Node { return String(PlaceholderValue) }
