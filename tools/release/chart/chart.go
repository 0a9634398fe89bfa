// Package chart ships the project's Helm chart, charts/computeplane-baseline,
// beside the image: the chart archive that `helm package` would make and an
// OCI image layout of it with Helm's media types, which `helm push`, `oras
// copy` or `crane push` publish and Flux's OCIRepository reads (its layer
// selector picks the chart content). Both are reproducible: the files in
// sorted order, dated by the commit, no gzip name or time.
package chart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	sigsyaml "sigs.k8s.io/yaml"
)

// Helm's media types of a chart in an OCI registry.
const (
	ConfigMediaType  types.MediaType = "application/vnd.cncf.helm.config.v1+json"
	ContentMediaType types.MediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// Metadata is what the release reads of Chart.yaml.
type Metadata struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Chart is a chart folder read for packaging.
type Chart struct {
	Metadata Metadata
	// config is Chart.yaml as JSON: the OCI config blob, as Helm writes it.
	config []byte
	files  []file
}

type file struct {
	name string // relative to the chart's folder, with '/'
	data []byte
}

// Read reads the chart in dir: Chart.yaml (name and version required) and
// every regular file below dir but .helmignore.
func Read(dir string) (*Chart, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, fmt.Errorf("failed to read the chart: %w", err)
	}
	c := &Chart{}
	if err := sigsyaml.Unmarshal(raw, &c.Metadata); err != nil {
		return nil, fmt.Errorf("%s/Chart.yaml: %w", dir, err)
	}
	if c.Metadata.Name == "" || c.Metadata.Version == "" {
		return nil, fmt.Errorf("%s/Chart.yaml: name and version are required", dir)
	}
	if c.config, err = sigsyaml.YAMLToJSON(raw); err != nil {
		return nil, fmt.Errorf("%s/Chart.yaml: %w", dir, err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() == ".helmignore" {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		c.files = append(c.files, file{name: filepath.ToSlash(rel), data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to read the chart: %w", err)
	}
	slices.SortFunc(c.files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	return c, nil
}

// ArchiveName is the file name of the chart archive: <name>-<version>.tgz.
func (c *Chart) ArchiveName() string { return c.Metadata.Name + "-" + c.Metadata.Version + ".tgz" }

// Archive is the chart as `helm package` lays it out: every file under a
// folder named like the chart, dated modTime.
func (c *Chart) Archive(modTime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	for _, f := range c.files {
		hdr := &tar.Header{
			Name: path.Join(c.Metadata.Name, f.name), Mode: 0o644, Size: int64(len(f.data)),
			ModTime: modTime, Typeflag: tar.TypeReg, Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Image is the chart as an OCI artifact: Chart.yaml (as JSON) as its
// config, the archive as its one layer, with Helm's media types.
func (c *Chart) Image(modTime time.Time) (v1.Image, error) {
	archive, err := c.Archive(modTime)
	if err != nil {
		return nil, err
	}
	layer := static.NewLayer(archive, ContentMediaType)
	layerDigest, err := layer.Digest()
	if err != nil {
		return nil, err
	}
	configDigest, configSize, err := v1.SHA256(bytes.NewReader(c.config))
	if err != nil {
		return nil, err
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		Config:        v1.Descriptor{MediaType: ConfigMediaType, Digest: configDigest, Size: configSize},
		Layers:        []v1.Descriptor{{MediaType: ContentMediaType, Digest: layerDigest, Size: int64(len(archive))}},
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return partial.CompressedToImage(&artifact{config: c.config, manifest: raw, layer: layer})
}

// artifact is an image whose config is not a container's: the core that
// go-containerregistry completes into a v1.Image.
type artifact struct {
	config, manifest []byte
	layer            v1.Layer
}

func (a *artifact) RawConfigFile() ([]byte, error)      { return a.config, nil }
func (a *artifact) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
func (a *artifact) RawManifest() ([]byte, error)        { return a.manifest, nil }

func (a *artifact) LayerByDigest(h v1.Hash) (partial.CompressedLayer, error) {
	if d, err := a.layer.Digest(); err == nil && d == h {
		return a.layer, nil
	}
	return nil, fmt.Errorf("no layer %s", h)
}

// LayoutDir is the folder of dist/ that holds the chart's OCI layout.
const LayoutDir = "chart-oci"

// Write writes the archive (ArchiveName) and the OCI layout LayoutDir,
// whose one manifest is named with the chart's version, into dir.
func Write(dir string, c *Chart, modTime time.Time) (v1.Hash, error) {
	archive, err := c.Archive(modTime)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, c.ArchiveName()), archive, 0o644); err != nil {
		return v1.Hash{}, err
	}
	img, err := c.Image(modTime)
	if err != nil {
		return v1.Hash{}, err
	}
	ldir := filepath.Join(dir, LayoutDir)
	if err := os.RemoveAll(ldir); err != nil {
		return v1.Hash{}, err
	}
	l, err := layout.Write(ldir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := l.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": c.Metadata.Version,
	})); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}
