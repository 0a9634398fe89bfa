package disttest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"golang.org/x/mod/modfile"

	"github.com/computeplane-dev/computeplane-fn/tools/release/sbom"
)

const modulePath = "github.com/computeplane-dev/computeplane-fn"

// TestSBOM decodes dist/computeplane-fn.cdx.json with cyclonedx-go and
// checks it against the module's go.mod: the main component is the module
// at the released version, every direct requirement is a component at the
// version go.mod names (with a hash, a package URL and a detected license)
// and a dependency of
// the main component, and the SBOM is dated by the commit.
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
	for _, r := range direct {
		c, ok := components[r.Mod.Path]
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

// TestSBOMIsReproducible makes the SBOM again and compares the bytes.
func TestSBOMIsReproducible(t *testing.T) {
	e := setup(t)
	bom, err := sbom.Generate(sbom.Options{
		ModuleDir: e.project, Version: e.version, Commit: e.commit,
		Source: e.source, Licenses: e.licenses, Created: e.created,
	})
	if err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := sbom.Encode(&again, bom); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(e.dist, "computeplane-fn.cdx.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, again.Bytes()) {
		t.Errorf("the SBOM made again differs from dist/computeplane-fn.cdx.json (%d and %d bytes)", len(first), again.Len())
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
