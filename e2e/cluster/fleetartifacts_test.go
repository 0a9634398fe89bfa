package cluster

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	e.ensureFlux(t)
	e.ensurePlatform(t)
	f := &fleetRepo{e: e, work: e.fleetDir(t, "fleet"), repo: filepath.Join(t.TempDir(), "repo")}
	f.extraApps(t, 0)
	editSpec(t, filepath.Join(f.work, "config.yaml"), func(spec map[string]any) {
		spec["inputs"] = append(spec["inputs"].([]any), "extra.yaml")
	})
	f.setFleet(t, map[string]any{"unitSource": "ExternalArtifact"})
	for _, ns := range []string{"tenant-gamma", "tenant-delta", "tenant-epsilon"} {
		e.namespaces(ns)
		e.writeCozystackValues(t, ns)
	}
	for _, ns := range []string{"tenant-gamma", "tenant-delta"} {
		e.standInComputePlane(t, ns)
	}
	f.publish(t)
	for _, name := range f.kustomizations() {
		ks := f.objs[harness.ObjectKey(obj(kustomizeV1, "Kustomization", e.mode.fleetNamespace, name, nil))]
		kind, _, _ := unstructured.NestedString(ks.Object, "spec", "sourceRef", "kind")
		if kind != "ExternalArtifact" {
			t.Errorf("Kustomization %s reads a %s, want an ExternalArtifact (only the root reads the fleet source)", name, kind)
		}
	}
	e.bootstrapFleet(t, f.all())
	e.applyAll(t, e.admin, []*unstructured.Unstructured{e.fleetRoot()}, false)
	uids := f.waitReconciled(t)
	t.Logf("fleet reconciled from its artifacts: %d objects in %d Kustomizations", len(uids), len(f.kustomizations()))

	step := func(name string, change func()) {
		t.Helper()
		change()
		f.publish(t)
		after := f.waitReconciled(t)
		sameUIDs(t, name, uids, after)
		uids = after
		t.Logf("%s: %d objects in %d Kustomizations at %s", name, len(after), len(f.kustomizations()), f.revision)
	}
	step("split by growth", func() { f.extraApps(t, 12) })
	if !hasPart(f) {
		t.Fatalf("12 more apps did not split tenant-gamma's unit (maxObjectsPerUnit 10): Kustomizations %v", f.kustomizations())
	}
	// Shrinking: the parts merge back first (their Kustomizations orphan
	// what they applied, and the first part takes it over), then the apps
	// leave Git and are pruned; removed in the commit that removes their
	// part, they would be orphaned instead (flux-wiring.md, "Shrinking").
	step("merge back", func() { f.setFleet(t, map[string]any{"maxObjectsPerUnit": 50}) })
	if hasPart(f) {
		t.Fatalf("maxObjectsPerUnit 50 did not merge tenant-gamma's parts: Kustomizations %s", strings.Join(f.kustomizations(), ", "))
	}
	step("remove the extra apps", func() { f.extraApps(t, 0) })
	for i := 1; i <= 12; i++ {
		e.waitFor(t, e.admin, helmV2, "HelmRelease", "tenant-gamma", fmt.Sprintf("postgres-extra%02d", i), time.Minute, harness.Gone)
	}
}
