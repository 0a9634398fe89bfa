package summary_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/summary"
)

// TestSummaryPostureFromBase: with a base (--base), the posture is stated
// from the folder at the base, and the files the change makes from there
// come after the folder's own state (up to date here, as in a pull request
// that commits its render); the JSON names the base and its files, and
// keeps files for the folder as it is.
func TestSummaryPostureFromBase(t *testing.T) {
	r := quickstart(t)
	r.Dir = "rendered"
	r.Check = true
	r.Base, r.BaseCommit = "origin/main", "0123456789abcdef0123456789abcdef01234567"
	r.BaseChanges = output.Changes{
		{Op: output.Added, Path: "tenant-acme/helmrelease-n8n-automations.yaml", New: []byte("kind: HelmRelease\n")},
		{Op: output.Changed, Path: "tenant-acme/helmrelease-computeplane.yaml", Old: []byte("a: 1\n"), New: []byte("a: 2\n")},
	}
	r.Review = postureChanges()
	md := write(t, r)
	golden(t, "posture-base", md)
	posture, folder, base := strings.Index(md, "### Isolation posture"), strings.Index(md, "### Fleet folder"), strings.Index(md, "### From the base `origin/main`")
	if posture < 0 || folder < posture || base < folder {
		t.Errorf("want the posture, the folder, then the change from the base:\n%s", md)
	}
	if !strings.Contains(md, "From `rendered` at the base `origin/main` (`0123456789ab`)") {
		t.Errorf("the posture section does not name the base:\n%s", md)
	}
	var buf bytes.Buffer
	if err := summary.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "posture-base.json", buf.String())
}
