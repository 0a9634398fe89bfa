package image_test

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/computeplane-dev/computeplane-fn/tools/release/image"
)

var release = image.Release{
	Repo:     "ghcr.io/computeplane-dev/computeplane-fn",
	Version:  "v0.1.0",
	Commit:   "1b8282dc91b8f9af8ed7b6f8e01e097c9503294f",
	Source:   "https://github.com/computeplane-dev/computeplane-fn",
	Licenses: "Apache-2.0",
	Created:  time.Date(2026, 11, 29, 20, 50, 18, 0, time.UTC),
}

// The builder does not look into the binary: any bytes stand for it here;
// the real binaries are checked in disttest.
var binary = []byte("\x7fELF not really a binary")

func TestBuildConfig(t *testing.T) {
	img, err := image.Build(binary, v1.Platform{OS: "linux", Architecture: "arm64"}, release)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	want := v1.Config{
		Entrypoint: []string{"/usr/local/bin/computeplane-fn"},
		User:       "65532:65532",
		WorkingDir: "/work",
		Labels: map[string]string{
			"org.opencontainers.image.title":         "computeplane-fn",
			"org.opencontainers.image.description":   image.Description,
			"org.opencontainers.image.source":        "https://github.com/computeplane-dev/computeplane-fn",
			"org.opencontainers.image.url":           "https://github.com/computeplane-dev/computeplane-fn",
			"org.opencontainers.image.documentation": "https://github.com/computeplane-dev/computeplane-fn/blob/1b8282dc91b8f9af8ed7b6f8e01e097c9503294f/docs/function.md",
			"org.opencontainers.image.version":       "v0.1.0",
			"org.opencontainers.image.revision":      "1b8282dc91b8f9af8ed7b6f8e01e097c9503294f",
			"org.opencontainers.image.licenses":      "Apache-2.0",
			"org.opencontainers.image.created":       "2026-11-29T20:50:18Z",
		},
	}
	if diff := cmp.Diff(want, cf.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if cf.OS != "linux" || cf.Architecture != "arm64" || !cf.Created.Time.Equal(release.Created) {
		t.Errorf("config file: os %q, architecture %q, created %v; want linux, arm64, %v", cf.OS, cf.Architecture, cf.Created, release.Created)
	}
	if len(cf.History) != 1 || !cf.History[0].Created.Time.Equal(release.Created) {
		t.Errorf("history %+v: want one entry dated %v", cf.History, release.Created)
	}
}

type file struct {
	Mode     int64
	Type     byte
	UID, GID int
	ModTime  time.Time
	Content  string
}

func TestBuildLayer(t *testing.T) {
	img, err := image.Build(binary, v1.Platform{OS: "linux", Architecture: "amd64"}, release)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %v, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := map[string]file{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = file{Mode: h.Mode, Type: h.Typeflag, UID: h.Uid, GID: h.Gid, ModTime: h.ModTime.UTC(), Content: string(data)}
	}
	at := release.Created
	dir := func() file { return file{Mode: 0o755, Type: tar.TypeDir, ModTime: at} }
	want := map[string]file{
		"etc/":                          dir(),
		"etc/group":                     {Mode: 0o644, Type: tar.TypeReg, ModTime: at, Content: "root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n"},
		"etc/passwd":                    {Mode: 0o644, Type: tar.TypeReg, ModTime: at, Content: "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"},
		"usr/":                          dir(),
		"usr/local/":                    dir(),
		"usr/local/bin/":                dir(),
		"usr/local/bin/computeplane-fn": {Mode: 0o755, Type: tar.TypeReg, ModTime: at, Content: string(binary)},
		"work/":                         dir(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer (-want +got):\n%s", diff)
	}
}

func TestBuildIsReproducible(t *testing.T) {
	digest := func() v1.Hash {
		img, err := image.Build(binary, v1.Platform{OS: "linux", Architecture: "amd64"}, release)
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if a, b := digest(), digest(); a != b {
		t.Errorf("two builds of one binary: digests %s and %s", a, b)
	}
}

func TestBuildRefuses(t *testing.T) {
	noCommit := release
	noCommit.Commit = ""
	if _, err := image.Build(binary, v1.Platform{OS: "linux", Architecture: "amd64"}, noCommit); err == nil {
		t.Error("a release without a commit was built")
	}
	if _, err := image.Build(binary, v1.Platform{OS: "linux"}, release); err == nil {
		t.Error("a platform without an architecture was built")
	}
}

func TestTag(t *testing.T) {
	for version, want := range map[string]string{
		"v0.1.0":                                   "v0.1.0",
		"v0.0.0-20261129205018-1b8282dc91b8":       "v0.0.0-20261129205018-1b8282dc91b8",
		"v0.0.0-20261129205018-1b8282dc91b8+dirty": "v0.0.0-20261129205018-1b8282dc91b8-dirty",
		"(devel)": "devel",
		"":        "devel",
	} {
		if got := image.Tag(version); got != want {
			t.Errorf("Tag(%q) = %q, want %q", version, got, want)
		}
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.WriteFile(bin, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	platforms := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
	var binaries []image.Binary
	for _, p := range platforms {
		binaries = append(binaries, image.Binary{Platform: p, Path: bin})
	}
	idx, err := image.Write(dir, release, binaries)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag("ghcr.io/computeplane-dev/computeplane-fn:v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 {
		t.Fatalf("index has %d manifests, want 2", len(im.Manifests))
	}
	for i, p := range platforms {
		img, err := tarball.ImageFromPath(filepath.Join(dir, image.TarballName(p)), &tag)
		if err != nil {
			t.Fatalf("%s: read the tarball back by its tag: %v", p, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != p.Architecture {
			t.Errorf("%s tarball: architecture %q", p, cf.Architecture)
		}
		if got := im.Manifests[i].Platform; got == nil || got.Architecture != p.Architecture || got.OS != p.OS {
			t.Errorf("index entry %d: platform %v, want %s", i, got, p)
		}
	}
	l, err := layout.ImageIndexFromPath(filepath.Join(dir, image.LayoutDir))
	if err != nil {
		t.Fatal(err)
	}
	top, err := l.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if len(top.Manifests) != 1 || top.Manifests[0].Digest != want || top.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "v0.1.0" {
		t.Errorf("layout index.json: %+v; want one entry, the index %s named v0.1.0", top.Manifests, want)
	}
}
