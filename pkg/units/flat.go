package units

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// flatFiles lays out generated objects the default way, without
// spec.fleet: one object per file at its Path()
// (<namespace>/<kind-lowercase>-<name>.yaml), encoded exactly as
// output.Encode encodes one document of the stream. Two objects that would
// share a file are a bug: the order stage refuses two objects of one
// identity.
func flatFiles(gen []render.Object) ([]File, error) {
	seen := make(map[string]render.Object, len(gen))
	for _, o := range gen {
		p := o.Path()
		if prev, dup := seen[p]; dup {
			return nil, fmt.Errorf("failed to lay out the fleet folder: %s %s/%s and %s %s/%s would both be written to %s",
				prev.Kind, prev.Namespace, prev.Name, o.Kind, o.Namespace, o.Name, p)
		}
		seen[p] = o
	}
	// Encoding is most of the work for a large fleet: spread it over the
	// cores. The encoder only reads the nodes.
	out := make([]File, len(gen))
	errs := make([]error, len(gen))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(gen)/256))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(gen); i += workers {
				data, err := output.EncodeOne(gen[i])
				out[i], errs[i] = File{Path: gen[i].Path(), Data: data}, err
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			o := gen[i]
			return nil, fmt.Errorf("failed to encode %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
	}
	return out, nil
}
