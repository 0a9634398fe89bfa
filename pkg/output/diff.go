package output

import (
	"bytes"
	"fmt"
	"strings"
)

// DevNull names the missing side of an added or removed file in a diff
// header, as git and GNU diff do.
const DevNull = "/dev/null"

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// maxEditDistance bounds the work of the line diff: beyond this many
// inserted plus deleted lines (after the common head and tail are taken
// off), the changed middle is shown as one block of deletions followed by
// one block of insertions. The diff is still correct, only less minimal,
// and time and memory stay bounded for huge rewrites.
const maxEditDistance = 1000

// UnifiedDiff returns the unified diff that turns old into new, with three
// lines of context and the headers "--- oldName" and "+++ newName" (use
// "a/<path>", "b/<path>" and DevNull for a missing side). It returns "" when
// old and new are equal. A last line without a newline is marked with
// "\ No newline at end of file", so that applying the diff with patch or
// git apply restores the bytes exactly.
func UnifiedDiff(oldName, newName string, old, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks(ops) {
		writeHunk(&out, h, a, b)
	}
	return out.String()
}

// line is one line of a file without its newline; last marks a final line
// that had no newline.
type line struct {
	text      string
	noNewline bool
}

func splitLines(data []byte) []line {
	if len(data) == 0 {
		return nil
	}
	s := string(data)
	parts := strings.SplitAfter(s, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	out := make([]line, len(parts))
	for i, p := range parts {
		text, had := strings.CutSuffix(p, "\n")
		out[i] = line{text: text, noNewline: !had}
	}
	return out
}

// opKind is one step of an edit script.
type opKind byte

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// op is one step: for opEqual and opDelete ai is the line of a, for opEqual
// and opInsert bi the line of b.
type op struct {
	kind   opKind
	ai, bi int
}

// diffLines computes a shortest edit script from a to b (Myers' O(ND)
// algorithm) after taking off the common head and tail.
func diffLines(a, b []line) []op {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ops := make([]op, 0, len(a)+len(b))
	for i := 0; i < head; i++ {
		ops = append(ops, op{opEqual, i, i})
	}
	ops = append(ops, myers(a[head:len(a)-tail], b[head:len(b)-tail], head, head)...)
	for i := tail; i > 0; i-- {
		ops = append(ops, op{opEqual, len(a) - i, len(b) - i})
	}
	return ops
}

// myers returns the edit script from a to b; offA and offB are added to the
// line numbers it reports.
func myers(a, b []line, offA, offB int) []op {
	n, m := len(a), len(b)
	blocks := func() []op {
		ops := make([]op, 0, n+m)
		for i := range n {
			ops = append(ops, op{opDelete, offA + i, offB})
		}
		for j := range m {
			ops = append(ops, op{opInsert, offA + n, offB + j})
		}
		return ops
	}
	if n == 0 || m == 0 {
		return blocks()
	}
	limit := min(n+m, maxEditDistance)
	offset := limit + 1
	v := make([]int, 2*limit+3)
	// trace[d] holds the frontier before step d for diagonals -d-1..d+1,
	// so that memory grows with d² rather than with limit·d.
	var trace [][]int
	found := -1
	for d := 0; d <= limit && found < 0; d++ {
		trace = append(trace, append([]int(nil), v[offset-d-1:offset+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[offset+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return blocks()
	}
	// Walk back through the saved frontiers, collecting steps in reverse.
	var rev []op
	x, y := n, m
	for d := found; d > 0; d-- {
		prev := trace[d]
		at := func(k int) int { return prev[k+d+1] }
		k := x - y
		var prevK int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := at(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			rev = append(rev, op{opEqual, offA + x, offB + y})
		}
		if x == prevX {
			y--
			rev = append(rev, op{opInsert, offA + x, offB + y})
		} else {
			x--
			rev = append(rev, op{opDelete, offA + x, offB + y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, op{opEqual, offA + x, offB + y})
	}
	ops := make([]op, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops
}

// hunks groups an edit script into runs of changes with their context.
func hunks(ops []op) [][]op {
	var out [][]op
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == opEqual {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(0, i-diffContext)
		// Extend over changes and over equal runs short enough to join the
		// next change into the same hunk.
		end := i
		for end < len(ops) {
			if ops[end].kind != opEqual {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-end > 2*diffContext {
				end = min(run, end+diffContext)
				break
			}
			end = run
		}
		out = append(out, ops[start:end])
		i = end
	}
	return out
}

func writeHunk(out *strings.Builder, h []op, a, b []line) {
	var aStart, bStart, aLen, bLen int
	aStart, bStart = h[0].ai, h[0].bi
	for _, o := range h {
		switch o.kind {
		case opEqual:
			aLen++
			bLen++
		case opDelete:
			aLen++
		case opInsert:
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(aStart, aLen), hunkRange(bStart, bLen))
	for _, o := range h {
		var l line
		switch o.kind {
		case opEqual:
			out.WriteByte(' ')
			l = a[o.ai]
		case opDelete:
			out.WriteByte('-')
			l = a[o.ai]
		case opInsert:
			out.WriteByte('+')
			l = b[o.bi]
		}
		out.WriteString(l.text)
		out.WriteByte('\n')
		if l.noNewline {
			out.WriteString("\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a hunk's line range the way GNU diff does: 1-based start,
// the count left out when it is 1, and an empty range named by the line
// before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
