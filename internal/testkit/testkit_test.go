package testkit_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestProductNeverLinksTestkit lists the dependencies of the binary and of
// every package outside internal/testkit and fails on one below it: what the
// product links stays apart from what judges it.
func TestProductNeverLinksTestkit(t *testing.T) {
	const module = "github.com/computeplane-dev/computeplane-fn"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", module+"/cmd/...", module+"/pkg/...", module+"/fn/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list listed %d packages, too few to be the product's: %v", len(deps), deps)
	}
	for _, p := range deps {
		if strings.HasPrefix(p, module+"/internal/testkit") {
			t.Errorf("the product links %s; only tests may use internal/testkit", p)
		}
	}
}
