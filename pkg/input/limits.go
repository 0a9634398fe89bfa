package input

import (
	"fmt"
	"sync/atomic"

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
	// MaxEstimatedNodes bounds the YAML nodes of all inputs of a run,
	// estimated from their bytes before they are parsed (EstimateNodes):
	// go-yaml builds a whole document in memory before anyone can look at
	// it, and a dense document such as `[a,a,a,...]` makes one node of every
	// two bytes.
	MaxEstimatedNodes = 32_000_000
	// MaxObjects is the most input objects one run accepts.
	MaxObjects = 1_000_000
	// MaxObjectNodes is the most YAML nodes one object may expand to with
	// its aliases followed. No Kubernetes object comes near it: the API
	// server stores at most 1.5 MiB per object.
	MaxObjectNodes = 1_000_000
	// MaxNodes is the most YAML nodes all objects of a run may expand to
	// with their aliases followed, which bounds every later walk and the
	// output.
	MaxNodes = 32_000_000
	// MaxFiles is the most input files one run reads.
	MaxFiles = 200_000
	// MaxDepth is how deep an object may nest, with aliases expanded.
	MaxDepth = yamlnode.MaxDepth
)

// Budget counts what one run has read, across files and stdin, and refuses
// what goes over a limit. The zero value is ready to use; one Budget is
// shared by everything one run reads, from any number of goroutines.
type Budget struct {
	bytes, estimate, objects, nodes, files atomic.Int64
}

func (b *Budget) charge(counter *atomic.Int64, n int, limit int) bool {
	return counter.Add(int64(n)) <= int64(limit)
}

// ChargeBytes counts data about to be parsed: its size and its estimated
// number of YAML nodes. name is used in the message.
func (b *Budget) ChargeBytes(data []byte, name string) error {
	if !b.charge(&b.bytes, len(data), MaxInputBytes) {
		return fmt.Errorf("%s: the inputs of one run may hold at most %d MiB together; this file goes over it", name, MaxInputBytes>>20)
	}
	if !b.charge(&b.estimate, EstimateNodes(data), MaxEstimatedNodes) {
		return fmt.Errorf("%s: the inputs of one run may hold at most about %s YAML nodes together (estimated from their bytes before parsing); this file goes over it", name, yamlnode.Count(MaxEstimatedNodes))
	}
	return nil
}

// RemainingBytes is how many more bytes the run may read.
func (b *Budget) RemainingBytes() int64 {
	return max(0, MaxInputBytes-b.bytes.Load())
}

// chargeFiles counts files about to be read.
func (b *Budget) chargeFiles(n int) error {
	if !b.charge(&b.files, n, MaxFiles) {
		return fmt.Errorf("the inputs of one run may be at most %s files", yamlnode.Count(MaxFiles))
	}
	return nil
}

// chargeObject counts one object of the given expanded size.
func (b *Budget) chargeObject(nodes int) error {
	if !b.charge(&b.objects, 1, MaxObjects) {
		return fmt.Errorf("the inputs of one run may hold at most %s objects", yamlnode.Count(MaxObjects))
	}
	if !b.charge(&b.nodes, nodes, MaxNodes) {
		return fmt.Errorf("the objects of one run may expand to at most %s YAML nodes together, with their aliases followed", yamlnode.Count(MaxNodes))
	}
	return nil
}

// byteClass sorts bytes for EstimateNodes.
var byteClass = func() (c [256]uint8) {
	// Space, tab and line breaks, and the last bytes of the Unicode line
	// breaks go-yaml knows (NEL U+0085, LS U+2028, PS U+2029): a byte after
	// them may start a token. Counting a few other UTF-8 continuation
	// bytes as blanks only makes the estimate larger.
	for _, b := range []byte{' ', '\t', '\n', '\r', 0x85, 0xA8, 0xA9} {
		c[b] = classBlank
	}
	for _, b := range []byte(":?,[]{}") {
		c[b] = classIndicator
	}
	c['-'] = classDash
	return c
}()

const (
	classOther = iota
	classBlank
	classIndicator
	classDash
)

// EstimateNodes returns an upper bound of the number of YAML nodes data
// parses into, in one pass over its bytes and without parsing it.
//
// Every node starts with a token (a scalar, an alias, a tag, an anchor or a
// flow collection) that follows a blank, a flow indicator or ':' (the
// "token starts" counted here), or is an empty value or a collection that an
// indicator (': ? , [ ] { }' or '-' before a blank) opens; an indicator
// opens at most two. So token starts plus twice the indicators is never
// less than the number of nodes, and for Kubernetes YAML it is about twice
// that number.
func EstimateNodes(data []byte) int {
	n := 1 // the first document
	startable := true
	for i, b := range data {
		switch byteClass[b] {
		case classBlank:
			startable = true
			continue
		case classIndicator:
			if startable {
				n++
			}
			n += 2
			startable = true
			continue
		case classDash:
			// A block sequence entry: '-' before a blank. Any byte of a
			// multi-byte character counts as a blank here, for the
			// Unicode line breaks.
			if i+1 == len(data) || byteClass[data[i+1]] == classBlank || data[i+1] >= 0x80 {
				n += 2
			}
		}
		if startable {
			n++
		}
		startable = false
	}
	return n
}
