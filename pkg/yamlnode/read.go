package yamlnode

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Scalar tags as reported by yaml.Node.ShortTag.
const (
	TagString = "!!str"
	TagInt    = "!!int"
	TagFloat  = "!!float"
	TagBool   = "!!bool"
	TagNull   = "!!null"
	TagMap    = "!!map"
	TagSeq    = "!!seq"
	TagBinary = "!!binary"
)

// MaxDepth is how deep a document may nest before it is refused, counting
// levels with aliases expanded. Helm values and OpenAPI schemas nest a few
// dozen levels at most; go-yaml itself stops at 10,000.
const MaxDepth = 100

// DefaultBudget is the number of nodes one conversion may visit. Aliases are
// visited each time they are referenced, so this bounds alias bombs.
const DefaultBudget = 10_000_000

// ErrBudget is returned when a walk visits more nodes than its budget,
// which happens with alias bombs.
var ErrBudget = errors.New("expands to too many YAML nodes with its aliases followed (a YAML alias bomb?)")

// ErrDepth is returned when a document nests deeper than MaxDepth, counting
// levels with aliases expanded.
var ErrDepth = fmt.Errorf("nests deeper than %d levels", MaxDepth)

// Resolve follows aliases and unwraps document nodes. It returns nil for nil.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && i < MaxDepth; i++ {
		switch n.Kind {
		case yaml.AliasNode:
			n = n.Alias
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		default:
			return n
		}
	}
	return n
}

// IsNull reports whether n is absent or an explicit null.
func IsNull(n *yaml.Node) bool {
	n = Resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == TagNull)
}

// Get returns the value of key in mapping m, or nil when m is not a mapping
// or has no such key. With duplicate keys, the last one wins, as in YAML
// loaders that accept them.
func Get(m *yaml.Node, key string) *yaml.Node {
	m = Resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var found *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := Resolve(m.Content[i]); k != nil && k.Kind == yaml.ScalarNode && k.Value == key {
			found = m.Content[i+1]
		}
	}
	return Resolve(found)
}

// Lookup follows a path of mapping keys from m.
func Lookup(m *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		m = Get(m, key)
		if m == nil {
			return nil
		}
	}
	return m
}

// Describe names the YAML type of a node for error messages.
func Describe(n *yaml.Node) string {
	n = Resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case TagString:
			return fmt.Sprintf("the string %q", clip(n.Value))
		case TagInt, TagFloat:
			return "the number " + clip(n.Value)
		case TagBool:
			return "the boolean " + n.Value
		case TagNull:
			return "null"
		default:
			return fmt.Sprintf("%s %q", n.ShortTag(), clip(n.Value))
		}
	}
	return "an unsupported YAML node"
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// ToValue converts a node tree into JSON-like Go values: map[string]any,
// []any, string, bool, int64 (uint64 beyond its range), float64 and nil.
// Mapping keys must be strings. It visits at most budget nodes and nests at
// most MaxDepth levels.
func ToValue(n *yaml.Node, budget int) (any, error) {
	c := converter{walk{budget}}
	return c.value(n, 0, "")
}

type converter struct{ walk }

// CopyValue returns a deep copy of a JSON-like value as ToValue returns it:
// its maps and lists are new, so the copy can be changed (merged into,
// pruned) without changing v; the scalars are shared.
func CopyValue[V any](v V) V {
	c, _ := copyValue(v).(V) // nil for a nil interface
	return c
}

func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}

// PathError is a conversion error with the field path, relative to the node
// converted, where it happened.
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *PathError) Unwrap() error { return e.Err }

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// walk holds the limits that every conversion of this package keeps: the
// nodes it may still visit, and MaxDepth.
type walk struct{ budget int }

// enter counts n, found at depth and path, against the walk's limits, and
// passes through the nodes that only stand for another: a document for its
// content, one level deeper, and an alias for its anchor's node, at the same
// level, each counted as a node of its own. It returns the node to convert
// and its depth: nil for nil, or an empty document.
func (w *walk) enter(n *yaml.Node, depth int, path string) (*yaml.Node, int, error) {
	for {
		w.budget--
		if w.budget < 0 {
			return nil, depth, &PathError{Path: path, Err: ErrBudget}
		}
		if depth > MaxDepth {
			return nil, depth, &PathError{Path: path, Err: ErrDepth}
		}
		switch {
		case n == nil || n.Kind == yaml.DocumentNode && len(n.Content) == 0:
			return n, depth, nil
		case n.Kind == yaml.DocumentNode:
			n, depth = n.Content[0], depth+1
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		default:
			return n, depth, nil
		}
	}
}

func (c *converter) value(n *yaml.Node, depth int, path string) (any, error) {
	n, depth, err := c.enter(n, depth, path)
	if err != nil || n == nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.DocumentNode: // an empty one
		return nil, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := Resolve(n.Content[i])
			if k == nil || k.Kind != yaml.ScalarNode {
				return nil, &PathError{Path: path, Err: errors.New("a map key must be a string")}
			}
			if isMergeKey(k) {
				return nil, &PathError{Path: joinPath(path, k.Value), Err: ErrMergeKey}
			}
			v, err := c.value(n.Content[i+1], depth+1, joinPath(path, k.Value))
			if err != nil {
				return nil, err
			}
			out[k.Value] = v
		}
		return out, nil
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			v, err := c.value(item, depth+1, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.ScalarNode:
		return scalarValue(n)
	}
	return nil, &PathError{Path: path, Err: errors.New("unsupported YAML node")}
}

// scalarValue converts a scalar following YAML 1.2 core schema resolution, the
// way sigs.k8s.io/yaml would see it.
func scalarValue(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case TagNull:
		return nil, nil
	case TagBool:
		return decodeScalar[bool](n, "boolean")
	case TagInt:
		// Beyond int64, as sigs.k8s.io/yaml reads it: exact up to uint64, a
		// float beyond.
		if i, err := decodeScalar[int64](n, "number"); err == nil {
			return i, nil
		}
		if u, err := decodeScalar[uint64](n, "number"); err == nil {
			return u, nil
		}
		return decodeScalar[float64](n, "number")
	case TagFloat:
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("invalid number %q", clip(n.Value))
			}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("the number %q cannot be represented in JSON", clip(n.Value))
		}
		return f, nil
	case TagBinary:
		// The bytes it stands for, as sigs.k8s.io/yaml reads it (Check
		// refused what is no base64).
		return decodeScalar[string](n, "!!binary")
	default:
		return n.Value, nil
	}
}

// decodeScalar decodes n with go-yaml into a T; what names the type in the
// error, which quotes the scalar.
func decodeScalar[T any](n *yaml.Node, what string) (any, error) {
	var v T
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid %s %q", what, clip(n.Value))
	}
	return v, nil
}
