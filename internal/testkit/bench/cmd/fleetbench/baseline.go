package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// baseline is what an older binary (-baseline) did with one fleet, rendered
// in the same run as the binary under test so that both meet the same load,
// and how its output compares with that binary's. A refactor must not change
// the output, so a difference fails the run.
type baseline struct {
	bin     string // absolute path of the baseline binary
	out     string // its output, beside the output of the binary under test
	current string // the output of the binary under test
	renders
	wall, cpu time.Duration // best of renders, set by compare
	diff      difference    // set by compare when both renders succeeded
	readErr   error         // reading the two outputs failed
}

// newBaseline prepares the baseline's renders of one fleet; its output file
// is named after that of the binary under test: out-1000.yaml →
// out-1000.baseline.yaml.
func newBaseline(bin, current string) *baseline {
	return &baseline{bin: bin, out: strings.TrimSuffix(current, ".yaml") + ".baseline.yaml", current: current}
}

// baselineFirst tells whether the baseline renders before the binary under
// test in this rep (1-based): every other rep, so that neither is always the
// one that meets a cold page cache or the tail of a load spike.
func baselineFirst(rep int) bool { return rep%2 == 0 }

// render renders the fleet in dir once with the baseline binary, unless an
// earlier render of it failed, and returns its progress line (empty when it
// failed, as for the binary under test: the failure is in the report). The
// caller prints it, because the line of the binary under test waits for the
// floor.
func (b *baseline) render(dir string, tenants, rep int, killAbove int64) string {
	m, ok := b.renderWith(b.bin, dir, b.out, killAbove)
	if !ok {
		return ""
	}
	return fmt.Sprintf("  %d tenants, rep %d: baseline %.2fs (cpu %.2fs, peak %s)\n", tenants, rep, m.wall.Seconds(), m.cpu.Seconds(), mib(m.rss))
}

// compare takes the best times and, when both binaries rendered the fleet,
// compares the last outputs byte for byte (the output is deterministic, so
// the last rep stands for all).
func (b *baseline) compare(r *result) {
	b.wall, b.cpu = b.best()
	if r.failure != "" || b.failure != "" {
		return
	}
	b.diff, b.readErr = compareFiles(b.out, b.current)
}

// verdict is the line that says how the outputs compare, and whether the run
// may pass with it. A failed render is already reported in its table, and a
// baseline that fails where the binary under test succeeds (an old binary
// killed for its memory) is a result, not an error, so neither fails the run.
func (b *baseline) verdict(r *result) (string, bool) {
	switch {
	case r.failure != "":
		return "outputs not compared: the render failed", true
	case b.failure != "":
		return "outputs not compared: the baseline render failed: " + b.failure, true
	case b.readErr != nil:
		return "outputs not compared: " + b.readErr.Error(), false
	case b.diff.line == 0:
		return "outputs identical", true
	default:
		return fmt.Sprintf("outputs DIFFER (first differing line %d)", b.diff.line), false
	}
}

// reportComparison prints the baseline's best times and peak memory beside
// those of the binary under test, their ratios, and whether the outputs are
// the same; it reports whether they are the same for every fleet.
func reportComparison(results []*result, bases []*baseline) bool {
	fmt.Println("\nbaseline vs current (ratio current/baseline, below 1× is better):")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tenants\tbaseline wall\twall\tratio\tpaired\tbaseline cpu\tcpu\tratio\tpaired\tbaseline peak RSS\tpeak RSS\tratio\t")
	for i, r := range results {
		b := bases[i]
		failed := r.failure != "" || b.failure != ""
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.tenants,
			dur(b.wall, b.failure != ""), dur(r.wall, r.failure != ""), versus(r.wall.Seconds(), b.wall.Seconds(), failed), paired(r.walls, b.walls, failed),
			dur(b.cpu, b.failure != ""), dur(r.cpu, r.failure != ""), versus(r.cpu.Seconds(), b.cpu.Seconds(), failed), paired(r.cpus, b.cpus, failed),
			mib(b.rss), mib(r.rss), versus(float64(r.rss), float64(b.rss), failed))
	}
	tw.Flush()
	fmt.Println("(ratio: of the best times; paired: the median over the reps of each rep's ratio, which one\n outlying render moves less)")
	// Across versions whose output differs by design, what compares is
	// the CPU per byte written.
	fmt.Println("\nper output byte (the CPU ratio over the output's):")
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tenants\tbaseline output\toutput\tratio\tcpu per byte, paired\t")
	for i, r := range results {
		b := bases[i]
		base, cur := fileSize(b.out), fileSize(b.current)
		failed := r.failure != "" || b.failure != "" || base <= 0 || cur <= 0
		perByte := "-"
		if !failed {
			if p, ok := medianRatio(r.cpus, b.cpus); ok {
				perByte = fmt.Sprintf("%.2f×", p/(float64(cur)/float64(base)))
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t\n", r.tenants, mib(base), mib(cur), versus(float64(cur), float64(base), failed), perByte)
	}
	tw.Flush()
	same := true
	for i, r := range results {
		b := bases[i]
		line, ok := b.verdict(r)
		same = same && ok
		fmt.Printf("%d tenants: %s\n", r.tenants, line)
		if b.diff.line != 0 {
			fmt.Printf("  at byte %d of the line:\n    baseline: %s\n    current:  %s\n  diff %s %s\n",
				b.diff.column, b.diff.baseline, b.diff.current, b.out, b.current)
		}
	}
	return same
}

// versus formats cur/base as a ratio, or "-" when a render failed or a
// figure is missing.
func versus(cur, base float64, failed bool) string {
	if failed || cur <= 0 || base <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", cur/base)
}

// paired is the median, over the reps, of the ratio of the two renders of
// one rep (which ran back to back, under the same load): a best time taken
// in a lull of the machine moves the ratio of the best times, not this.
func paired(cur, base []time.Duration, failed bool) string {
	if failed {
		return "-"
	}
	median, ok := medianRatio(cur, base)
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f×", median)
}

// medianRatio is the median over the reps of cur[i]/base[i]; ok is false
// when a rep is missing a figure.
func medianRatio(cur, base []time.Duration) (float64, bool) {
	n := min(len(cur), len(base))
	if n == 0 {
		return 0, false
	}
	ratios := make([]float64, 0, n)
	for i := range n {
		if cur[i] <= 0 || base[i] <= 0 {
			return 0, false
		}
		ratios = append(ratios, cur[i].Seconds()/base[i].Seconds())
	}
	slices.Sort(ratios)
	median := ratios[n/2]
	if n%2 == 0 {
		median = (ratios[n/2-1] + ratios[n/2]) / 2
	}
	return median, true
}

// difference is where two outputs first differ; line is 0 when they are
// identical.
type difference struct {
	line   int // 1-based
	column int // 1-based byte offset in the line of the first differing byte
	// baseline and current quote a window of each line around that byte,
	// or read "end of output" for an output that ended before the line.
	baseline, current string
}

// compareFiles compares two files line by line, streaming: an output of the
// largest fleets is hundreds of MiB.
func compareFiles(baseline, current string) (difference, error) {
	fb, err := os.Open(baseline)
	if err != nil {
		return difference{}, fmt.Errorf("failed to open the baseline output: %w", err)
	}
	defer fb.Close()
	fc, err := os.Open(current)
	if err != nil {
		return difference{}, fmt.Errorf("failed to open the output: %w", err)
	}
	defer fc.Close()
	return firstDifference(fb, fc)
}

// firstDifference reads two streams line by line and returns the first line
// on which they differ, counting a missing final newline and a stream that
// ends early as differences.
func firstDifference(baseline, current io.Reader) (difference, error) {
	rb, rc := bufio.NewReaderSize(baseline, 1<<16), bufio.NewReaderSize(current, 1<<16)
	var lb, lc []byte
	for line := 1; ; line++ {
		var errB, errC error
		if lb, errB = nextLine(rb, lb); errB != nil && !errors.Is(errB, io.EOF) {
			return difference{}, fmt.Errorf("failed to read the baseline output: %w", errB)
		}
		if lc, errC = nextLine(rc, lc); errC != nil && !errors.Is(errC, io.EOF) {
			return difference{}, fmt.Errorf("failed to read the output: %w", errC)
		}
		if !bytes.Equal(lb, lc) {
			col := commonPrefix(lb, lc)
			return difference{line: line, column: col + 1, baseline: around(lb, col), current: around(lc, col)}, nil
		}
		// Equal lines end in a newline in both streams or in neither, and
		// only the last line of a stream lacks one.
		if errB != nil {
			return difference{}, nil
		}
	}
}

// nextLine reads one line, with its newline if it has one, into buf's
// memory: a line of the output can be a 50 KB schema, and the outputs have
// millions of lines.
func nextLine(r *bufio.Reader, buf []byte) ([]byte, error) {
	buf = buf[:0]
	for {
		frag, err := r.ReadSlice('\n')
		buf = append(buf, frag...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return buf, err
		}
	}
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Window of a differing line that the report shows, in bytes before and
// after the first differing byte.
const (
	windowBefore = 40
	windowAfter  = 80
)

// around quotes the part of line around byte col, cut at rune boundaries
// and marked with … where cut; an empty line (the stream had ended) reads
// "end of output".
func around(line []byte, col int) string {
	if len(line) == 0 {
		return "end of output"
	}
	start, end := max(0, col-windowBefore), min(len(line), col+windowAfter)
	for start > 0 && !utf8.RuneStart(line[start]) {
		start--
	}
	for end < len(line) && !utf8.RuneStart(line[end]) {
		end++
	}
	s := fmt.Sprintf("%q", line[start:end])
	if start > 0 {
		s = "…" + s
	}
	if end < len(line) {
		s += "…"
	}
	return s
}

// fileSize is the size of the file at p, or 0 when it cannot be read.
func fileSize(p string) int64 {
	info, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return info.Size()
}
