package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The tests are in package main: a command has no API to test from outside,
// and what is worth testing without timing anything is its pure parts.

func TestFirstDifference(t *testing.T) {
	long := strings.Repeat("a", 100_000) // longer than the reader's buffer
	tests := []struct {
		name              string
		baseline, current string
		want              difference
	}{
		{name: "identical", baseline: "a: 1\nb: 2\n", current: "a: 1\nb: 2\n"},
		{name: "both empty"},
		{name: "identical without final newline", baseline: "a: 1\nb: 2", current: "a: 1\nb: 2"},
		{name: "identical long lines", baseline: long + "\n" + long + "\n", current: long + "\n" + long + "\n"},
		{
			name:     "a line differs",
			baseline: "a: 1\nb: 2\nc: 3\n", current: "a: 1\nb: 2\nc: 4\n",
			want: difference{line: 3, column: 4, baseline: `"c: 3\n"`, current: `"c: 4\n"`},
		},
		{
			name:     "current has a line more",
			baseline: "a: 1\n", current: "a: 1\nb: 2\n",
			want: difference{line: 2, column: 1, baseline: "end of output", current: `"b: 2\n"`},
		},
		{
			name:     "current ends early",
			baseline: "a: 1\nb: 2\n", current: "a: 1\n",
			want: difference{line: 2, column: 1, baseline: `"b: 2\n"`, current: "end of output"},
		},
		{
			name:     "final newline missing",
			baseline: "a: 1\nb: 2\n", current: "a: 1\nb: 2",
			want: difference{line: 2, column: 5, baseline: `"b: 2\n"`, current: `"b: 2"`},
		},
		{
			name:     "far into a long line",
			baseline: "x\n" + long + "b" + long + "\n", current: "x\n" + long + "c" + long + "\n",
			want: difference{
				line: 2, column: 100_001,
				baseline: `…"` + strings.Repeat("a", 40) + "b" + strings.Repeat("a", 79) + `"…`,
				current:  `…"` + strings.Repeat("a", 40) + "c" + strings.Repeat("a", 79) + `"…`,
			},
		},
		{
			// The window would start inside "é" (2 bytes): it starts
			// at the rune instead of cutting it.
			name:     "window cut at a rune boundary",
			baseline: "é" + strings.Repeat("a", 39) + "b\n", current: "é" + strings.Repeat("a", 39) + "c\n",
			want: difference{
				line: 1, column: 42,
				baseline: `"é` + strings.Repeat("a", 39) + `b\n"`,
				current:  `"é` + strings.Repeat("a", 39) + `c\n"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := firstDifference(strings.NewReader(tt.baseline), strings.NewReader(tt.current))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(difference{})); diff != "" {
				t.Errorf("firstDifference() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompareFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cur := write("out-20.yaml", "kind: A\n---\nkind: B\n")
	same := write("same.yaml", "kind: A\n---\nkind: B\n")
	other := write("other.yaml", "kind: A\n---\nkind: C\n")

	if got, err := compareFiles(same, cur); err != nil || got.line != 0 {
		t.Errorf("compareFiles(same) = line %d, %v; want identical", got.line, err)
	}
	if got, err := compareFiles(other, cur); err != nil || got.line != 3 {
		t.Errorf("compareFiles(other) = line %d, %v; want line 3", got.line, err)
	}
	if _, err := compareFiles(filepath.Join(dir, "missing.yaml"), cur); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("compareFiles(missing) error = %v, want one that wraps os.ErrNotExist", err)
	}
}

func TestVerdict(t *testing.T) {
	tests := []struct {
		name     string
		current  result
		baseline baseline
		want     string
		wantOK   bool
	}{
		{name: "identical", want: "outputs identical", wantOK: true},
		{
			name:     "differ",
			baseline: baseline{diff: difference{line: 1234}},
			want:     "outputs DIFFER (first differing line 1234)",
		},
		{
			name:    "render failed",
			current: result{renders: renders{failure: "killed after 3.0s: resident memory above 4096 MiB"}},
			want:    "outputs not compared: the render failed", wantOK: true,
		},
		{
			name:     "baseline render failed",
			baseline: baseline{renders: renders{failure: "render failed: exit status 1: line one\nline two"}},
			want:     "outputs not compared: the baseline render failed: render failed: exit status 1: line one\nline two", wantOK: true,
		},
		{
			name:     "outputs unreadable",
			baseline: baseline{readErr: errors.New("failed to open the output: gone")},
			want:     "outputs not compared: failed to open the output: gone",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.baseline.verdict(&tt.current)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("verdict() = %q, %v; want %q, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestVersus(t *testing.T) {
	tests := []struct {
		cur, base float64
		failed    bool
		want      string
	}{
		{cur: 9.13, base: 8.90, want: "1.03×"},
		{cur: 0.5, base: 2, want: "0.25×"},
		{cur: 647 << 20, base: 2107 << 20, want: "0.31×"},
		{cur: 1, base: 1, failed: true, want: "-"},
		{cur: 1, base: 0, want: "-"},
		{cur: 0, base: 1, want: "-"},
	}
	for _, tt := range tests {
		if got := versus(tt.cur, tt.base, tt.failed); got != tt.want {
			t.Errorf("versus(%v, %v, %v) = %q, want %q", tt.cur, tt.base, tt.failed, got, tt.want)
		}
	}
}

func TestPaired(t *testing.T) {
	s := func(xs ...float64) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x * float64(time.Second))
		}
		return out
	}
	tests := []struct {
		name      string
		cur, base []time.Duration
		failed    bool
		want      string
	}{
		// The reps of the 10,000-tenant fleet of one run: the baseline's
		// best (8.70 s) came in a lull, the paired ratio is not moved by it.
		{name: "odd", cur: s(9.95, 11.03, 10.94, 9.51, 9.33), base: s(8.70, 10.82, 11.39, 9.59, 9.46), want: "0.99×"},
		{name: "even", cur: s(2, 3), base: s(1, 3), want: "1.50×"},
		{name: "one", cur: s(1), base: s(2), want: "0.50×"},
		{name: "unequal: the reps both have", cur: s(1, 1, 5), base: s(1, 1), want: "1.00×"},
		{name: "failed", cur: s(1), base: s(1), failed: true, want: "-"},
		{name: "none", want: "-"},
		{name: "zero time", cur: s(1, 0), base: s(1, 1), want: "-"},
	}
	for _, tt := range tests {
		if got := paired(tt.cur, tt.base, tt.failed); got != tt.want {
			t.Errorf("%s: paired = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestBaselineOrder(t *testing.T) {
	var got []bool
	for rep := 1; rep <= 4; rep++ {
		got = append(got, baselineFirst(rep))
	}
	if diff := cmp.Diff([]bool{false, true, false, true}, got); diff != "" {
		t.Errorf("baselineFirst(1..4) (-want +got):\n%s", diff)
	}
}

func TestNewBaseline(t *testing.T) {
	b := newBaseline("/old/computeplane-fn", "/w/out-1000.yaml")
	if b.out != "/w/out-1000.baseline.yaml" || b.current != "/w/out-1000.yaml" {
		t.Errorf("newBaseline() outputs = %q, %q", b.out, b.current)
	}
}
