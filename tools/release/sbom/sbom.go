package sbom

import (
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/CycloneDX/cyclonedx-gomod/pkg/generate/bin"
	"github.com/CycloneDX/cyclonedx-gomod/pkg/licensedetect"
	"github.com/CycloneDX/cyclonedx-gomod/pkg/licensedetect/local"
	"github.com/google/uuid"
	"github.com/package-url/packageurl-go"
	"github.com/rs/zerolog"
	"golang.org/x/mod/module"

	"github.com/computeplane-dev/computeplane-fn/tools/release/internal/atomicfile"
)

// Options say what to describe and how the release is named.
type Options struct {
	// Binaries are the release binaries the SBOM describes: its
	// components are the modules their build info says they link.
	Binaries []string
	// Version and Commit are those stamped into the binaries.
	Version, Commit string
	// Source is the URL of the source repository.
	Source string
	// Licenses is the SPDX license expression declared for the main module.
	Licenses string
	// Created is the SBOM's timestamp: the commit's time.
	Created time.Time
	// Log receives the generator's warnings; nil discards them.
	Log io.Writer
}

// generatorPath is the module whose library makes the SBOM; its version is
// read from the build info and named in metadata.tools.
const generatorPath = "github.com/CycloneDX/cyclonedx-gomod"

// BinaryProperty names, on each component, a release binary that links
// it (one property per binary, sorted).
const BinaryProperty = "computeplane-fn:binary"

// Generate returns the SBOM of the release binaries o.Binaries: for each,
// cyclonedx-gomod's bin generator reads the modules it links from its
// build info (what go version -m prints), with their go.sum hashes and the
// licenses detected in the module cache; the SBOM holds every module that
// any of them links, each naming the binaries that link it. A binary
// records no module graph, so the main component depends on every
// component directly.
func Generate(o Options) (*cdx.BOM, error) {
	if len(o.Binaries) == 0 {
		return nil, fmt.Errorf("failed to make the SBOM: no binary to describe")
	}
	logger := zerolog.Nop()
	if o.Log != nil {
		logger = zerolog.New(zerolog.ConsoleWriter{Out: o.Log, NoColor: true, PartsExclude: []string{zerolog.TimestampFieldName}}).Level(zerolog.WarnLevel)
	}
	var main *cdx.Component
	components := map[string]cdx.Component{}
	linkedBy := map[string][]string{}
	for _, path := range o.Binaries {
		// Licenses are detected below, from the module cache: the
		// generator's detector would ask the module proxy for every module,
		// the unpublished main module too.
		gen, err := bin.NewGenerator(path,
			bin.WithLogger(logger),
			bin.WithShortPURLS(true),
			bin.WithVersionOverride(o.Version),
		)
		if err != nil {
			return nil, fmt.Errorf("failed to make the SBOM of %s: %w", path, err)
		}
		bom, err := gen.Generate()
		if err != nil {
			return nil, fmt.Errorf("failed to make the SBOM of %s: %w", path, err)
		}
		if bom.Metadata == nil || bom.Metadata.Component == nil {
			return nil, fmt.Errorf("failed to make the SBOM of %s: no main component", path)
		}
		switch {
		case main == nil:
			main = bom.Metadata.Component
		case componentPath(*bom.Metadata.Component) != componentPath(*main):
			return nil, fmt.Errorf("failed to make the SBOM: %s is built from %s, %s from %s", o.Binaries[0], componentPath(*main), path, componentPath(*bom.Metadata.Component))
		}
		if bom.Components == nil {
			continue
		}
		for _, c := range *bom.Components {
			if _, seen := components[c.BOMRef]; !seen {
				components[c.BOMRef] = c
			}
			linkedBy[c.BOMRef] = append(linkedBy[c.BOMRef], filepath.Base(path))
		}
	}
	cache, err := moduleCache()
	if err != nil {
		return nil, err
	}
	detector := local.NewDetector(logger)
	for ref, c := range components {
		if err := detectLicenses(detector, cache, &c); err != nil {
			return nil, err
		}
		components[ref] = c
	}
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{Component: main}
	refs := slices.Sorted(maps.Keys(components))
	list := make([]cdx.Component, 0, len(refs))
	deps := []cdx.Dependency{{Ref: main.BOMRef, Dependencies: &refs}}
	for _, ref := range refs {
		c := components[ref]
		binaries := slices.Clone(linkedBy[ref])
		slices.Sort(binaries)
		binaries = slices.Compact(binaries)
		props := make([]cdx.Property, 0, len(binaries))
		for _, b := range binaries {
			props = append(props, cdx.Property{Name: BinaryProperty, Value: b})
		}
		c.Properties = &props
		list = append(list, c)
		deps = append(deps, cdx.Dependency{Ref: ref})
	}
	bom.Components = &list
	bom.Dependencies = &deps
	renameMain(bom, o.Version)
	if o.Licenses != "" {
		main.Licenses = &cdx.Licenses{{Expression: o.Licenses}}
	}
	if o.Source != "" {
		main.ExternalReferences = &[]cdx.ExternalReference{{Type: cdx.ERTypeVCS, URL: o.Source}}
	}
	if o.Commit != "" {
		main.Properties = &[]cdx.Property{{Name: "computeplane-fn:commit", Value: o.Commit}}
	}
	bom.SerialNumber = "urn:uuid:" + uuid.NewSHA1(uuid.NameSpaceURL, []byte(main.PackageURL+"#"+o.Commit)).String()
	bom.Metadata.Timestamp = o.Created.UTC().Format(time.RFC3339)
	bom.Metadata.Tools = &cdx.ToolsChoice{Components: &[]cdx.Component{tool()}}
	return bom, nil
}

// moduleCache is the module cache of the go command (go env GOMODCACHE),
// which holds every module the binaries were built from.
func moduleCache() (string, error) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("failed to find the module cache (go env GOMODCACHE): %w", err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("failed to find the module cache: go env GOMODCACHE is empty")
	}
	return dir, nil
}

// detectLicenses sets the licenses detected in the module of c, in the
// module cache, as the evidence of c, as cyclonedx-gomod's own detection
// does.
func detectLicenses(detector licensedetect.Detector, cache string, c *cdx.Component) error {
	path := componentPath(*c)
	escPath, err := module.EscapePath(path)
	if err != nil {
		return fmt.Errorf("failed to detect the license of %s: %w", path, err)
	}
	escVersion, err := module.EscapeVersion(c.Version)
	if err != nil {
		return fmt.Errorf("failed to detect the license of %s@%s: %w", path, c.Version, err)
	}
	dir := filepath.Join(cache, escPath+"@"+escVersion)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("failed to detect the license of %s@%s: it is not in the module cache (%s); make the SBOM where the binaries were built", path, c.Version, dir)
	}
	licenses, err := detector.Detect(path, c.Version, dir)
	if err != nil {
		return fmt.Errorf("failed to detect the license of %s@%s: %w", path, c.Version, err)
	}
	if len(licenses) == 0 {
		return nil
	}
	choices := make(cdx.Licenses, len(licenses))
	for i := range licenses {
		choices[i] = cdx.LicenseChoice{License: &licenses[i]}
	}
	c.Evidence = &cdx.Evidence{Licenses: &choices}
	return nil
}

// componentPath is the module path of a component: cyclonedx-gomod puts it
// whole in the name, or splits it into group and name.
func componentPath(c cdx.Component) string {
	if c.Group != "" {
		return c.Group + "/" + c.Name
	}
	return c.Name
}

// renameMain gives the main component the release's version, in its
// package URL and BOM reference too, and follows the reference through the
// dependency graph.
func renameMain(bom *cdx.BOM, version string) {
	main := bom.Metadata.Component
	path := main.Name
	if main.Group != "" {
		path = main.Group + "/" + main.Name
	}
	oldRef := main.BOMRef
	namespace, name := "", path
	if i := strings.LastIndex(path, "/"); i >= 0 {
		namespace, name = path[:i], path[i+1:]
	}
	purl := packageurl.NewPackageURL(packageurl.TypeGolang, namespace, name, version, nil, "")
	main.Version = version
	main.PackageURL = purl.ToString()
	purl.Qualifiers = packageurl.QualifiersFromMap(map[string]string{"type": "module"})
	main.BOMRef = purl.ToString()
	if bom.Dependencies == nil {
		return
	}
	for i := range *bom.Dependencies {
		d := &(*bom.Dependencies)[i]
		if d.Ref == oldRef {
			d.Ref = main.BOMRef
		}
		if d.Dependencies == nil {
			continue
		}
		for j, ref := range *d.Dependencies {
			if ref == oldRef {
				(*d.Dependencies)[j] = main.BOMRef
			}
		}
	}
}

// tool names cyclonedx-gomod, the library that made the SBOM, at the
// version this program was built with.
func tool() cdx.Component {
	version := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == generatorPath {
				version = d.Version
			}
		}
	}
	return cdx.Component{
		Type:       cdx.ComponentTypeLibrary,
		Name:       generatorPath,
		Version:    version,
		PackageURL: "pkg:golang/" + generatorPath + "@" + version,
	}
}

// Encode writes bom as indented CycloneDX JSON of the library's default
// specification version.
func Encode(w io.Writer, bom *cdx.BOM) error {
	enc := cdx.NewBOMEncoder(w, cdx.BOMFileFormatJSON)
	enc.SetPretty(true)
	if err := enc.Encode(bom); err != nil {
		return fmt.Errorf("failed to encode the SBOM: %w", err)
	}
	return nil
}

// WriteFile writes bom to path; a failed run leaves no half SBOM.
func WriteFile(path string, bom *cdx.BOM) error {
	return atomicfile.Write(path, func(w io.Writer) error { return Encode(w, bom) })
}
