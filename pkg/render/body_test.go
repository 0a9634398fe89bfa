package render_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

// TestBodiesWriteTheirNode: whatever form an object's body takes (a run
// holds cluster objects as text and puts releases off until they are
// written), it writes the bytes of its own node tree, and building the tree
// twice gives the same tree.
func TestBodiesWriteTheirNode(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "direct-fleet")
	inputs, err := filepath.Glob(filepath.Join(dir, "input*.yaml"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs in %s: %v", dir, err)
	}
	{
		run, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, "config.yaml"), Inputs: inputs})
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		forms := map[string]int{}
		for _, o := range run.Objects {
			forms[fmt.Sprintf("%T", o.Body)]++
			got, err := o.AppendYAML(nil)
			if err != nil {
				t.Fatal(err)
			}
			n, err := o.Node()
			if err != nil {
				t.Fatal(err)
			}
			want, err := yamltext.AppendDocument(nil, n)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s %s/%s: body writes other bytes than its node (-node +body):\n%s", o.Kind, o.Namespace, o.Name, diff)
			}
			again, err := o.Node()
			if err != nil {
				t.Fatal(err)
			}
			againText, err := yamltext.AppendDocument(nil, again)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(againText)); diff != "" {
				t.Errorf("%s %s/%s: a second Node differs:\n%s", o.Kind, o.Namespace, o.Name, diff)
			}
		}
		want := []string{"render.nodeBody", "render.releaseBody", "render.textBody"}
		if diff := cmp.Diff(want, slices.Sorted(maps.Keys(forms))); diff != "" {
			t.Errorf("the run does not hold every form of body it should (-want +got):\n%s", diff)
		}
	}
}
