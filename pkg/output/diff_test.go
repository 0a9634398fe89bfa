package output_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/output"
)

func TestUnifiedDiff(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		want     string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"added file", "", "a\nb\n", "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"removed file", "a\n", "", "--- a\n+++ b\n@@ -1 +0,0 @@\n-a\n"},
		{"one line changed", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n",
			"--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n",
			"--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y\n"},
		{"hunks joined by short context", "1\n2\n3\n4\n5\n6\n7\n8\n", "X\n2\n3\n4\n5\n6\n7\nY\n",
			"--- a\n+++ b\n@@ -1,8 +1,8 @@\n-1\n+X\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+Y\n"},
		{"insertion", "a\nb\n", "a\nnew\nb\n", "--- a\n+++ b\n@@ -1,2 +1,3 @@\n a\n+new\n b\n"},
		{"no newline at end", "a\nb", "a\nb\n", "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := output.UnifiedDiff("a", "b", []byte(tc.old), []byte(tc.new))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("diff (-want +got):\n%s", diff)
			}
			// GNU diff writes the same bytes.
			if diff := cmp.Diff(gnuDiff(t, tc.old, tc.new), got); diff != "" {
				t.Errorf("diff differs from diff -u (-diff -u +got):\n%s", diff)
			}
		})
	}
}

// TestUnifiedDiffApplies applies diffs of random edits, large rewrites
// beyond the edit bound included, with git apply (strict about context,
// counts and the missing newline at the end) and expects the new text back.
func TestUnifiedDiffApplies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		n := rng.IntN(60)
		if i%50 == 0 {
			n = 3000
		}
		var oldLines []string
		for range n {
			oldLines = append(oldLines, strconv.Itoa(rng.IntN(8)))
		}
		var newLines []string
		for _, l := range oldLines {
			switch r := rng.IntN(10); {
			case r == 0 && i%50 != 0:
			case r == 1:
				newLines = append(newLines, l, "ins"+strconv.Itoa(rng.IntN(3)))
			case r == 2 || i%50 == 0:
				newLines = append(newLines, "chg"+strconv.Itoa(rng.IntN(1000)))
			default:
				newLines = append(newLines, l)
			}
		}
		oldText, newText := join(oldLines, rng.IntN(4) != 0), join(newLines, rng.IntN(4) != 0)
		d := output.UnifiedDiff("a/f", "b/f", []byte(oldText), []byte(newText))
		if d == "" {
			if oldText != newText {
				t.Fatalf("case %d: no diff between different texts", i)
			}
			continue
		}
		got, err := gitApply(t, oldText, d)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, d)
		}
		if got != newText {
			t.Fatalf("case %d: applying the diff gives\n%q\nwant\n%q\ndiff:\n%s", i, got, newText, d)
		}
	}
}

func join(lines []string, newline bool) string {
	s := strings.Join(lines, "\n")
	if newline && len(lines) > 0 {
		s += "\n"
	}
	return s
}

// tool returns the path of a program the diff is checked against, skipping
// the test, saying why, where it is not installed.
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	return p
}

// gnuDiff is what `diff -u` writes for old and new, headers named a and b.
func gnuDiff(t *testing.T, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	writeText(t, filepath.Join(dir, "old"), old)
	writeText(t, filepath.Join(dir, "new"), new)
	cmd := exec.Command(tool(t, "diff"), "-u", "--label", "a", "--label", "b", "old", "new")
	cmd.Dir = dir
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("diff -u: %v", err)
	}
	return string(out)
}

// gitApply applies a diff of the file f (headers a/f and b/f) with `git
// apply`, strict about context and counts, to old, and returns the result.
func gitApply(t *testing.T, old, diff string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	writeText(t, filepath.Join(dir, "f"), old)
	writeText(t, filepath.Join(dir, "change.diff"), diff)
	cmd := exec.Command(tool(t, "git"), "apply", "--whitespace=nowarn", "change.diff")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git apply: %v: %s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "f"))
	return string(data), err
}

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
