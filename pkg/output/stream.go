package output

import (
	"bufio"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// Encode writes the objects as one multi-document YAML stream, in the same
// style as kustomize and kpt write YAML (two-space indent, compact lists), so
// that the three ways of running produce the same text.
func Encode(w io.Writer, objs []render.Object) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := yaml.NewEncoder(bw)
	for _, o := range objs {
		if err := enc.Encode(o.Node); err != nil {
			return fmt.Errorf("failed to encode %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("failed to encode output: %w", err)
	}
	return bw.Flush()
}

// EncodeOne returns one object as a YAML document.
func EncodeOne(o render.Object) ([]byte, error) {
	return yaml.Marshal(o.Node)
}
