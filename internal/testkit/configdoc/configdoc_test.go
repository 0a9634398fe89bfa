package configdoc_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/configdoc"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

var update = flag.Bool("update", false, "rewrite the generated section of docs/function.md")

const doc = "../../../docs/function.md"

// TestFunctionDoc: the config reference in docs/function.md is the one the
// schema gives, and names every field of the schema.
func TestFunctionDoc(t *testing.T) {
	root, err := api.ParseConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	want, err := configdoc.Reference(root)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	before, rest, ok := strings.Cut(text, configdoc.Begin+"\n")
	if !ok {
		t.Fatalf("%s has no line %s", doc, configdoc.Begin)
	}
	got, after, ok := strings.Cut(rest, configdoc.End)
	if !ok {
		t.Fatalf("%s has no line %s after the beginning", doc, configdoc.End)
	}
	if *update {
		if err := os.WriteFile(doc, []byte(before+configdoc.Begin+"\n"+want+configdoc.End+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s has drifted from the config schema; run make docs (-want +got):\n%s", doc, diff)
	}
	// Every field of the schema has its row.
	var walk func(s *api.SchemaNode, path string)
	walk = func(s *api.SchemaNode, path string) {
		for name, p := range s.Properties {
			field := path + "." + name
			if !strings.Contains(got, "| `"+field+"` |") {
				t.Errorf("%s: no row in %s", field, doc)
			}
			walk(p, field)
			if p.Items != nil {
				walk(p.Items, field+"[]")
			}
		}
	}
	walk(root.Lookup("spec"), "spec")
}
