package yamlnode

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fromJSONFast builds the tree FromValue builds from the value JSON
// decodes data into, straight from the bytes: no map per object, no
// interface value per scalar, the nodes of a document allocated together.
// Every generated object of a render goes through FromJSON (TypedNode), and
// decoding into Go values first was 0.70 s of the 6.9 s of CPU of a
// 1,000-tenant render.
//
// It reads the JSON that encoding/json writes and reports ok false, having
// built nothing that is used, for anything else it would have to judge
// like the decoder does: invalid JSON, a key set twice in one object,
// nesting deeper than maxJSONDepth, text after the value. FromJSON then
// takes the decoder's path, which reports (or accepts) it as before.
func fromJSONFast(data []byte) (n *yaml.Node, ok bool) {
	p := jsonParser{data: data}
	n, ok = p.value(0)
	if !ok {
		return nil, false
	}
	p.skipSpace()
	if p.i != len(data) {
		return nil, false
	}
	return n, true
}

// maxJSONDepth bounds the nesting fromJSONFast follows; deeper documents
// (never a generated object) go to the decoder, which has limits of its own.
const maxJSONDepth = 100

type jsonParser struct {
	data []byte
	i    int
	// slab is where the next nodes are allocated from, a block at a time.
	slab []yaml.Node
}

func (p *jsonParser) node(kind yaml.Kind, tag, value string) *yaml.Node {
	if len(p.slab) == 0 {
		p.slab = make([]yaml.Node, 64)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	n.Kind, n.Tag, n.Value = kind, tag, value
	return n
}

func (p *jsonParser) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (*yaml.Node, bool) {
	if depth > maxJSONDepth {
		return nil, false
	}
	p.skipSpace()
	if p.i >= len(p.data) {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		s, ok := p.string()
		if !ok {
			return nil, false
		}
		n := p.node(yaml.ScalarNode, TagString, s)
		if Quoted(s) {
			n.Style = yaml.DoubleQuotedStyle
		}
		return n, true
	case c == 't':
		return p.literal("true", TagBool)
	case c == 'f':
		return p.literal("false", TagBool)
	case c == 'n':
		return p.literal("null", TagNull)
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	}
	return nil, false
}

func (p *jsonParser) literal(text, tag string) (*yaml.Node, bool) {
	if !bytes.HasPrefix(p.data[p.i:], []byte(text)) {
		return nil, false
	}
	p.i += len(text)
	return p.node(yaml.ScalarNode, tag, text), true
}

// number reads a JSON number and tags it as FromValue tags a json.Number:
// an integer where strconv.ParseInt takes its text, a float otherwise,
// the text kept as written.
func (p *jsonParser) number() (*yaml.Node, bool) {
	start := p.i
	d := p.data
	if p.i < len(d) && d[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(d) && d[p.i] == '0':
		p.i++
	case p.i < len(d) && '1' <= d[p.i] && d[p.i] <= '9':
		p.digits()
	default:
		return nil, false
	}
	if p.i < len(d) && d[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, false
		}
	}
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		p.i++
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, false
		}
	}
	text := string(d[start:p.i])
	tag := TagFloat
	if _, err := strconv.ParseInt(text, 10, 64); err == nil {
		tag = TagInt
	}
	return p.node(yaml.ScalarNode, tag, text), true
}

// digits skips a run of decimal digits and reports whether there was one.
func (p *jsonParser) digits() bool {
	start := p.i
	for p.i < len(p.data) && '0' <= p.data[p.i] && p.data[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// string reads a JSON string. One without escapes, control characters or
// invalid UTF-8 is its bytes; any other is unquoted by encoding/json, so
// that escapes and invalid bytes come out as the decoder makes them.
func (p *jsonParser) string() (string, bool) {
	start := p.i
	p.i++ // the opening quote
	plain := true
	for p.i < len(p.data) {
		switch c := p.data[p.i]; {
		case c == '"':
			p.i++
			raw := p.data[start+1 : p.i-1]
			if plain && utf8.Valid(raw) {
				return string(raw), true
			}
			var s string
			if err := json.Unmarshal(p.data[start:p.i], &s); err != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			plain = false
			p.i += 2
		case c < 0x20:
			return "", false
		default:
			p.i++
		}
	}
	return "", false
}

func (p *jsonParser) object(depth int) (*yaml.Node, bool) {
	p.i++ // {
	m := p.node(yaml.MappingNode, TagMap, "")
	type pair struct {
		key   string
		value *yaml.Node
	}
	var pairs []pair
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		m.Content = []*yaml.Node{}
		return m, true
	}
	for {
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, false
		}
		key, ok := p.string()
		if !ok {
			return nil, false
		}
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		pairs = append(pairs, pair{key, v})
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, false
		}
		if p.data[p.i] == ',' {
			p.i++
			continue
		}
		if p.data[p.i] != '}' {
			return nil, false
		}
		p.i++
		break
	}
	slices.SortFunc(pairs, func(a, b pair) int { return cmp.Compare(a.key, b.key) })
	m.Content = make([]*yaml.Node, 0, 2*len(pairs))
	for i, kv := range pairs {
		if i > 0 && pairs[i-1].key == kv.key {
			return nil, false // the decoder keeps the last one
		}
		k := p.node(yaml.ScalarNode, TagString, kv.key)
		if Quoted(kv.key) {
			k.Style = yaml.DoubleQuotedStyle
		}
		m.Content = append(m.Content, k, kv.value)
	}
	return m, true
}

func (p *jsonParser) array(depth int) (*yaml.Node, bool) {
	p.i++ // [
	s := p.node(yaml.SequenceNode, TagSeq, "")
	s.Content = []*yaml.Node{}
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return s, true
	}
	for {
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		s.Content = append(s.Content, v)
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, false
		}
		if p.data[p.i] == ',' {
			p.i++
			continue
		}
		if p.data[p.i] != ']' {
			return nil, false
		}
		p.i++
		return s, true
	}
}
