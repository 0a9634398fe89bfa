package sbom

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/CycloneDX/cyclonedx-gomod/pkg/generate/mod"
	"github.com/CycloneDX/cyclonedx-gomod/pkg/licensedetect/local"
	"github.com/google/uuid"
	"github.com/package-url/packageurl-go"
	"github.com/rs/zerolog"

	"github.com/computeplane-dev/computeplane-fn/tools/release/internal/atomicfile"
)

// Options say what to describe and how the release is named.
type Options struct {
	// ModuleDir is the folder of the main module (holding go.mod).
	ModuleDir string
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

// Generate returns the SBOM of the module graph of the main module in
// o.ModuleDir.
func Generate(o Options) (*cdx.BOM, error) {
	logger := zerolog.Nop()
	if o.Log != nil {
		logger = zerolog.New(zerolog.ConsoleWriter{Out: o.Log, NoColor: true, PartsExclude: []string{zerolog.TimestampFieldName}}).Level(zerolog.WarnLevel)
	}
	gen, err := mod.NewGenerator(o.ModuleDir,
		mod.WithLogger(logger),
		mod.WithComponentType(cdx.ComponentTypeApplication),
		mod.WithLicenseDetector(local.NewDetector(logger)),
		mod.WithShortPURLS(true),
	)
	if err != nil {
		return nil, fmt.Errorf("failed to make the SBOM: %w", err)
	}
	bom, err := gen.Generate()
	if err != nil {
		return nil, fmt.Errorf("failed to make the SBOM of %s: %w", o.ModuleDir, err)
	}
	if bom.Metadata == nil || bom.Metadata.Component == nil {
		return nil, fmt.Errorf("failed to make the SBOM of %s: no main component", o.ModuleDir)
	}
	main := bom.Metadata.Component
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
