package disttest

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/computeplane-dev/computeplane-fn/tools/release/image"
)

// env is what make dist-test passes.
type env struct {
	dist, project    string
	version, commit  string
	created          time.Time
	kustomize        string
	repo             string
	licenses, source string
}

func setup(t *testing.T) env {
	t.Helper()
	dist := os.Getenv("DIST_DIR")
	if dist == "" {
		t.Skip("DIST_DIR is not set: run make dist-test, which builds dist/ first")
	}
	e := env{
		dist:      dist,
		project:   os.Getenv("PROJECT_DIR"),
		version:   os.Getenv("RELEASE_VERSION"),
		commit:    os.Getenv("RELEASE_COMMIT"),
		kustomize: os.Getenv("KUSTOMIZE"),
		repo:      envOr("IMAGE_REPO", "ghcr.io/computeplane-dev/computeplane-fn"),
		licenses:  envOr("LICENSES", "Apache-2.0"),
		source:    envOr("IMAGE_SOURCE", "https://github.com/computeplane-dev/computeplane-fn"),
	}
	epoch, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64)
	if err != nil || e.project == "" || e.version == "" || e.commit == "" {
		t.Fatalf("make dist-test passes PROJECT_DIR, RELEASE_VERSION, RELEASE_COMMIT and SOURCE_DATE_EPOCH; got %q, %q, %q, %q",
			e.project, e.version, e.commit, os.Getenv("SOURCE_DATE_EPOCH"))
	}
	e.created = time.Unix(epoch, 0).UTC()
	return e
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// distPlatforms are the platforms of the release binaries, imagePlatforms
// those of the image.
var (
	distPlatforms = []v1.Platform{
		{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"},
		{OS: "darwin", Architecture: "amd64"}, {OS: "darwin", Architecture: "arm64"},
	}
	imagePlatforms = distPlatforms[:2]
	hostPlatform   = v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
)

func (e env) binary(p v1.Platform) string {
	return filepath.Join(e.dist, "computeplane-fn-"+p.OS+"-"+p.Architecture)
}

func (e env) tag(t *testing.T) name.Tag {
	t.Helper()
	tag, err := name.NewTag(e.repo + ":" + image.Tag(e.version))
	if err != nil {
		t.Fatal(err)
	}
	return tag
}
