package yamltext_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/yaml11"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

// TestQuotesWhatYAML11Misreads: in both of the writer's paths (nodes built
// with yamlnode.String, and app values copied through the normalizing
// emitter) a string is written plain exactly when yaml11.Misread says a
// YAML 1.1 reader reads it as that string: a plain = (YAML 1.1's value
// key, on which PyYAML fails), the booleans, << and base-60 numbers are
// double-quoted, as values and as keys; their neighbours are not.
func TestQuotesWhatYAML11Misreads(t *testing.T) {
	for s, misread := range map[string]bool{
		"=": true, "yes": true, "No": true, "on": true, "y": true, "<<": true, "1:20": true,
		"==": false, "=x": false, "a=b": false, "yes please": false, "x": false, "1:60": false,
	} {
		if yaml11.Misread(s) != misread {
			t.Errorf("yaml11.Misread(%q) = %v, want %v", s, !misread, misread)
		}
		for _, key := range []bool{false, true} {
			built := yamlnode.Map("v", yamlnode.String(s))
			if key {
				built = yamlnode.Map(s, yamlnode.String("v"))
			}
			out, err := yamltext.AppendDocument(nil, built)
			if err != nil {
				t.Fatal(err)
			}
			texts := map[string]string{"built": string(out)}
			// Values are copied from inputs read as plain scalars (a <<
			// key is refused on input, whatever its quoting).
			if !(s == "<<" && key) {
				var read yaml.Node
				src := "v: " + s + "\n"
				if key {
					src = s + ": v\n"
				}
				if err := yaml.Unmarshal([]byte(src), &read); err != nil {
					t.Fatal(err)
				}
				copied, ok := yamltext.EmitNormalized(nil, read.Content[0], 1000, 100)
				if !ok {
					// Handed back (a << value): what the writer does then.
					c, err := yamlnode.NormalizedCopy(read.Content[0], 1000)
					if err != nil {
						t.Fatal(err)
					}
					if copied, err = yamltext.AppendDocument(nil, c); err != nil {
						t.Fatal(err)
					}
				}
				texts["copied"] = string(copied)
			}
			for what, text := range texts {
				quoted := strings.Contains(text, `"`+s+`"`)
				if quoted != misread {
					t.Errorf("%s %q (key %v) written as %q: quoted = %v, yaml11.Misread = %v", what, s, key, text, quoted, misread)
				}
			}
		}
	}
}
