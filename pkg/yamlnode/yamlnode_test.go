package yamlnode_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

func parse(t *testing.T, s string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func TestToValueTypes(t *testing.T) {
	got, err := yamlnode.ToValue(parse(t, "a: 1\nb: 1.5\nc: \"1\"\nd: true\ne: null\nf: [x, {g: h}]\ni: 0x10\n"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": int64(1), "b": 1.5, "c": "1", "d": true, "e": nil, "f": []any{"x", map[string]any{"g": "h"}}, "i": int64(16)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestAliasBombIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	n := parse(t, b.String())
	if _, err := yamlnode.ToValue(n, 100_000); !errors.Is(err, yamlnode.ErrBudget) {
		t.Errorf("ToValue: got %v, want the budget error", err)
	}
	if _, err := yamlnode.NormalizedCopy(n, 100_000); !errors.Is(err, yamlnode.ErrBudget) {
		t.Errorf("NormalizedCopy: got %v, want the budget error", err)
	}
}

func TestDeepNestingIsRefused(t *testing.T) {
	doc := strings.Repeat("[", yamlnode.MaxDepth+5) + strings.Repeat("]", yamlnode.MaxDepth+5)
	_, err := yamlnode.ToValue(parse(t, doc), yamlnode.DefaultBudget)
	if !errors.Is(err, yamlnode.ErrDepth) {
		t.Errorf("got %v, want the depth error", err)
	}
}

func TestCopySortsKeysExpandsAliasesAndRefusesDuplicates(t *testing.T) {
	n, err := yamlnode.NormalizedCopy(parse(t, "# comment\nb: &x {d: 1, c: 2}\na: *x\n"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("a:\n  c: 2\n  d: 1\nb:\n  c: 2\n  d: 1\n", string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	dup := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{yamlnode.String("k"), yamlnode.Int(1), yamlnode.String("k"), yamlnode.Int(2)}}
	var pe *yamlnode.PathError
	if _, err := yamlnode.NormalizedCopy(dup, 1000); !errors.As(err, &pe) || pe.Path != "k" {
		t.Errorf("duplicate key: got %v, want a path error at k", err)
	}
}

func TestFromJSONSortsKeys(t *testing.T) {
	n, err := yamlnode.FromJSON([]byte(`{"spec":{"z":1,"a":[true,"5m"]},"apiVersion":"v1","kind":"X"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := yaml.Marshal(n)
	if diff := cmp.Diff("apiVersion: v1\nkind: X\nspec:\n  a:\n  - true\n  - 5m\n  z: 1\n", string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := yamlnode.FromJSON([]byte(`{"a":`)); err == nil {
		t.Error("truncated JSON accepted")
	}
}

func TestStringsThatLookLikeOtherTypesStayStrings(t *testing.T) {
	out, _ := yaml.Marshal(yamlnode.Map("a", yamlnode.String("true"), "b", yamlnode.String("5"), "c", yamlnode.String("null")))
	if diff := cmp.Diff("a: \"true\"\nb: \"5\"\nc: \"null\"\n", string(out)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
