package examples_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
)

// TestKptEvalOnKustomizeStyleExamples runs docs/running.md's
// `kpt fn eval . --exec computeplane-fn --fn-config <config>` with the real
// kpt on copies of the kustomize-style examples, whose config reads its
// inputs through spec.inputs while kpt hands the same files over as items:
// each input is read once, the inputs, the config and kustomization.yaml
// (also one without apiVersion and kind, as kustomize allows) come back as
// they were, every generated object is written at its path as the
// standalone CLI renders it, and a second run changes nothing. Run from
// outside the package, it is refused, saying how to run it, and the
// package is left as it was.
func TestKptEvalOnKustomizeStyleExamples(t *testing.T) {
	for _, tc := range []struct{ example, config string }{
		{"kustomize-generator", "generator.yaml"},
		{"quickstart", "config.yaml"},
	} {
		t.Run(tc.example, func(t *testing.T) {
			stream := run(t, tc.example, nil, binary, tc.config)
			if stream.code != 0 {
				t.Fatalf("computeplane-fn %s: exit %d\n%s", tc.config, stream.code, stream.stderr)
			}
			for _, bare := range []bool{false, true} {
				work := t.TempDir()
				pkg := filepath.Join(work, "fleet")
				testfs.CopyTree(t, tc.example, pkg)
				if bare {
					// kustomize needs neither apiVersion nor kind.
					writeFile(t, filepath.Join(pkg, "kustomization.yaml"), "generators:\n- "+tc.config+"\n")
				}
				before := readTree(t, pkg)

				// From outside the package: refused, nothing changed.
				r := runKpt(t, work, "fn", "eval", "fleet", "--exec", "computeplane-fn", "--fn-config", filepath.Join("fleet", tc.config))
				if r.code == 0 || !strings.Contains(r.stderr, "run kpt fn eval from the package's folder") {
					t.Errorf("kpt fn eval fleet from outside: exit %d, want a refusal saying to run it from the package\n%s%s", r.code, r.stdout, r.stderr)
				}
				if got := readTree(t, pkg); len(got) != len(before) {
					t.Errorf("a refused kpt fn eval changed the package")
				}

				args := []string{"fn", "eval", ".", "--exec", "computeplane-fn", "--fn-config", tc.config}
				r = runKpt(t, pkg, args...)
				if r.code != 0 {
					t.Fatalf("kpt %s (bare kustomization: %v): exit %d\n%s%s", strings.Join(args, " "), bare, r.code, r.stdout, r.stderr)
				}
				got := readTree(t, pkg)
				for name, content := range before {
					if strings.HasSuffix(name, ".yaml") && name != "expected.yaml" && got[name] != content {
						t.Errorf("%s was changed or removed by kpt fn eval", name)
					}
				}
				generated := 0
				for name, content := range got {
					if _, input := before[name]; input {
						continue
					}
					generated++
					if !strings.Contains(stream.stdout, content) {
						t.Errorf("%s, written by kpt, is no document of the standalone render", name)
					}
				}
				if generated == 0 {
					t.Errorf("kpt fn eval wrote no generated object")
				}
				if r := runKpt(t, pkg, args...); r.code != 0 {
					t.Fatalf("kpt %s, again: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
				}
				again := readTree(t, pkg)
				if len(again) != len(got) {
					t.Errorf("a second kpt fn eval changed the files of the package")
				}
				for name, content := range got {
					if again[name] != content {
						t.Errorf("a second kpt fn eval changed %s", name)
					}
				}
			}
		})
	}
}
