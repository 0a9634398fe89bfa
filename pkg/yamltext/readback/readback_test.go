package readback_test

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext/readback"
)

func TestAgree(t *testing.T) {
	for _, tt := range []struct {
		stream string
		ok     bool
	}{
		{"a: \"yes\"\nb: 1\n---\n# only a comment\n---\nc: [x, \"NO\"]\n", true},
		{"a: yes\n", false},                      // true to Flux, "yes" to go-yaml v3
		{"N: x\n", false},                        // key "false" to Flux
		{"m: {a: 1}\nb:\n  <<: {c: 1}\n", false}, // a merge key to both: refused reading
		{"a: '<<'\n", true},
		{"a: 1:20\n", true}, // a string to both (base-60 is for other YAML 1.1 readers)
	} {
		err := readback.Agree([]byte(tt.stream))
		if (err == nil) != tt.ok {
			t.Errorf("Agree(%q) = %v, want ok %v", tt.stream, err, tt.ok)
		}
	}
}

func TestMatches(t *testing.T) {
	n, err := yaml.Parse("region: \"NO\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := readback.Matches([]byte("region: \"NO\"\n---\nanything: yes\n"), []*yaml.Node{n.YNode(), nil}); err != nil {
		t.Errorf("quoted: %v", err)
	}
	err = readback.Matches([]byte("region: NO\n"), []*yaml.Node{n.YNode()})
	if err == nil || !strings.Contains(err.Error(), `applied: {"region":false}`) {
		t.Errorf("plain NO: %v", err)
	}
}
