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
	c := converter{budget: budget}
	return c.value(n, 0, "")
}

type converter struct {
	budget int
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

// visit counts one node at depth against a walk's budget: the limits every
// walk of this package keeps, reported with the path where they were hit.
func visit(budget *int, depth int, path string) error {
	*budget--
	if *budget < 0 {
		return &PathError{Path: path, Err: ErrBudget}
	}
	if depth > MaxDepth {
		return &PathError{Path: path, Err: ErrDepth}
	}
	return nil
}

func (c *converter) value(n *yaml.Node, depth int, path string) (any, error) {
	if err := visit(&c.budget, depth, path); err != nil {
		return nil, err
	}
	if n == nil {
		return nil, nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], depth+1, path)
	case yaml.AliasNode:
		// An alias stands for its anchor's node at the same level.
		return c.value(n.Alias, depth, path)
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
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("invalid boolean %q", clip(n.Value))
		}
		return b, nil
	case TagInt:
		var i int64
		if err := n.Decode(&i); err != nil {
			// Beyond int64, as sigs.k8s.io/yaml reads it: exact up to
			// uint64, a float beyond.
			var u uint64
			if err := n.Decode(&u); err == nil {
				return u, nil
			}
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("invalid number %q", clip(n.Value))
			}
			return f, nil
		}
		return i, nil
	case TagFloat:
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			var g float64
			if err := n.Decode(&g); err != nil {
				return nil, fmt.Errorf("invalid number %q", clip(n.Value))
			}
			f = g
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("the number %q cannot be represented in JSON", clip(n.Value))
		}
		return f, nil
	case TagBinary:
		// The bytes it stands for, as sigs.k8s.io/yaml reads it (Check
		// refused what is no base64).
		var s string
		if err := n.Decode(&s); err != nil {
			return nil, fmt.Errorf("invalid !!binary %q", clip(n.Value))
		}
		return s, nil
	default:
		return n.Value, nil
	}
}
