package fn_test

import (
	"bytes"
	"path/filepath"
	"strings"
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

// TestExecuteReadsTheOneDocument: comments and empty documents around the
// ResourceList change nothing (kyaml's reader, left to itself, would read
// such a stream as items rather than unwrap the list), the results of an
// earlier run are not written back as this run's, and a line kyaml cannot
// split the stream at is a refusal with its message.
func TestExecuteReadsTheOneDocument(t *testing.T) {
	const rl = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n    namespace: tenant-root\n  data: {x: y} # kept\nfunctionConfig:\n  apiVersion: fn.computeplane.dev/v1alpha1\n  kind: ComputePlaneGenerator\n  metadata:\n    name: f\n"
	var want bytes.Buffer
	if err := fn.Execute(fn.Processor{}, strings.NewReader(rl), &want); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(want.String(), "data: {x: y} # kept") {
		t.Fatalf("the item does not pass through as written:\n%s", want.String())
	}
	for _, in := range []string{
		"# a comment\n---\n" + rl,
		"\n---\n" + rl + "---\n",
		"---\n" + rl + "...\n--- # end\n# more\n",
		rl + "results:\n- message: of an earlier run\n  severity: info\n",
	} {
		var got bytes.Buffer
		if err := fn.Execute(fn.Processor{}, strings.NewReader(in), &got); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Errorf("%q: the output differs (-alone +with):\n%s", in, diff)
		}
	}

	var out bytes.Buffer
	err := fn.Execute(fn.Processor{}, strings.NewReader(rl+"---x: 1\n"), &out)
	problems, ok := fn.AsProblems(err)
	if !ok || len(problems) != 1 || !strings.Contains(problems[0].Error(), "stdin: kyaml failed on the ResourceList") || !strings.Contains(problems[0].Error(), "invalid document separator: ---x: 1") {
		t.Fatalf("want one refusal with kyaml's message, got %v", err)
	}
	if strings.Contains(out.String(), "name: a") || !strings.Contains(out.String(), "severity: error") {
		t.Errorf("a refusal wrote items, or no result:\n%s", out.String())
	}
}
