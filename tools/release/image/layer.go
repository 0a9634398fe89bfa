package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths and identities inside the image.
const (
	// Entrypoint is where the binary lives, the image's entrypoint.
	Entrypoint = "/usr/local/bin/computeplane-fn"
	// WorkingDir is the working directory of the function in the image:
	// spec.inputs are relative to it, so a kustomize generator mounts its
	// input folders below it.
	WorkingDir = "/work"
	// User is the image's default user: distroless's nonroot. kustomize and
	// kpt run functions with --user nobody, which the image's /etc/passwd
	// resolves to 65534.
	User = "65532:65532"
)

// passwd and group name root (owner of the files), nobody (what kpt and
// kustomize run functions as) and nonroot (the image's default user). None
// has a shell: the image has none.
const (
	passwd = "root:x:0:0:root:/root:/sbin/nologin\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
	group = "root:x:0:\n" +
		"nobody:x:65534:\n" +
		"nonroot:x:65532:\n"
)

// entry is one file or folder of the layer.
type entry struct {
	name string // without a leading slash, as in images built by docker
	mode int64
	data []byte // nil for a folder
}

// rootfs is the layer's content in tar order: each folder before what it
// holds.
func rootfs(binary []byte) []entry {
	return []entry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "usr/", mode: 0o755},
		{name: "usr/local/", mode: 0o755},
		{name: "usr/local/bin/", mode: 0o755},
		{name: Entrypoint[1:], mode: 0o755, data: binary},
		{name: WorkingDir[1:] + "/", mode: 0o755},
	}
}

// layerTar writes the layer as an uncompressed tar: every entry owned by
// root, dated modTime, with no user or group names, so that its bytes
// depend on the binary and the date alone.
func layerTar(binary []byte, modTime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range rootfs(binary) {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			ModTime: modTime,
			Format:  tar.FormatPAX,
		}
		if e.data == nil {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("failed to write the layer: %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("failed to write the layer: %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("failed to write the layer: %w", err)
	}
	return buf.Bytes(), nil
}

// layer is the image's only layer, gzip-compressed as an OCI layer.
func layer(binary []byte, modTime time.Time) (v1.Layer, error) {
	data, err := layerTar(binary, modTime)
	if err != nil {
		return nil, err
	}
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
