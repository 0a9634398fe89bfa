package disttest

import (
	"bytes"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
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
// checks it against the release binaries' build info: the main component
// is the module at the released version; every module a binary links is a
// component at the version and with the hash its build info names, naming
// the binaries that link it, and a dependency of the main component; no
// component is linked by no binary; the direct requirements of go.mod that
// are linked have a detected license; and the SBOM is dated by the commit.
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
	var mainDeps []string
	for _, d := range *bom.Dependencies {
		if d.Ref == main.BOMRef && d.Dependencies != nil {
			mainDeps = *d.Dependencies
		}
	}
	// Every module each release binary links (its build info, what go
	// version -m prints) is a component at that version, with the go.sum
	// hash, naming the binary; and every binary a component names links it.
	linkedBy := map[string][]string{}
	for _, p := range distPlatforms {
		name := filepath.Base(e.binary(p))
		bi, err := buildinfo.ReadFile(e.binary(p))
		if err != nil {
			t.Fatal(err)
		}
		if len(bi.Deps) == 0 {
			t.Fatalf("%s: no module in its build info", name)
		}
		for _, d := range bi.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			linkedBy[d.Path] = append(linkedBy[d.Path], name)
			c, ok := components[d.Path]
			if !ok {
				t.Errorf("%s links %s@%s, which is no component of the SBOM", name, d.Path, d.Version)
				continue
			}
			if c.Version != d.Version {
				t.Errorf("%s links %s@%s, the SBOM says %s", name, d.Path, d.Version, c.Version)
			}
			if want := h1Hex(t, d.Sum); c.Hashes == nil || len(*c.Hashes) != 1 || (*c.Hashes)[0].Algorithm != cdx.HashAlgoSHA256 || (*c.Hashes)[0].Value != want {
				t.Errorf("%s: hashes %v, want SHA-256 %s (the go.sum hash %s)", d.Path, c.Hashes, want, d.Sum)
			}
			if !slices.Contains(binariesOf(c), name) {
				t.Errorf("%s: does not name %s, which links it (it names %v)", d.Path, name, binariesOf(c))
			}
			if !strings.HasPrefix(c.PackageURL, "pkg:golang/"+d.Path+"@") {
				t.Errorf("%s: purl %q", d.Path, c.PackageURL)
			}
			if !slices.Contains(mainDeps, c.BOMRef) {
				t.Errorf("%s is not a dependency of the main component", d.Path)
			}
		}
	}
	for path, c := range components {
		slices.Sort(linkedBy[path])
		if got := binariesOf(c); !slices.Equal(got, slices.Compact(linkedBy[path])) {
			t.Errorf("%s: names the binaries %v, their build info says %v link it", path, got, linkedBy[path])
		}
		if strings.Contains(path, "go-containerregistry") || strings.Contains(path, "cyclonedx") {
			t.Errorf("component %s belongs to the release tooling, not to computeplane-fn", path)
		}
	}
	// The module the issue found missing from the old SBOM of the module
	// graph.
	if _, ok := components["golang.org/x/sys"]; !ok {
		t.Error("golang.org/x/sys, which every binary links, is no component")
	}
	// The direct requirements the function is built from have their
	// licenses detected; the tests' own (go-cmp) are left out.
	direct := directRequirements(t, filepath.Join(e.project, "go.mod"))
	if len(direct) == 0 {
		t.Fatal("go.mod names no direct requirement")
	}
	for _, r := range direct {
		c, ok := components[r.Mod.Path]
		if _, linked := linkedBy[r.Mod.Path]; !linked {
			if ok {
				t.Errorf("%s: linked by no binary, yet a component", r.Mod.Path)
			}
			continue
		}
		if !ok {
			continue // reported above
		}
		if c.Evidence == nil || c.Evidence.Licenses == nil || len(*c.Evidence.Licenses) == 0 {
			t.Errorf("%s: no license detected", r.Mod.Path)
		}
	}
	t.Logf("%d components, %d direct requirements", len(components), len(direct))
}

// binariesOf lists the release binaries a component names, as written.
func binariesOf(c cdx.Component) []string {
	var out []string
	if c.Properties != nil {
		for _, p := range *c.Properties {
			if p.Name == "computeplane-fn:binary" {
				out = append(out, p.Value)
			}
		}
	}
	return out
}

// h1Hex is the hex of a go.sum hash ("h1:<base64 of SHA-256>"), as the SBOM
// writes it.
func h1Hex(t *testing.T, sum string) string {
	t.Helper()
	b64, ok := strings.CutPrefix(sum, "h1:")
	if !ok {
		t.Fatalf("go.sum hash %q is not h1", sum)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("go.sum hash %q: %v", sum, err)
	}
	return hex.EncodeToString(raw)
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
	args := []string{"sbom", "-version", e.version, "-commit", e.commit, "-source", e.source, "-licenses", e.licenses,
		"-source-date-epoch", strconv.FormatInt(e.created.Unix(), 10), "-o", again}
	for _, p := range distPlatforms {
		args = append(args, e.binary(p))
	}
	cmd := exec.Command(filepath.Join(e.project, "bin", "release"), args...)
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
