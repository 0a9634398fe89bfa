package units_test

import (
	"fmt"
	"path"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// benchFleet is a fleet at the scale of the spec: 10,000 tenants, half with
// a ComputePlane cluster, 100,000 apps spread unevenly (0 to 19 per tenant),
// and one tenant with 3,000 apps, which is split.
func benchFleet() []render.Object {
	objs := []render.Object{
		object("source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator", "cozy-system", "computeplane-application", true, "spec: {}\n"),
	}
	for t := range 10_000 {
		ns := fmt.Sprintf("tenant-t%05d", t)
		if t%2 == 0 {
			objs = append(objs, object("helm.toolkit.fluxcd.io/v2", "HelmRelease", ns, "computeplane", false, "spec: {interval: 5m}\n"))
		}
		for a := range (t * 7) % 20 {
			objs = append(objs, helmRelease(ns, fmt.Sprintf("postgres-db%d", a)))
		}
	}
	for a := range 3000 {
		objs = append(objs, helmRelease("tenant-huge", fmt.Sprintf("n8n-flow%04d", a)))
	}
	return objs
}

// BenchmarkSlowestUnitBuild lays out the 10,000-tenant fleet with the
// default bound and builds its largest unit with kustomize, the way
// kustomize-controller does on every reconcile. Target: under a second.
func BenchmarkSlowestUnitBuild(b *testing.B) {
	plan, files := benchLayout(b)
	largest := plan.Units[0]
	for _, u := range plan.Units {
		if len(u.Objects) > len(largest.Objects) {
			largest = u
		}
	}
	fs := writeFS(b, files)
	dir := path.Join("/fleet", largest.Folder)
	for b.Loop() {
		build(b, fs, dir)
	}
	b.ReportMetric(float64(len(largest.Objects)), "objects")
	b.ReportMetric(float64(len(plan.Units)), "units")
}

// BenchmarkWiringGroupBuild builds the largest wiring group of the same
// fleet: the Kustomizations of about 1/64 of the units.
func BenchmarkWiringGroupBuild(b *testing.B) {
	plan, files := benchLayout(b)
	largest := plan.Groups[0]
	for _, g := range plan.Groups {
		if len(g.Units) > len(largest.Units) {
			largest = g
		}
	}
	fs := writeFS(b, files)
	for b.Loop() {
		build(b, fs, path.Join("/fleet", largest.Folder))
	}
	b.ReportMetric(float64(len(largest.Units)), "kustomizations")
}

// BenchmarkLayout measures laying out and encoding the whole fleet.
func BenchmarkLayout(b *testing.B) {
	objs := benchFleet()
	cfg := fleetConfig(nil)
	for b.Loop() {
		if _, err := units.Files(cfg, objs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(objs)), "objects")
}

func benchLayout(b *testing.B) (*units.Plan, []units.File) {
	b.Helper()
	plan, err := units.NewPlan(fleetConfig(nil), benchFleet())
	if err != nil {
		b.Fatal(err)
	}
	files, ferr := plan.Files()
	if ferr != nil {
		b.Fatal(ferr)
	}
	return plan, files
}
