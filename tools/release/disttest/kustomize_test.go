package disttest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/tools/release/image"
)

// TestKustomizeContainerGenerator checks that the inputs of
// examples/container are the quickstart's and runs it as its README says, `kustomize build --enable-alpha-plugins .`, with the real kustomize
// and the image of make image behind the docker stand-in of
// fakedocker_test.go, and compares the output with the quickstart's
// expected.yaml. It also checks what kustomize asked docker for: no
// network, the user nobody (which only the image's /etc/passwd resolves),
// read-only mounts below /work.
func TestKustomizeContainerGenerator(t *testing.T) {
	e := setup(t)
	if e.kustomize == "" {
		t.Fatal("KUSTOMIZE is not set: make dist-test passes bin/kustomize (make tools)")
	}
	if runtime.GOOS != "linux" {
		t.Skipf("runs the linux image's binary; this is %s", runtime.GOOS)
	}
	example := filepath.Join(e.project, "examples", "container")
	quickstart := filepath.Join(e.project, "examples", "quickstart")
	for _, f := range []string{"definitions/jupyterhub.yaml", "definitions/n8n.yaml", "definitions/postgres.yaml", "definitions/redis.yaml", "tenants/tenants.yaml", "apps/acme.yaml"} {
		a, errA := os.ReadFile(filepath.Join(example, f))
		b, errB := os.ReadFile(filepath.Join(quickstart, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("examples/container/%s is not the quickstart's (%v, %v)", f, errA, errB)
		}
	}
	dir := filepath.Join(t.TempDir(), "container")
	copySource(t, example, dir)
	// The example names the image of a release; this test has the image of
	// this tree.
	generator := filepath.Join(dir, "generator.yaml")
	data, err := os.ReadFile(generator)
	if err != nil {
		t.Fatal(err)
	}
	const exampleImage = "ghcr.io/computeplane-dev/computeplane-fn:v0.1.0"
	if !bytes.Contains(data, []byte("image: "+exampleImage)) {
		t.Fatalf("%s does not name %s", generator, exampleImage)
	}
	data = bytes.ReplaceAll(data, []byte(exampleImage), []byte(e.tag(t).String()))
	if err := os.WriteFile(generator, data, 0o644); err != nil {
		t.Fatal(err)
	}

	shims := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(shims, "docker")); err != nil {
		t.Fatal(err)
	}
	var tarballs []string
	for _, p := range imagePlatforms {
		tarballs = append(tarballs, filepath.Join(e.dist, image.TarballName(p)))
	}
	log := filepath.Join(t.TempDir(), "docker.log")

	cmd := exec.Command(e.kustomize, "build", "--enable-alpha-plugins", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"PATH="+shims+string(os.PathListSeparator)+os.Getenv("PATH"),
		"FAKE_DOCKER_TARBALLS="+strings.Join(tarballs, string(os.PathListSeparator)),
		"FAKE_DOCKER_LOG="+log,
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build: %v\n%s", err, stderr.String())
	}
	want, err := os.ReadFile(filepath.Join(quickstart, "expected.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("kustomize build with the image (-quickstart expected +got):\n%s", diff)
	}

	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	call := strings.TrimSpace(string(calls))
	if strings.Count(call, "\n") != 0 {
		t.Fatalf("kustomize ran docker more than once:\n%s", call)
	}
	for _, want := range []string{
		"run --rm -i ", "--network none", "--user nobody", "--security-opt=no-new-privileges",
		"source=" + filepath.Join(dir, "definitions") + ",target=/work/definitions,readonly",
		e.tag(t).String(),
	} {
		if !strings.Contains(call, want) {
			t.Errorf("docker %s\ndoes not hold %q", call, want)
		}
	}
}
