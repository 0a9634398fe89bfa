package disttest

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/tools/release/chart"
	"github.com/computeplane-dev/computeplane-fn/tools/release/checksums"
)

// TestChecksums verifies dist/SHA256SUMS with this project's reader and
// with GNU sha256sum, and checks that it covers every release file.
func TestChecksums(t *testing.T) {
	e := setup(t)
	if err := checksums.Verify(e.dist); err != nil {
		t.Error(err)
	}
	sums, err := checksums.Compute(e.dist)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range sums {
		names = append(names, s.Name)
	}
	want := []string{"computeplane-fn.cdx.json", "computeplanegenerator.schema.json", "computeplane-baseline-" + baselineChartVersion(t, e.project) + ".tgz"}
	for _, p := range distPlatforms {
		want = append(want, "computeplane-fn-"+p.OS+"-"+p.Architecture)
	}
	for _, p := range imagePlatforms {
		want = append(want, "computeplane-fn-image-"+p.OS+"-"+p.Architecture+".tar")
	}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("%s does not cover %s; it names %v", checksums.File, w, names)
		}
	}
	sha256sum, err := exec.LookPath("sha256sum")
	if err != nil {
		t.Skip("sha256sum (GNU coreutils) not found: checked with this project's reader only")
	}
	cmd := exec.Command(sha256sum, "--check", "--strict", checksums.File)
	cmd.Dir = e.dist
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum --check: %v\n%s", err, out)
	}
}

// baselineChartVersion is the version of the project's baseline chart,
// which make dist ships beside the image.
func baselineChartVersion(t *testing.T, project string) string {
	t.Helper()
	c, err := chart.Read(filepath.Join(project, "charts", "computeplane-baseline"))
	if err != nil {
		t.Fatal(err)
	}
	return c.Metadata.Version
}
