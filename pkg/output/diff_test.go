package output_test

import (
	"fmt"
	"math/rand/v2"
	"regexp"
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
		})
	}
}

// TestUnifiedDiffApplies applies diffs of random edits, large rewrites
// beyond the edit bound included, and expects the new text back.
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
		d := output.UnifiedDiff("a", "b", []byte(oldText), []byte(newText))
		got, err := applyDiff(oldText, d)
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

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// applyDiff is a strict patch: context and deletions must match exactly and
// the hunk headers must count right.
func applyDiff(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	type ln struct {
		text string
		eol  bool
	}
	split := func(s string) []ln {
		var out []ln
		for s != "" {
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				out = append(out, ln{s, false})
				break
			}
			out = append(out, ln{s[:i], true})
			s = s[i+1:]
		}
		return out
	}
	src := split(old)
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("bad headers")
	}
	var out []ln
	pos := 0
	for i := 2; i < len(lines); {
		m := hunkHeader.FindStringSubmatch(lines[i])
		if m == nil {
			return "", fmt.Errorf("line %d: not a hunk header: %q", i, lines[i])
		}
		count := func(s string) int {
			if s == "" {
				return 1
			}
			n, _ := strconv.Atoi(s)
			return n
		}
		aStart, aLen, bLen := count(m[1]), count(m[2]), count(m[4])
		if aLen > 0 {
			aStart--
		}
		if aStart < pos {
			return "", fmt.Errorf("hunk %q goes backwards", lines[i])
		}
		out = append(out, src[pos:aStart]...)
		pos = aStart
		i++
		var gotA, gotB int
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			eol := !(i+1 < len(lines) && lines[i+1] == `\ No newline at end of file`)
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != (ln{l[1:], eol}) {
					return "", fmt.Errorf("line %q does not match the old text", l)
				}
				pos++
				gotA++
				if l[0] == ' ' {
					out = append(out, ln{l[1:], eol})
					gotB++
				}
			case '+':
				out = append(out, ln{l[1:], eol})
				gotB++
			default:
				return "", fmt.Errorf("unexpected line %q", l)
			}
			i++
			if !eol {
				i++
			}
		}
		if gotA != aLen || gotB != bLen {
			return "", fmt.Errorf("hunk counts %d,%d but header says %d,%d", gotA, gotB, aLen, bLen)
		}
	}
	out = append(out, src[pos:]...)
	var b strings.Builder
	for _, l := range out {
		b.WriteString(l.text)
		if l.eol {
			b.WriteByte('\n')
		}
	}
	return b.String(), nil
}
