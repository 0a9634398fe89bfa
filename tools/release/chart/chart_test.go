package chart_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/computeplane-dev/computeplane-fn/tools/release/chart"
)

const chartDir = "../../../charts/computeplane-baseline"

// TestWrite: the project's chart as an archive laid out as helm package
// lays it out, and as an OCI artifact with Helm's media types read back
// from the layout; twice the same bytes.
func TestWrite(t *testing.T) {
	c, err := chart.Read(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Metadata.Name != "computeplane-baseline" || c.Metadata.Version == "" {
		t.Fatalf("metadata %+v", c.Metadata)
	}
	when := time.Unix(1700000000, 0).UTC()
	dir := t.TempDir()
	digest, err := chart.Write(dir, c, when)
	if err != nil {
		t.Fatal(err)
	}
	again, err := chart.Write(t.TempDir(), c, when)
	if err != nil || again != digest {
		t.Errorf("second write: digest %v (%v), want %v", again, err, digest)
	}
	archive, err := os.ReadFile(filepath.Join(dir, c.ArchiveName()))
	if err != nil {
		t.Fatal(err)
	}
	names := entries(t, archive)
	for _, want := range []string{"computeplane-baseline/Chart.yaml", "computeplane-baseline/values.yaml", "computeplane-baseline/values.schema.json", "computeplane-baseline/templates/objects.yaml"} {
		if !slices.Contains(names, want) {
			t.Errorf("archive lacks %s: %v", want, names)
		}
	}
	if slices.Contains(names, "computeplane-baseline/.helmignore") {
		t.Error("archive holds .helmignore")
	}

	l, err := layout.FromPath(filepath.Join(dir, chart.LayoutDir))
	if err != nil {
		t.Fatal(err)
	}
	img, err := l.Image(digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Config.MediaType != chart.ConfigMediaType || len(m.Layers) != 1 || m.Layers[0].MediaType != chart.ContentMediaType {
		t.Fatalf("manifest %+v", m)
	}
	var cfg map[string]any
	raw, err := img.RawConfigFile()
	if err != nil || json.Unmarshal(raw, &cfg) != nil || cfg["name"] != "computeplane-baseline" || cfg["version"] != c.Metadata.Version {
		t.Errorf("config %s (%v)", raw, err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	blob, _ := io.ReadAll(rc)
	if !bytes.Equal(blob, archive) {
		t.Error("the layer is not the archive")
	}
}

func entries(t *testing.T, archive []byte) []string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var out []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.Name)
	}
}
