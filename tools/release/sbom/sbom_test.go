package sbom

import (
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-cmp/cmp"
)

// TestRenameMain gives the main component the release's version and follows
// its new reference through the dependency graph; a version with build
// metadata is escaped in the package URL.
func TestRenameMain(t *testing.T) {
	const old = "pkg:golang/github.com/computeplane-dev/computeplane-fn?type=module"
	bom := &cdx.BOM{
		Metadata: &cdx.Metadata{Component: &cdx.Component{
			BOMRef: old, Name: "github.com/computeplane-dev/computeplane-fn",
			PackageURL: "pkg:golang/github.com/computeplane-dev/computeplane-fn",
		}},
		Dependencies: &[]cdx.Dependency{
			{Ref: old, Dependencies: &[]string{"pkg:golang/sigs.k8s.io/yaml@v1.6.0?type=module"}},
			{Ref: "pkg:golang/sigs.k8s.io/yaml@v1.6.0?type=module", Dependencies: &[]string{old}},
		},
	}
	renameMain(bom, "v0.0.0-20261129205018-1b8282dc91b8+dirty")
	const ref = "pkg:golang/github.com/computeplane-dev/computeplane-fn@v0.0.0-20261129205018-1b8282dc91b8%2Bdirty?type=module"
	want := &cdx.BOM{
		Metadata: &cdx.Metadata{Component: &cdx.Component{
			BOMRef: ref, Name: "github.com/computeplane-dev/computeplane-fn",
			Version:    "v0.0.0-20261129205018-1b8282dc91b8+dirty",
			PackageURL: "pkg:golang/github.com/computeplane-dev/computeplane-fn@v0.0.0-20261129205018-1b8282dc91b8%2Bdirty",
		}},
		Dependencies: &[]cdx.Dependency{
			{Ref: ref, Dependencies: &[]string{"pkg:golang/sigs.k8s.io/yaml@v1.6.0?type=module"}},
			{Ref: "pkg:golang/sigs.k8s.io/yaml@v1.6.0?type=module", Dependencies: &[]string{ref}},
		},
	}
	if diff := cmp.Diff(want, bom); diff != "" {
		t.Errorf("renameMain (-want +got):\n%s", diff)
	}
}
