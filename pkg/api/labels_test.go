package api_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// TestLabelChecksMatchAPIMachinery compares the fast label checks with
// apimachinery's on tricky and on many random strings.
func TestLabelChecksMatchAPIMachinery(t *testing.T) {
	cases := []string{"", "a", "-a", "a-", "a.b", "a_b", "A", "1", "a/b", "/a", "a/", "a//b", "example.com/name", "Example.com/name",
		"a.b.c/d-e_f.g", "a..b/c", "a-/b", "-a/b", "x/" + strings.Repeat("a", 63), "x/" + strings.Repeat("a", 64), strings.Repeat("a", 63), strings.Repeat("a", 64),
		strings.Repeat("a", 253) + "/b", strings.Repeat("a", 254) + "/b", "a/b/c", "é", "a\x00b", "a b"}
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aZ09-_./"
	for i := 0; i < 20000; i++ {
		b := make([]byte, r.IntN(12))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := api.ValidLabelKey(s), len(content.IsLabelKey(s)) == 0; got != want {
			t.Errorf("ValidLabelKey(%q) = %v, apimachinery says %v", s, got, want)
		}
		if got, want := api.ValidLabelValue(s), len(content.IsLabelValue(s)) == 0; got != want {
			t.Errorf("ValidLabelValue(%q) = %v, apimachinery says %v", s, got, want)
		}
	}
}

// BenchmarkLabelChecks shows why ValidLabelKey and ValidLabelValue are hand
// copies: every label of every app, tenant and output object is checked
// (hundreds of thousands in a large fleet), and apimachinery's checks run a
// regular expression and allocate their messages.
func BenchmarkLabelChecks(b *testing.B) {
	keys := []string{"app.kubernetes.io/name", "apps.cozystack.io/application.kind", "tier", "example.com/Some_Name.v2"}
	values := []string{"postgres", "computeplane-fn", "", "Some_Value.v2-with-length"}
	b.Run("hand", func(b *testing.B) {
		for b.Loop() {
			for i := range keys {
				_ = api.ValidLabelKey(keys[i])
				_ = api.ValidLabelValue(values[i])
			}
		}
	})
	b.Run("apimachinery", func(b *testing.B) {
		for b.Loop() {
			for i := range keys {
				_ = len(validation.IsQualifiedName(keys[i])) == 0
				_ = len(validation.IsValidLabelValue(values[i])) == 0
			}
		}
	})
}
