package disttest

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/computeplane-dev/computeplane-fn/tools/release/image"
)

// readTarball reads the docker-archive of a platform back by the tag it
// was written with, as docker load and podman load find it.
func readTarball(t *testing.T, e env, p v1.Platform) v1.Image {
	t.Helper()
	path := filepath.Join(e.dist, image.TarballName(p))
	tag := e.tag(t)
	img, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		t.Fatalf("read %s as %s: %v", path, tag, err)
	}
	return img
}

// files reads a layer into name → content (folders end in "/", content
// empty), failing on anything but regular files and folders.
func files(t *testing.T, l v1.Layer) (map[string][]byte, map[string]*tar.Header) {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	content, headers := map[string][]byte{}, map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return content, headers
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeDir {
			t.Errorf("layer entry %s has type %q: only files and folders expected", h.Name, h.Typeflag)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		content[h.Name], headers[h.Name] = data, h
	}
}

// TestImageTarballs reads every image tarball back with go-containerregistry
// and checks what a registry and a container engine would see.
func TestImageTarballs(t *testing.T) {
	e := setup(t)
	tag := e.tag(t)
	for _, p := range imagePlatforms {
		t.Run(p.OS+"-"+p.Architecture, func(t *testing.T) {
			path := filepath.Join(e.dist, image.TarballName(p))
			// docker load and podman load read manifest.json: one image, tagged.
			manifest, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(path) })
			if err != nil {
				t.Fatal(err)
			}
			if len(manifest) != 1 || !slices.Equal(manifest[0].RepoTags, []string{tag.String()}) || len(manifest[0].Layers) != 1 {
				t.Errorf("manifest.json %+v: want one image tagged %s with one layer", manifest, tag)
			}
			img := readTarball(t, e, p)
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.OS != p.OS || cf.Architecture != p.Architecture {
				t.Errorf("platform %s/%s, want %s", cf.OS, cf.Architecture, p)
			}
			if !cf.Created.Time.Equal(e.created) {
				t.Errorf("created %v, want the commit's time %v", cf.Created.Time, e.created)
			}
			if got := cf.Config.Entrypoint; !slices.Equal(got, []string{"/usr/local/bin/computeplane-fn"}) || len(cf.Config.Cmd) != 0 {
				t.Errorf("entrypoint %q, cmd %q: want the binary, no cmd", got, cf.Config.Cmd)
			}
			if cf.Config.User != "65532:65532" {
				t.Errorf("user %q, want 65532:65532 (non-root)", cf.Config.User)
			}
			labels := map[string]string{
				"org.opencontainers.image.source":   e.source,
				"org.opencontainers.image.version":  e.version,
				"org.opencontainers.image.revision": e.commit,
				"org.opencontainers.image.licenses": e.licenses,
				"org.opencontainers.image.created":  e.created.Format("2006-01-02T15:04:05Z07:00"),
			}
			for k, v := range labels {
				if cf.Config.Labels[k] != v {
					t.Errorf("label %s=%q, want %q", k, cf.Config.Labels[k], v)
				}
			}

			layers, err := img.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("%d layers (%v), want one", len(layers), err)
			}
			content, headers := files(t, layers[0])
			var names []string
			for n, h := range headers {
				names = append(names, n)
				if !h.ModTime.Equal(e.created) || h.Uid != 0 || h.Gid != 0 {
					t.Errorf("%s: mtime %v, owner %d:%d; want %v, 0:0", n, h.ModTime, h.Uid, h.Gid, e.created)
				}
			}
			slices.Sort(names)
			want := []string{"etc/", "etc/group", "etc/passwd", "usr/", "usr/local/", "usr/local/bin/", "usr/local/bin/computeplane-fn", "work/"}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("layer files (-want +got); no shell, nothing but the binary and the user database:\n%s", diff)
			}
			if !strings.Contains(string(content["etc/passwd"]), "nobody:x:65534:65534:") {
				t.Errorf("/etc/passwd has no nobody: kpt and kustomize run functions with --user nobody")
			}
			bin := content["usr/local/bin/computeplane-fn"]
			if headers["usr/local/bin/computeplane-fn"].Mode&0o111 == 0 {
				t.Errorf("the binary is not executable")
			}
			released, err := os.ReadFile(e.binary(p))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bin, released) {
				t.Errorf("the image's binary differs from dist/%s", filepath.Base(e.binary(p)))
			}
			checkStaticELF(t, "the image's binary", bin, p.Architecture)
		})
	}
}

// TestImageLayout reads the OCI layout: index.json names one multi-platform
// index by the tag, and each of its images is the one in the tarball of
// its platform (same config, same layer).
func TestImageLayout(t *testing.T) {
	e := setup(t)
	l, err := layout.ImageIndexFromPath(filepath.Join(e.dist, image.LayoutDir))
	if err != nil {
		t.Fatal(err)
	}
	top, err := l.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(top.Manifests) != 1 || top.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != image.Tag(e.version) {
		t.Fatalf("index.json %+v: want one index named %s", top.Manifests, image.Tag(e.version))
	}
	idx, err := l.ImageIndex(top.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.Annotations["org.opencontainers.image.revision"] != e.commit {
		t.Errorf("index annotations %v: want the revision", im.Annotations)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		fromTar := readTarball(t, e, *d.Platform)
		for what, get := range map[string]func(v1.Image) (v1.Hash, error){
			"config": func(i v1.Image) (v1.Hash, error) { return i.ConfigName() },
			"layer": func(i v1.Image) (v1.Hash, error) {
				ls, err := i.Layers()
				if err != nil || len(ls) != 1 {
					return v1.Hash{}, errors.New("want one layer")
				}
				return ls[0].Digest()
			},
		} {
			a, errA := get(img)
			b, errB := get(fromTar)
			if errA != nil || errB != nil || a != b {
				t.Errorf("%s: %s %s in the layout, %s in the tarball (%v, %v)", d.Platform, what, a, b, errA, errB)
			}
		}
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("index platforms (-want +got):\n%s", diff)
	}
}

// extractBinary writes the binary of the image of p, taken from its layer,
// to a file of its own.
func extractBinary(t *testing.T, e env, p v1.Platform) string {
	t.Helper()
	layers, err := readTarball(t, e, p).Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v)", len(layers), err)
	}
	content, _ := files(t, layers[0])
	path := filepath.Join(t.TempDir(), "computeplane-fn")
	if err := os.WriteFile(path, content["usr/local/bin/computeplane-fn"], 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestImageBinaryRendersQuickstart runs the binary taken out of the
// linux/amd64 image on examples/quickstart as make demo runs it and compares its output byte for byte with make
// demo's, which is the example's expected output and then its summary.
func TestImageBinaryRendersQuickstart(t *testing.T) {
	e := setup(t)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("runs the linux/amd64 image's binary; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	bin := extractBinary(t, e, v1.Platform{OS: "linux", Architecture: "amd64"})
	quickstart := filepath.Join(e.project, "examples", "quickstart")

	demo := exec.Command("make", "-s", "--no-print-directory", "demo")
	demo.Dir = e.project
	want, err := demo.Output()
	if err != nil {
		t.Fatalf("make demo: %v", err)
	}
	expected, err := os.ReadFile(filepath.Join(quickstart, "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// make demo prints the stream, then the summary after a blank line.
	summary, ok := bytes.CutPrefix(want, expected)
	if !ok {
		t.Fatalf("make demo does not start with examples/quickstart/expected.yaml: the tree is out of date (make golden?)")
	}
	if !bytes.HasPrefix(summary, []byte("\n## computeplane-fn\n")) || !bytes.Contains(summary, []byte("| `tenant-acme` (acme) | yes |")) {
		t.Fatalf("make demo's summary after the stream is not the tenant table:\n%s", summary)
	}

	cmd := exec.Command(bin, "config.yaml", "--summary", "-")
	cmd.Dir = quickstart
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("the image's binary: %v\n%s", err, stderr.String())
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("the image's binary and make demo differ (-make demo +image):\n%s", diff)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(out), e.version) || !strings.Contains(string(out), e.commit) {
		t.Errorf("the image's binary --version: %q (%v); want %s and %s", out, err, e.version, e.commit)
	}
}
