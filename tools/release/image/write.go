package image

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/computeplane-dev/computeplane-fn/tools/release/internal/atomicfile"
)

// LayoutDir is the folder of dist/ that holds the OCI image layout.
const LayoutDir = "oci"

// TarballName is the file name of the docker-archive tarball of a platform.
func TarballName(p v1.Platform) string {
	return "computeplane-fn-image-" + p.OS + "-" + p.Architecture + ".tar"
}

var notInTag = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Tag turns a module version into an image tag: a tag may only hold
// letters, digits, '_', '.' and '-', may not start with '.' or '-', and has
// at most 128 characters. A release tag v0.1.0 stays v0.1.0; the "+dirty"
// of a build from a modified tree becomes "-dirty"; "(devel)" becomes
// "devel".
func Tag(version string) string {
	t := strings.Trim(notInTag.ReplaceAllString(version, "-"), ".-")
	if len(t) > 128 {
		t = t[:128]
	}
	if t == "" {
		return "devel"
	}
	return t
}

// Ref is the reference the image is published under: Repo:Tag(Version).
func (r Release) Ref() (name.Tag, error) {
	ref, err := name.NewTag(r.Repo + ":" + Tag(r.Version))
	if err != nil {
		return name.Tag{}, fmt.Errorf("failed to name the image: %w", err)
	}
	return ref, nil
}

// Binary is the static binary built for one platform.
type Binary struct {
	Platform v1.Platform
	Path     string
}

// Write builds the image of every binary and writes, into dir, one
// docker-archive tarball per platform (TarballName), each tagged Ref(), and
// the OCI image layout LayoutDir, whose index.json holds one entry: the
// multi-platform index of all of them, named with the tag. It returns the
// index.
func Write(dir string, r Release, binaries []Binary) (v1.ImageIndex, error) {
	ref, err := r.Ref()
	if err != nil {
		return nil, err
	}
	if len(binaries) == 0 {
		return nil, fmt.Errorf("failed to build the image: no binaries")
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, b := range binaries {
		data, err := os.ReadFile(b.Path)
		if err != nil {
			return nil, fmt.Errorf("failed to read the binary for %s: %w", b.Platform.String(), err)
		}
		img, err := Build(data, b.Platform, r)
		if err != nil {
			return nil, err
		}
		if err := writeTarball(filepath.Join(dir, TarballName(b.Platform)), ref, img); err != nil {
			return nil, err
		}
		p := b.Platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &p},
		})
	}
	idx = mutate.Annotations(idx, r.Labels()).(v1.ImageIndex)
	if err := writeLayout(filepath.Join(dir, LayoutDir), ref, idx); err != nil {
		return nil, err
	}
	return idx, nil
}

// writeTarball writes a docker-archive (docker save's format); a failed run
// leaves no half tarball.
func writeTarball(path string, ref name.Tag, img v1.Image) error {
	return atomicfile.Write(path, func(w io.Writer) error { return tarball.Write(ref, img, w) })
}

// writeLayout replaces dir with an OCI image layout holding idx, named by
// the annotation org.opencontainers.image.ref.name (the tag), as skopeo's
// oci:DIR:TAG and crane push DIR expect.
func writeLayout(dir string, ref name.Tag, idx v1.ImageIndex) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("failed to write %s: %w", dir, err)
	}
	l, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("failed to write %s: %w", dir, err)
	}
	if err := l.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref.TagStr(),
	})); err != nil {
		return fmt.Errorf("failed to write %s: %w", dir, err)
	}
	return nil
}
