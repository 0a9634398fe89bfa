package output

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// MaxManagedFileBytes is the largest file the folder writer will consider
// its own. A bigger file in the output folder is foreign and never touched;
// nothing this function writes comes near it.
const MaxManagedFileBytes = 16 << 20

// IsManaged reports whether data is a file that computeplane-fn wrote, which
// is how the folder writer tells its own files from everybody else's: valid
// YAML holding at least one document, where every document is a mapping whose
// metadata.labels carry app.kubernetes.io/managed-by: computeplane-fn.
//
// The rule looks at content, never at names, so that hand-written files next
// to the generated ones (README.md, a kustomization.yaml of one's own, a
// HelmRelease someone added by hand) are never pruned or overwritten. A
// generated file that someone edited stays recognisable as long as the label
// stays. Anything else written into a fleet folder by this project (the
// kustomization.yaml files of a Flux unit layout) must carry the label in its
// metadata too, or the writer refuses to write it, since it could never
// prune it later.
func IsManaged(data []byte) bool {
	_, managed := managedDocuments(data, false)
	return managed
}

// managedDocuments is IsManaged that also returns the documents when keep is
// set and the file is managed, so that a Reader sees them without a second
// parse.
func managedDocuments(data []byte, keep bool) ([]*yaml.Node, bool) {
	if len(data) == 0 || len(data) > MaxManagedFileBytes || !utf8.Valid(data) {
		return nil, false
	}
	docs, managed, err := allDocumentsLabelled(data, keep)
	if err != nil || !managed {
		return nil, false
	}
	return docs, true
}

func allDocumentsLabelled(data []byte, keep bool) (kept []*yaml.Node, ok bool, err error) {
	// The YAML library has panicked on malformed input before; a panic here
	// means "not ours", never a crash.
	defer func() {
		if r := recover(); r != nil {
			kept, ok, err = nil, false, errors.New("the YAML parser failed")
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	docs := 0
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false, err
		}
		n := yamlnode.Resolve(&doc)
		if yamlnode.IsNull(n) {
			continue
		}
		label := yamlnode.Lookup(n, "metadata", "labels", wire.ManagedByLabel)
		if label == nil || label.Kind != yaml.ScalarNode || label.Value != wire.ManagedByValue {
			return nil, false, nil
		}
		docs++
		if keep {
			kept = append(kept, n)
		}
	}
	return kept, docs > 0, nil
}
