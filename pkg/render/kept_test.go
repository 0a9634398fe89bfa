package render_test

import (
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"sigs.k8s.io/yaml"
)

// TestKeptMeansPruneDisabled: an object is marked Kept exactly when it
// carries kustomize.toolkit.fluxcd.io/prune: disabled, under both
// deliveries. package units moves Kept objects between the parts of the
// platform unit in any order, which is safe only because no Kustomization
// deletes them.
func TestKeptMeansPruneDisabled(t *testing.T) {
	for _, delivery := range []string{"Direct", "Platform"} {
		kept := 0
		for _, o := range renderGuardFleet(t, "{delivery: "+delivery+"}") {
			var meta struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(objectJSON(t, o), &meta); err != nil {
				t.Fatal(err)
			}
			disabled := meta.Metadata.Annotations[wire.PruneAnnotation] == wire.PruneDisabled
			if o.Kept != disabled {
				t.Errorf("delivery %s: %s %s/%s: Kept %v, but its prune annotation says %q", delivery, o.Kind, o.Namespace, o.Name, o.Kept, meta.Metadata.Annotations[wire.PruneAnnotation])
			}
			if o.Kept {
				kept++
			}
		}
		if kept == 0 {
			t.Errorf("delivery %s: no object is kept; the test sees nothing", delivery)
		}
	}
}
