package fn_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/computeplane-dev/computeplane-fn/fn"
)

// TestExecuteMatchesFramework runs every fixture through fn.Execute, the
// guarded reader the binary uses, and through kyaml's framework.Execute:
// for well-formed input both write the same bytes and agree on refusing.
func TestExecuteMatchesFramework(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(filepath.Base(f.dir), func(t *testing.T) {
			rl := f.resourceList(t, false)
			var ours, theirs bytes.Buffer
			ourErr := fn.Execute(fn.Processor{Dir: f.dir}, bytes.NewReader(rl), &ours)
			theirErr := framework.Execute(fn.Processor{Dir: f.dir}, &kio.ByteReadWriter{Reader: bytes.NewReader(rl), Writer: &theirs, KeepReaderAnnotations: true})
			if (ourErr == nil) != (theirErr == nil) {
				t.Fatalf("fn.Execute: %v; framework.Execute: %v", ourErr, theirErr)
			}
			if diff := cmp.Diff(theirs.String(), ours.String()); diff != "" {
				t.Errorf("output differs (-framework +fn.Execute):\n%s", diff)
			}
		})
	}
}
