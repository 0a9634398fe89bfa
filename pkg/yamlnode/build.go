package yamlnode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/yaml11"
)

// String returns a string scalar. The encoder quotes it where YAML would
// otherwise read it as another type ("true", "5", "null"); where only a YAML
// 1.1 reader would ("yes", "NO", "on", "1:20", "<<"), the node carries the
// double-quoted style, so that every encoder quotes it (see Quoted).
func String(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: TagString, Value: s}
	if yaml11.Misread(s) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// Quoted reports whether a string scalar must be written double-quoted so
// that YAML 1.1 readers read it as the string it is: sigs.k8s.io/yaml,
// which Flux, kubectl and Helm read manifests with, takes "yes", "NO", "on"
// and the like for booleans and a plain "<<" key for a merge key, and other
// YAML 1.1 readers take "1:20" for a number, while go-yaml v3 writes all of
// them plain. Every string node this package builds or copies carries the
// style when Quoted says so.
func Quoted(s string) bool { return yaml11.Misread(s) }

// QuoteMergeKeys marks every scalar << below n that would be written plain
// as double-quoted, in place: the library's encoder writes a string << plain,
// which YAML 1.1 readers read as a merge key. Inputs holding a << key are
// refused (Check), and the nodes this package builds mark it already; this
// is the writers' last line of defence. Aliases are not followed (their
// anchors are walked where they stand).
func QuoteMergeKeys(n *yaml.Node) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Value == "<<" && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle|yaml.TaggedStyle) == 0 {
			n.Style = yaml.DoubleQuotedStyle
		}
	case yaml.DocumentNode, yaml.MappingNode, yaml.SequenceNode:
		for _, c := range n.Content {
			QuoteMergeKeys(c)
		}
	}
}

// QuoteForYAML11 changes, in place, what YAML 1.1 readers would read
// otherwise in a tree that is written as it was read (an input kept with
// keepInputs), so that they read what ToValue reads: plain strings they take
// for booleans or numbers are marked double-quoted (see Quoted), and keys
// that sigs.k8s.io/yaml would not read as their text become strings (ToValue
// takes a key's text, while sigs.k8s.io/yaml turns a key 1.0 into "1").
// Comments, anchors and other styles are kept, and aliases are not
// followed. An anchored key of that kind is left as it is (an alias
// elsewhere may stand for it as a value); Check refuses it in inputs.
func QuoteForYAML11(n *yaml.Node) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Style&^yaml.FlowStyle == 0 && n.ShortTag() == TagString && yaml11.Misread(n.Value) {
			n.Style = yaml.DoubleQuotedStyle
		}
	case yaml.MappingNode:
		for i, c := range n.Content {
			if i%2 == 0 && c.Kind == yaml.ScalarNode && c.Anchor == "" && !yaml11.KeyKeepsText(c.ShortTag(), c.Value) {
				c.Tag, c.Style = TagString, c.Style&^yaml.TaggedStyle
			}
			QuoteForYAML11(c)
		}
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			QuoteForYAML11(c)
		}
	}
}

// Int returns an integer scalar.
func Int(i int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: TagInt, Value: strconv.FormatInt(i, 10)}
}

// Bool returns a boolean scalar.
func Bool(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: TagBool, Value: strconv.FormatBool(b)}
}

// Map returns a mapping node of the given key, value pairs in that order.
func Map(pairs ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: TagMap}
	for i := 0; i+1 < len(pairs); i += 2 {
		SetKey(m, pairs[i].(string), pairs[i+1].(*yaml.Node))
	}
	return m
}

// SetKey sets key in mapping m to v, replacing an existing value in place or
// appending the key at the end.
func SetKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, String(key), v)
}

// DeleteKey removes key from mapping m, if present.
func DeleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

// StringMap returns a mapping of string values with the keys sorted.
func StringMap(m map[string]string) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: TagMap, Content: make([]*yaml.Node, 0, 2*len(m))}
	for _, k := range sortedKeys(m) {
		out.Content = append(out.Content, String(k), String(m[k]))
	}
	return out
}

// sortedKeys returns the keys of m in sorted order, the order of every
// mapping this package builds.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// FromValue builds a node tree from JSON-like Go values, with map keys in
// sorted order so that the output is stable. Unsupported types are an error.
func FromValue(v any) (*yaml.Node, error) {
	switch v := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: TagNull, Value: "null"}, nil
	case string:
		return String(v), nil
	case bool:
		return Bool(v), nil
	case int:
		return Int(int64(v)), nil
	case int64:
		return Int(v), nil
	case uint64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: TagInt, Value: strconv.FormatUint(v, 10)}, nil
	case float64:
		if v == float64(int64(v)) && v >= -1e15 && v <= 1e15 {
			return Int(int64(v)), nil
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: TagFloat, Value: strconv.FormatFloat(v, 'g', -1, 64)}, nil
	case json.Number:
		if _, err := v.Int64(); err == nil {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: TagInt, Value: v.String()}, nil
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: TagFloat, Value: v.String()}, nil
	case map[string]any:
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: TagMap, Content: make([]*yaml.Node, 0, 2*len(v))}
		for _, k := range sortedKeys(v) {
			child, err := FromValue(v[k])
			if err != nil {
				return nil, err
			}
			m.Content = append(m.Content, String(k), child)
		}
		return m, nil
	case []any:
		s := &yaml.Node{Kind: yaml.SequenceNode, Tag: TagSeq, Content: make([]*yaml.Node, 0, len(v))}
		for _, item := range v {
			child, err := FromValue(item)
			if err != nil {
				return nil, err
			}
			s.Content = append(s.Content, child)
		}
		return s, nil
	}
	return nil, fmt.Errorf("cannot represent a %T in YAML", v)
}

// FromJSON builds a node tree from JSON, with the keys of every object in
// sorted order: the order kustomize, kubectl and the API server write, so
// that every way of running the function prints the same bytes.
func FromJSON(data []byte) (*yaml.Node, error) {
	if n, ok := fromJSONFast(data); ok {
		return n, nil
	}
	return fromJSONDecoded(data)
}

// fromJSONDecoded is FromJSON through encoding/json's decoder and
// FromValue: what fromJSONFast builds, for all JSON.
func fromJSONDecoded(data []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("failed to convert JSON to YAML: %w", err)
	}
	return FromValue(v)
}

// Clone returns a deep copy of a tree this package built, keeping every
// field; unlike NormalizedCopy it neither checks nor normalises.
func Clone(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, child := range n.Content {
			c.Content[i] = Clone(child)
		}
	}
	return &c
}

// NormalizedCopy returns a deep copy of n with aliases expanded, mapping keys sorted
// (as kustomize and the API server write them) and comments, anchors and
// styles other than literal blocks dropped, so that values copied from an
// input never carry the input's presentation into generated objects. A key
// set twice in one mapping and a key << (however quoted or tagged) are
// errors. It visits at most budget nodes and nests at most MaxDepth levels.
//
// The copy means what ToValue reads in n, to YAML 1.1 readers too: a
// mapping key that sigs.k8s.io/yaml would not read as its text (`1.0:`,
// `0x10:` become "1" and "16"; ToValue takes a key's text) becomes a string
// key, and strings that YAML 1.1 readers read otherwise are marked
// double-quoted.
func NormalizedCopy(n *yaml.Node, budget int) (*yaml.Node, error) {
	c := copier{walk{budget}}
	return c.copy(n, 0, "")
}

type copier struct{ walk }

func (c *copier) copy(n *yaml.Node, depth int, path string) (*yaml.Node, error) {
	n, depth, err := c.enter(n, depth, path)
	if err != nil || n == nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.DocumentNode: // an empty one
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: TagNull, Value: "null"}, nil
	case yaml.MappingNode, yaml.SequenceNode:
		out := &yaml.Node{Kind: n.Kind, Tag: n.ShortTag(), Content: make([]*yaml.Node, 0, len(n.Content))}
		for i, child := range n.Content {
			p := path
			if n.Kind == yaml.MappingNode {
				if i%2 == 1 {
					p = joinPath(path, n.Content[i-1].Value)
				} else if k := Resolve(child); k == nil || k.Kind != yaml.ScalarNode {
					return nil, &PathError{Path: path, Err: errors.New("a map key must be a string")}
				} else if isMergeKey(k) {
					return nil, &PathError{Path: joinPath(path, k.Value), Err: ErrMergeKey}
				} else {
					key, err := c.copy(child, depth+1, p)
					if err != nil {
						return nil, err
					}
					if !yaml11.KeyKeepsText(key.Tag, key.Value) {
						key.Tag = TagString
						if key.Style == 0 && yaml11.Misread(key.Value) {
							key.Style = yaml.DoubleQuotedStyle
						}
					}
					out.Content = append(out.Content, key)
					continue
				}
			} else {
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			cc, err := c.copy(child, depth+1, p)
			if err != nil {
				return nil, err
			}
			out.Content = append(out.Content, cc)
		}
		if n.Kind == yaml.MappingNode {
			if err := sortMapping(out, path); err != nil {
				return nil, err
			}
		}
		return out, nil
	case yaml.ScalarNode:
		tag := n.ShortTag()
		out := &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: n.Value}
		switch {
		case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			out.Style = yaml.LiteralStyle
		case tag == TagString && yaml11.Misread(n.Value):
			out.Style = yaml.DoubleQuotedStyle
		}
		return out, nil
	}
	return nil, &PathError{Path: path, Err: errors.New("unsupported YAML node")}
}

// sortMapping orders the key, value pairs of a mapping by key and refuses a
// key set twice.
func sortMapping(m *yaml.Node, path string) error {
	pairs := len(m.Content) / 2
	idx := make([]int, pairs)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return m.Content[2*idx[a]].Value < m.Content[2*idx[b]].Value })
	sorted := make([]*yaml.Node, 0, len(m.Content))
	for i, j := range idx {
		if i > 0 && m.Content[2*j].Value == sorted[len(sorted)-2].Value {
			return &PathError{Path: joinPath(path, m.Content[2*j].Value), Err: errors.New("key is set twice in one mapping")}
		}
		sorted = append(sorted, m.Content[2*j], m.Content[2*j+1])
	}
	m.Content = sorted
	return nil
}
