package yamlnode

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/yaml11"
)

// Check walks the tree below n once, following aliases, and refuses what
// would make a later walk unsafe or the written output unreadable (it also
// spells empty nulls that go-yaml could not write back as such, see
// spellNull):
//
//   - an alias to an anchor outside the tree (an object of a v1 List or a
//     ResourceList that refers to another one: objects are written
//     separately and in another order, so the anchor would be missing);
//   - an alias to a node that contains it (a cycle, which go-yaml builds
//     for `&a [*a]`);
//   - more than maxNodes nodes with aliases expanded (an alias bomb);
//   - nesting deeper than MaxDepth levels with aliases expanded;
//   - a mapping key that is not a scalar, a key << (however quoted or
//     tagged: YAML 1.1 readers take it for a merge key once it is written
//     plain) and a key that a mapping holds twice: Kubernetes objects are
//     JSON, which has none of them, and a reader that takes the last of two
//     keys would disagree with one that takes the first; an anchored key
//     that YAML 1.1 readers would not read as written (writers make it a
//     string, which would change what its aliases stand for).
//
// It returns the number of nodes the tree expands to. The errors are
// *PathError with the field path below n.
//
// The walk costs O(1) per node written: each anchored node is measured once
// and an alias adds its anchor's measure without walking it again. Only
// anchored nodes are remembered, so a tree without anchors allocates
// nothing but what duplicate-key checks of large mappings need.
func Check(n *yaml.Node, maxNodes int) (int, error) {
	c := checker{max: maxNodes}
	if _, err := c.walk(n, 1); err != nil {
		return c.nodes, err.pathError()
	}
	return c.nodes, nil
}

// ErrAliasOutside, ErrAliasCycle, ErrMergeKey, ErrKeyNotString,
// ErrDuplicateKey and ErrAnchoredKey are the structural refusals of Check.
var (
	ErrAliasOutside = errors.New("refers to an anchor outside this object; every object must stand on its own (objects are written separately and in another order), so write the value out")
	ErrAliasCycle   = errors.New("refers to a node that contains it (a cycle)")
	ErrMergeKey     = errors.New("a map key << is refused, however quoted or tagged: YAML 1.1 readers (sigs.k8s.io/yaml as Flux and kubectl use it, kustomize, PyYAML) take it for a merge key, so what is applied would differ from what was validated; rename the key")
	ErrKeyNotString = errors.New("a map key must be a string")
	ErrDuplicateKey = errors.New("is set twice in this map (duplicate key)")
	ErrAnchoredKey  = errors.New("is a map key with a YAML anchor that YAML 1.1 readers (sigs.k8s.io/yaml, as Flux and kubectl use it) would not read as written (a null, a float, a non-decimal number); write the key out as a quoted string, without the anchor")
)

// budgetError is ErrBudget with the limit that was hit and whether aliases
// took the tree there.
type budgetError struct {
	max     int
	aliased bool
}

func (e budgetError) Error() string {
	if !e.aliased {
		return fmt.Sprintf("holds more than %s YAML nodes; no Kubernetes object is that large", Count(e.max))
	}
	return fmt.Sprintf("expands to more than %s YAML nodes with its aliases followed (a YAML alias bomb?)", Count(e.max))
}

func (e budgetError) Is(target error) bool { return target == ErrBudget }

// Count formats a number with thousands separators for messages.
func Count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + Count(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// measure is what an anchored node expands to.
type measure struct {
	nodes, height int
	done          bool
}

type checker struct {
	max, nodes int
	aliased    bool // an alias was followed
	// anchors holds the anchored nodes met so far in document order; a
	// measure that is not done belongs to a node being walked.
	anchors map[*yaml.Node]*measure
}

// checkError carries the path segments of an error from the node where it
// happened up to the root, innermost first, so that no path is built
// unless there is an error.
type checkError struct {
	segments []string
	err      error
}

func (e *checkError) in(segment string) *checkError {
	e.segments = append(e.segments, segment)
	return e
}

func (e *checkError) pathError() *PathError {
	var b strings.Builder
	for i := len(e.segments) - 1; i >= 0; i-- {
		s := e.segments[i]
		if !strings.HasPrefix(s, "[") && b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return &PathError{Path: ClipPath(b.String()), Err: e.err}
}

// keySegment is the path segment of a mapping key: plain when it reads
// unambiguously, in brackets when it holds dots, brackets or spaces (label
// keys such as app.kubernetes.io/name), and quoted when it holds
// characters that would garble a message.
func keySegment(key string) string {
	switch {
	case !printable(key):
		return "[" + strconv.Quote(clip(key)) + "]"
	case strings.ContainsAny(key, ".[] ") || key == "":
		return "[" + clip(key) + "]"
	}
	return clip(key)
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return false
		}
	}
	return true
}

func (c *checker) fail(err error) *checkError { return &checkError{err: err} }

// walk checks n at the given depth (the root is at depth 1) and returns its
// height with aliases expanded.
func (c *checker) walk(n *yaml.Node, depth int) (int, *checkError) {
	if n == nil {
		return 0, nil
	}
	if depth > MaxDepth {
		return 0, c.fail(ErrDepth)
	}
	if n.Kind == yaml.DocumentNode {
		c.nodes++
		if len(n.Content) == 0 {
			return 0, nil
		}
		return c.walk(n.Content[0], depth)
	}
	if n.Kind == yaml.AliasNode {
		m, ok := c.anchors[n.Alias]
		switch {
		case n.Alias == nil || !ok:
			return 0, c.fail(fmt.Errorf("alias *%s %w", clip(n.Value), ErrAliasOutside))
		case !m.done:
			return 0, c.fail(fmt.Errorf("alias *%s %w", clip(n.Value), ErrAliasCycle))
		}
		c.nodes += m.nodes
		c.aliased = true
		if c.nodes > c.max {
			return 0, c.fail(budgetError{c.max, true})
		}
		if depth-1+m.height > MaxDepth {
			return 0, c.fail(ErrDepth)
		}
		return m.height, nil
	}
	c.nodes++
	if c.nodes > c.max {
		return 0, c.fail(budgetError{c.max, c.aliased})
	}
	var own *measure
	start := c.nodes - 1
	if n.Anchor != "" {
		if c.anchors == nil {
			c.anchors = map[*yaml.Node]*measure{}
		}
		own = &measure{}
		c.anchors[n] = own
	}
	height := 0
	switch n.Kind {
	case yaml.SequenceNode:
		for i, child := range n.Content {
			if n.Style&yaml.FlowStyle != 0 {
				spellNull(child)
			}
			h, err := c.walk(child, depth+1)
			if err != nil {
				return 0, err.in("[" + strconv.Itoa(i) + "]")
			}
			height = max(height, h)
		}
	case yaml.MappingNode:
		if len(n.Content)%2 != 0 {
			return 0, c.fail(errors.New("malformed map"))
		}
		if err := checkKeys(n); err != nil {
			return 0, err
		}
		for i := 0; i < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			spellNull(k)
			if n.Style&yaml.FlowStyle != 0 {
				spellNull(v)
			}
			// Keys are nodes too (an anchored key can be aliased). A
			// plain key, the common case, is counted without a call.
			if k.Anchor == "" && k.Style&yaml.TaggedStyle == 0 && k.Tag != TagFloat {
				c.nodes++
			} else if _, err := c.walk(k, depth+1); err != nil {
				return 0, err.in(keySegment(k.Value))
			}
			h, err := c.walk(v, depth+1)
			if err != nil {
				return 0, err.in(keySegment(k.Value))
			}
			height = max(height, h)
		}
	case yaml.ScalarNode:
		// Untagged scalars always read as what go-yaml resolved them to;
		// only an explicit tag can contradict the value, and only floats
		// hold what JSON cannot.
		if n.Style&yaml.TaggedStyle != 0 || n.Tag == TagFloat {
			if err := checkScalar(n); err != nil {
				return 0, c.fail(err)
			}
		}
	default:
		return 0, c.fail(errors.New("unsupported YAML node"))
	}
	height++
	if own != nil {
		*own = measure{nodes: c.nodes - start, height: height, done: true}
	}
	return height, nil
}

// Size returns the number of nodes below n and the bytes of their scalar
// values, counting an alias as one node: what writing n costs.
func Size(n *yaml.Node) (nodes, bytes int) {
	if n == nil {
		return 0, 0
	}
	nodes, bytes = 1, len(n.Value)
	if n.Kind == yaml.AliasNode {
		return nodes, bytes
	}
	for _, c := range n.Content {
		cn, cb := Size(c)
		nodes += cn
		bytes += cb
	}
	return nodes, bytes
}

// spellNull writes an empty null, such as the value of m in {m} or the key
// of `? ` with nothing after it, as null. go-yaml writes an empty scalar in a
// flow collection or as a key as a quoted empty string, which reads back as
// a string: the object would change its meaning on the next run. This is the
// one change Check makes to a tree, and it keeps the meaning.
func spellNull(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Value == "" && n.Tag == TagNull && n.Style&yaml.TaggedStyle == 0 {
		n.Value = "null"
	}
}

// checkScalar refuses a scalar that Kubernetes tools cannot turn into JSON:
// a value its explicit tag does not fit (!!int abc, !!binary that is not
// base64) and floats JSON has no number for (.nan, .inf).
func checkScalar(n *yaml.Node) error {
	if n.Style&yaml.TaggedStyle != 0 && strings.HasPrefix(n.Tag, "!!") {
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("%s %q is not a valid %s", n.Tag, clip(n.Value), n.Tag)
		}
		// sigs.k8s.io/yaml reads !!binary as the string of its bytes, and
		// JSON (what Kubernetes stores) replaces bytes that are not UTF-8:
		// the object applied would not hold the value that was checked.
		if s, ok := v.(string); ok && n.ShortTag() == TagBinary && !utf8.ValidString(s) {
			return fmt.Errorf("!!binary %q stands for bytes that are not UTF-8 text, which a Kubernetes object (JSON) cannot hold; give the base64 text as a plain string instead", clip(n.Value))
		}
	}
	if n.ShortTag() == TagFloat {
		if _, err := scalarValue(n); err != nil {
			return err
		}
	}
	return nil
}

// checkKeys refuses keys that are not scalars, merge keys and duplicates.
// Small maps are compared pairwise, which is cheaper than hashing them.
func checkKeys(m *yaml.Node) *checkError {
	const pairwise = 16
	var seen map[string]struct{}
	if len(m.Content) > 2*pairwise {
		seen = make(map[string]struct{}, len(m.Content)/2)
	}
	for i := 0; i < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Kind != yaml.ScalarNode {
			e := &checkError{err: fmt.Errorf("%w, not %s", ErrKeyNotString, describeKey(k))}
			return e.in("[" + strconv.Itoa(i/2) + "]")
		}
		if isMergeKey(k) {
			return (&checkError{err: ErrMergeKey}).in(keySegment(k.Value))
		}
		if k.Anchor != "" && !yaml11.KeyKeepsText(k.ShortTag(), k.Value) {
			// Writers turn such keys into strings (NormalizedCopy, QuoteForYAML11),
			// which would change what an alias to the anchor stands for.
			return (&checkError{err: ErrAnchoredKey}).in(keySegment(k.Value))
		}
		if seen != nil {
			if _, dup := seen[k.Value]; dup {
				return (&checkError{err: ErrDuplicateKey}).in(keySegment(k.Value))
			}
			seen[k.Value] = struct{}{}
			continue
		}
		for j := 0; j < i; j += 2 {
			if m.Content[j].Value == k.Value {
				return (&checkError{err: ErrDuplicateKey}).in(keySegment(k.Value))
			}
		}
	}
	return nil
}

// isMergeKey reports whether a key scalar is <<, in any style and with any
// tag: go-yaml v3 takes only a plain or !!merge << for a merge key, but
// once the key is copied without its quotes, YAML 1.1 readers take it for
// one too. (Readers take no other key for a merge key, whatever its tag.)
func isMergeKey(k *yaml.Node) bool { return k.Value == "<<" }

func describeKey(k *yaml.Node) string {
	switch k.Kind {
	case yaml.AliasNode:
		return "an alias (*" + clip(k.Value) + ")"
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	}
	return "an unsupported YAML node"
}

// ClipPath shortens a field path for messages: a path through a document
// nested a hundred levels deep is no help to anyone in full.
func ClipPath(path string) string {
	const keep = 120
	if len(path) <= keep {
		return path
	}
	cut := strings.LastIndexAny(path[:keep], ".[")
	if cut <= 0 {
		cut = keep
	}
	return path[:cut] + "..."
}
