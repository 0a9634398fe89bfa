package input

import (
	"bytes"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Limits bound what one run reads, so that hostile input ends in a clear
// error instead of exhausting the machine. They are tuned so that the scale
// target (10,000 tenants, 100,000 apps, about 110 MB and 10 million YAML
// nodes) renders with room to spare, and so that what they let through is
// parsed in bounded time and memory. docs/limits.md explains each.
const (
	// MaxInputBytes is the most bytes one run reads: all input files and
	// the ResourceList on stdin together.
	MaxInputBytes = 256 << 20
	// MaxDocumentNodes bounds the YAML nodes of one document, estimated
	// before it is parsed: a file or a ResourceList is decoded a document
	// at a time, and a document whole. Kubernetes objects are far smaller;
	// only a huge v1 List or ResourceList comes near it.
	MaxDocumentNodes = 4_000_000
	// MaxEstimatedNodes bounds the YAML nodes of all inputs of a run,
	// estimated from their bytes before they are parsed (EstimateNodes):
	// go-yaml builds a whole document in memory before anyone can look at
	// it, and a dense document such as `[a,a,a,...]` makes one node of every
	// two bytes.
	MaxEstimatedNodes = 32_000_000
	// MaxObjects is the most input objects one run accepts. Each costs some
	// 15 µs to read, check and write beyond its nodes.
	MaxObjects = 500_000
	// MaxObjectNodes is the most YAML nodes one object may expand to with
	// its aliases followed. No Kubernetes object comes near it: the API
	// server stores at most 1.5 MiB per object.
	MaxObjectNodes = 1_000_000
	// MaxNodes is the most YAML nodes all objects of a run may expand to
	// with their aliases followed, which bounds every later walk and the
	// output.
	MaxNodes = 32_000_000
	// MaxHeldNodes is the most YAML nodes of the objects a run keeps in
	// memory until it writes them: those that pass through, inputs kept
	// with keepInputs, and the function config. The standalone CLI drops
	// the nodes of every other input while it reads (a fleet of any size
	// holds little); these it must keep, at several hundred bytes a node.
	MaxHeldNodes = 2_000_000
	// MaxFiles is the most input files one run reads.
	MaxFiles = 200_000
	// MaxDepth is how deep an object may nest, with aliases expanded.
	MaxDepth = yamlnode.MaxDepth
)

// Budget counts what one run has read, across files and stdin, and refuses
// what goes over a limit. The zero value is ready to use; one Budget is
// shared by everything one run reads, from any number of goroutines.
//
// A limit of the whole run ends the run: the budget is then exhausted
// (Exhausted), and the readers of this package stop at once. That is state
// of the budget, not of what a call returns: every call reports
// api.Problems, the limit's among them.
type Budget struct {
	// ForResourceList is set by the KRM function, which holds everything it
	// reads until it writes the ResourceList; messages then say so.
	ForResourceList bool

	bytes, estimate, documents, objects, nodes, held, files atomic.Int64
	// over is the problem of the first limit of the whole run that was
	// hit; nil until then.
	over atomic.Pointer[api.Problem]
}

func (b *Budget) charge(counter *atomic.Int64, n int, limit int) bool {
	return counter.Add(int64(n)) <= int64(limit)
}

// exhaust notes that a limit of the whole run was hit, which ends the run,
// and returns its problem.
func (b *Budget) exhaust(p api.Problem) api.Problems {
	b.over.CompareAndSwap(nil, &p)
	return api.Problems{p}
}

// Exhausted reports whether a limit of the whole run was hit: the problems
// of the call that hit it say which, and reading more is pointless.
func (b *Budget) Exhausted() bool { return b.over.Load() != nil }

// withLimit returns ps and, unless they hold it already, the problem of the
// limit that ended the run, if one did. A reader that stops because another
// goroutine exhausted the budget reports it this way.
func (b *Budget) withLimit(ps api.Problems) api.Problems {
	if p := b.over.Load(); p != nil && !slices.Contains(ps, *p) {
		ps = append(ps, *p)
	}
	return ps
}

// ChargeBytes counts data about to be parsed: its size and its estimated
// number of YAML nodes. name is used in the message. Going over any of
// these limits exhausts the budget.
func (b *Budget) ChargeBytes(data []byte, name string) api.Problems {
	refuse := func(format string, args ...any) api.Problems {
		return b.exhaust(api.Problem{Message: name + ": " + fmt.Sprintf(format, args...)})
	}
	if !b.charge(&b.bytes, len(data), MaxInputBytes) {
		return refuse("the inputs of one run may hold at most %d MiB together; this file goes over it", MaxInputBytes>>20)
	}
	estimate, largest := estimateNodes(data)
	if largest > MaxDocumentNodes {
		return refuse("a YAML document holds about %s nodes (estimated from its bytes before parsing); one document may hold at most about %s: write one object per document", yamlnode.Count(largest), yamlnode.Count(MaxDocumentNodes))
	}
	if !b.charge(&b.estimate, estimate, MaxEstimatedNodes) {
		return refuse("the inputs of one run may hold at most about %s YAML nodes together (estimated from their bytes before parsing); this file goes over it", yamlnode.Count(MaxEstimatedNodes))
	}
	// Every document but empty ones is at least one object: a stream of
	// too many is refused before it is parsed. Empty documents count too,
	// which only a stream of millions of them notices.
	if !b.charge(&b.documents, CountDocuments(data), MaxObjects) {
		return refuse("the inputs of one run may hold at most %s objects; this file holds more YAML documents than that", yamlnode.Count(MaxObjects))
	}
	return nil
}

// CountDocuments counts the documents of a YAML stream from its bytes: one,
// and one more for every line that starts with the document marker "---"
// followed by a blank or the end. go-yaml ends a document at such a line
// wherever it stands, so the count is never less than the documents it
// reads, nor more than one above, except for the markers inside a block
// scalar, which end it and start a document too.
func CountDocuments(data []byte) int {
	n := 1
	if bytes.HasPrefix(data, []byte("---")) && (len(data) == 3 || blankAt(data, 3) > 0) {
		n++
	}
	for rest := data; ; {
		i := bytes.Index(rest, []byte("\n---"))
		if i < 0 {
			return n
		}
		rest = rest[i+4:]
		if len(rest) == 0 || blankAt(rest, 0) > 0 {
			n++
		}
	}
}

// RemainingBytes is how many more bytes the run may read.
func (b *Budget) RemainingBytes() int64 {
	return max(0, MaxInputBytes-b.bytes.Load())
}

// countFile counts the file name, about to be read.
func (b *Budget) countFile(name string) api.Problems {
	if !b.charge(&b.files, 1, MaxFiles) {
		return b.exhaust(api.Problem{File: name, Message: fmt.Sprintf("the inputs of one run may be at most %s files", yamlnode.Count(MaxFiles))})
	}
	return nil
}

// chargeObject counts one object of the given expanded size, read from
// origin.
func (b *Budget) chargeObject(nodes int, origin api.Origin) api.Problems {
	if !b.charge(&b.objects, 1, MaxObjects) {
		return b.exhaust(api.Problem{File: origin.File, Message: fmt.Sprintf("the inputs of one run may hold at most %s objects", yamlnode.Count(MaxObjects))})
	}
	if !b.charge(&b.nodes, nodes, MaxNodes) {
		return b.exhaust(api.Problem{File: origin.File, Message: fmt.Sprintf("the objects of one run may expand to at most %s YAML nodes together, with their aliases followed", yamlnode.Count(MaxNodes))})
	}
	return nil
}

// chargeHeld counts the nodes o keeps in memory; what and advice word the
// message.
func (b *Budget) chargeHeld(o *api.Object, what, advice string) api.Problems {
	if !b.charge(&b.held, o.Nodes, MaxHeldNodes) {
		return b.exhaust(api.Errorf(o.Ref(), o.Origin, "", "%s may hold at most %s YAML nodes together (aliases followed), and this one goes over it; %s", what, yamlnode.Count(MaxHeldNodes), advice))
	}
	return nil
}

// byteClass sorts bytes for EstimateNodes.
var byteClass = func() (c [256]uint8) {
	for _, b := range []byte{' ', '\t', '\n', '\r'} {
		c[b] = classBlank
	}
	c['['], c['{'] = classOpen, classOpen
	c[']'], c['}'] = classClose, classClose
	c[','] = classComma
	c['?'] = classQuestion
	c[':'] = classColon
	c['-'] = classDash
	for b := 0x80; b < 0x100; b++ {
		c[b] = classHigh
	}
	return c
}()

const (
	classOther = iota
	classBlank
	classOpen
	classClose
	classComma
	classQuestion
	classColon
	classDash
	classHigh
)

// blankAt returns the length of the blank at data[i:], or 0: space, tab,
// the line breaks go-yaml knows (LF, CR, NEL, LS, PS) and the byte order
// mark, which go-yaml skips at the start of a line.
func blankAt(data []byte, i int) int {
	b := data[i]
	switch byteClass[b] {
	case classBlank:
		return 1
	case classHigh:
		rest := data[i:]
		switch {
		case len(rest) >= 2 && b == 0xC2 && rest[1] == 0x85: // NEL
			return 2
		case len(rest) >= 3 && b == 0xE2 && rest[1] == 0x80 && (rest[2] == 0xA8 || rest[2] == 0xA9): // LS, PS
			return 3
		case len(rest) >= 3 && b == 0xEF && rest[1] == 0xBB && rest[2] == 0xBF: // BOM
			return 3
		}
	}
	return 0
}

// inlineValue reports whether a value follows at data[i:] on the same line:
// anything but a comment, a line break, the end, or a flow indicator that
// ends an entry.
func inlineValue(data []byte, i int) bool {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
		i++
	}
	if i == len(data) {
		return false
	}
	switch data[i] {
	case '\n', '\r', '#', ',', ']', '}':
		return false
	}
	return blankAt(data, i) == 0
}

// EstimateNodes returns an upper bound of the number of YAML nodes data
// parses into (documents included, aliases not followed), in one pass over
// its bytes and without parsing it.
//
// Every node either begins with a token of its own (a scalar, an alias, a
// tag or an anchor) that follows a blank, a flow indicator or ':', and is
// counted once for that token start; or is a flow collection, counted with
// its '[' or '{'; or is made by an indicator without a token of its own: a
// block collection, which its first '-', '?' or ':' opens, or an empty
// (null) key or value. Each indicator is counted for the most nodes it can
// make: '-' two (the sequence and an empty entry); ':' after a key with a
// value on its line one (the mapping), two without one of those, three
// without both; '?' three (a mapping, an empty key and an empty value);
// ']' and '}' one (an empty value in a flow mapping). '[', '{' and ','
// count one more than they can make, so that the densest YAML (`{a,a,a}`,
// `- - - a`, lines of `a:`) counts at least one and a half per node, not
// much less than Kubernetes YAML does (about 1.7). FuzzDecode checks that
// the estimate is never less than the real count.
func EstimateNodes(data []byte) int {
	n, _ := estimateNodes(data)
	return n
}

// estimateNodes is EstimateNodes that also returns the estimate of the
// largest document, cut at the lines that start with the document marker
// "---" and a blank (see CountDocuments).
func estimateNodes(data []byte) (n, largest int) {
	n = 1 // the first document
	docStart := 0
	startable := true
	for i := 0; i < len(data); i++ {
		switch byteClass[data[i]] {
		case classOther:
			if startable {
				n++
			}
			startable = false
			// Most bytes are letters and digits: skip them in a tight loop.
			for i+1 < len(data) && byteClass[data[i+1]] == classOther {
				i++
			}
			continue
		case classBlank:
			startable = true
			continue
		case classHigh:
			if w := blankAt(data, i); w > 0 {
				i += w - 1
				startable = true
				continue
			}
			if startable {
				n++
			}
			startable = false
		case classOpen, classComma:
			n += 2
			startable = true
		case classQuestion:
			n += 3
			startable = true
		case classClose:
			n++
			startable = true
		case classColon:
			switch keyed, valued := !startable, inlineValue(data, i+1); {
			case keyed && valued:
				n++
			case keyed || valued:
				n += 2
			default:
				n += 3
			}
			startable = true
		case classDash:
			if (i == 0 || data[i-1] == '\n') && bytes.HasPrefix(data[i:], []byte("---")) && (i+3 == len(data) || blankAt(data, i+3) > 0) {
				largest = max(largest, n-docStart)
				docStart = n
			}
			if i+1 == len(data) || blankAt(data, i+1) > 0 {
				n += 2
				startable = true
				continue
			}
			if startable {
				n++
			}
			startable = false
		}
	}
	return n, max(largest, n-docStart)
}

// Stats is what a budget has counted so far.
type Stats struct {
	Bytes, EstimatedNodes, Objects, Nodes, Held, Files int64
}

// Stats returns what the budget has counted so far, for benchmarks and
// for tuning the limits.
func (b *Budget) Stats() Stats {
	return Stats{Bytes: b.bytes.Load(), EstimatedNodes: b.estimate.Load(), Objects: b.objects.Load(), Nodes: b.nodes.Load(), Held: b.held.Load(), Files: b.files.Load()}
}
