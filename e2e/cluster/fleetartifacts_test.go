package cluster

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// testFleetArtifacts reconciles the Fleet stage's fleet laid out with a
// source per namespace (spec.fleet.unitSource: ExternalArtifact,
// docs/flux-wiring.md "A source per namespace"), as Cozystack runs Flux on
// the oldest platform: kustomize-controller with its ExternalArtifact gate,
// source-watcher cutting the fleet source in two levels. Every unit must
// read an artifact (only the root the fleet source), every rendered object
// must be applied by its unit's Kustomization, and growth that splits a
// unit into parts, the parts merging back and the apps leaving Git must go
// through without deleting anything else.
func (e *env) testFleetArtifacts(t *testing.T) {
	f, uids := e.startFleet(t, map[string]any{"unitSource": "ExternalArtifact"})
	for _, name := range f.kustomizations() {
		ks := f.objs[harness.ObjectKey(obj(kustomizeV1, "Kustomization", e.mode.fleetNamespace, name, nil))]
		if kind, _, _ := unstructured.NestedString(ks.Object, "spec", "sourceRef", "kind"); kind != "ExternalArtifact" {
			t.Errorf("Kustomization %s reads a %s, want an ExternalArtifact (only the root reads the fleet source)", name, kind)
		}
	}
	f.growAndShrink(t, uids)
}
