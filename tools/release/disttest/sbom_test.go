package disttest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/modfile"
)

const modulePath = "github.com/computeplane-dev/computeplane-fn"

// TestSBOM decodes dist/computeplane-fn.cdx.json with cyclonedx-go and
// checks it against the module's go.mod: the main component is the module
// at the released version, every direct requirement that the function's
// packages are built from (not the tests' go-cmp) is a component at the
// version go.mod names (with a hash, a package URL and a detected license)
// and a dependency of the main component, and the SBOM is dated by the
// commit.
func TestSBOM(t *testing.T) {
	e := setup(t)
	data, err := os.ReadFile(filepath.Join(e.dist, "computeplane-fn.cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		t.Fatalf("decode the SBOM: %v", err)
	}
	if bom.BOMFormat != "CycloneDX" || !strings.HasPrefix(bom.SerialNumber, "urn:uuid:") {
		t.Errorf("bomFormat %q, serialNumber %q", bom.BOMFormat, bom.SerialNumber)
	}
	if bom.Metadata == nil || bom.Metadata.Component == nil {
		t.Fatal("no metadata.component")
	}
	if got, want := bom.Metadata.Timestamp, e.created.Format("2006-01-02T15:04:05Z07:00"); got != want {
		t.Errorf("metadata.timestamp %q, want the commit's time %q", got, want)
	}
	main := bom.Metadata.Component
	if componentPath(*main) != modulePath || main.Version != e.version {
		t.Errorf("main component %s@%s, want %s@%s", componentPath(*main), main.Version, modulePath, e.version)
	}
	if main.Licenses == nil || len(*main.Licenses) != 1 || (*main.Licenses)[0].Expression != e.licenses {
		t.Errorf("main component licenses %+v, want %s", main.Licenses, e.licenses)
	}

	components := map[string]cdx.Component{}
	for _, c := range *bom.Components {
		components[componentPath(c)] = c
	}
	direct := directRequirements(t, filepath.Join(e.project, "go.mod"))
	if len(direct) == 0 {
		t.Fatal("go.mod names no direct requirement")
	}
	var mainDeps []string
	for _, d := range *bom.Dependencies {
		if d.Ref == main.BOMRef && d.Dependencies != nil {
			mainDeps = *d.Dependencies
		}
	}
	linked := linkedModules(t, e.project)
	for _, r := range direct {
		c, ok := components[r.Mod.Path]
		if !linked[r.Mod.Path] {
			// Required by the tests only (go-cmp): the SBOM describes
			// what the function is built from, so it is left out.
			if ok {
				t.Errorf("%s: required by tests only, yet a component", r.Mod.Path)
			}
			continue
		}
		if !ok {
			t.Errorf("direct requirement %s is no component", r.Mod.Path)
			continue
		}
		if c.Version != r.Mod.Version {
			t.Errorf("%s: version %s, go.mod says %s", r.Mod.Path, c.Version, r.Mod.Version)
		}
		if c.Hashes == nil || len(*c.Hashes) == 0 || !strings.HasPrefix(c.PackageURL, "pkg:golang/"+r.Mod.Path+"@") {
			t.Errorf("%s: hashes %v, purl %q", r.Mod.Path, c.Hashes, c.PackageURL)
		}
		if c.Evidence == nil || c.Evidence.Licenses == nil || len(*c.Evidence.Licenses) == 0 {
			t.Errorf("%s: no license detected", r.Mod.Path)
		}
		if !slices.Contains(mainDeps, c.BOMRef) {
			t.Errorf("%s is not a dependency of the main component", r.Mod.Path)
		}
	}
	for name := range components {
		if strings.Contains(name, "go-containerregistry") || strings.Contains(name, "cyclonedx") {
			t.Errorf("component %s belongs to the release tooling, not to computeplane-fn", name)
		}
	}
	t.Logf("%d components, %d direct requirements", len(components), len(direct))
}

func directRequirements(t *testing.T, path string) []*modfile.Require {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	var direct []*modfile.Require
	for _, r := range f.Require {
		if !r.Indirect {
			direct = append(direct, r)
		}
	}
	return direct
}

// TestSBOMIsReproducible makes the SBOM again with the command make dist
// ran (bin/release sbom, same arguments) and compares the bytes.
func TestSBOMIsReproducible(t *testing.T) {
	e := setup(t)
	again := filepath.Join(t.TempDir(), "again.cdx.json")
	cmd := exec.Command(filepath.Join(e.project, "bin", "release"), "sbom", "-module-dir", e.project,
		"-version", e.version, "-commit", e.commit, "-source", e.source, "-licenses", e.licenses,
		"-source-date-epoch", strconv.FormatInt(e.created.Unix(), 10), "-o", again)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release sbom: %v\n%s", err, out)
	}
	first, err := os.ReadFile(filepath.Join(e.dist, "computeplane-fn.cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(again)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(first), string(second)); diff != "" {
		t.Errorf("the SBOM made again differs from dist/computeplane-fn.cdx.json (-dist +again):\n%s", diff)
	}
}

// componentPath is the module path of a component: cyclonedx-gomod puts it
// whole in the name.
func componentPath(c cdx.Component) string {
	if c.Group != "" {
		return c.Group + "/" + c.Name
	}
	return c.Name
}

// linkedModules are the modules the main module's packages (not its tests)
// are built from, as go list says.
func linkedModules(t *testing.T, dir string) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "./...")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	mods := map[string]bool{}
	for _, m := range strings.Fields(string(out)) {
		mods[m] = true
	}
	return mods
}
