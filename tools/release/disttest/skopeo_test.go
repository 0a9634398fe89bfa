package disttest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/tools/release/image"
)

// skopeo is a second reader of the image, independent of go-containerregistry
// (it is containers/image's, the library of podman): it reads the
// docker-archive tarballs and the OCI layout without a container engine.
// .ci/run installs it; elsewhere the test skips without it.
func skopeo(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("skopeo")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("skopeo not found; .ci/run installs it (apt-get install skopeo)")
		}
		t.Skip("skopeo not found (apt-get install skopeo): the image is read with go-containerregistry only")
	}
	return path
}

func skopeoJSON(t *testing.T, bin string, v any, args ...string) {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("skopeo %v: %v\n%s", args, err, msg)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("skopeo %v: %v\n%s", args, err, out)
	}
}

// TestSkopeoReadsTheImage inspects every tarball and the layout with skopeo
// and copies the multi-platform index out of the layout (skopeo copy --all,
// as a release pipeline publishes it), into a folder instead of a registry.
func TestSkopeoReadsTheImage(t *testing.T) {
	e := setup(t)
	bin := skopeo(t)
	for _, p := range imagePlatforms {
		ref := "docker-archive:" + filepath.Join(e.dist, image.TarballName(p))
		var inspect struct {
			Architecture, Os string
			Labels           map[string]string
			Layers           []string
		}
		skopeoJSON(t, bin, &inspect, "inspect", ref)
		if inspect.Os != p.OS || inspect.Architecture != p.Architecture || len(inspect.Layers) != 1 {
			t.Errorf("%s: skopeo sees %s/%s with %d layers", ref, inspect.Os, inspect.Architecture, len(inspect.Layers))
		}
		if inspect.Labels["org.opencontainers.image.revision"] != e.commit || inspect.Labels["org.opencontainers.image.version"] != e.version {
			t.Errorf("%s: labels %v", ref, inspect.Labels)
		}
		var config struct {
			Config struct {
				User       string
				Entrypoint []string
				WorkingDir string
			} `json:"config"`
		}
		skopeoJSON(t, bin, &config, "inspect", "--config", ref)
		if config.Config.User != "65532:65532" || !slices.Equal(config.Config.Entrypoint, []string{"/usr/local/bin/computeplane-fn"}) || config.Config.WorkingDir != "/work" {
			t.Errorf("%s: skopeo sees config %+v", ref, config.Config)
		}
	}

	layout := "oci:" + filepath.Join(e.dist, image.LayoutDir) + ":" + image.Tag(e.version)
	var index struct {
		Manifests []struct {
			Platform struct{ OS, Architecture string }
		}
	}
	skopeoJSON(t, bin, &index, "inspect", "--raw", layout)
	var platforms []string
	for _, m := range index.Manifests {
		platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("%s: skopeo sees an index of %v", layout, platforms)
	}
	out := filepath.Join(t.TempDir(), "copy")
	if b, err := exec.Command(bin, "copy", "--all", "--quiet", layout, "dir:"+out).CombinedOutput(); err != nil {
		t.Errorf("skopeo copy --all %s: %v\n%s", layout, err, b)
	}
}
