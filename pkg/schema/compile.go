package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/yaml"
)

// node is one compiled schema object. The structure keywords are compiled
// into fields so that the walk can compute exact paths; the value keywords
// are left to kube-openapi in validator.
type node struct {
	ptr string // JSON pointer of the schema object, for errors

	validator *validate.SchemaValidator // value keywords only; nil when none

	props          map[string]*node
	patterns       []pattern
	additional     *node // additionalProperties as a schema, or {} for true
	noAdditional   bool  // additionalProperties: false
	items          *node
	tuple          []*node
	additionalItem *node
	noAdditionalIt bool

	allOf, anyOf, oneOf []*node
	not                 *node

	objectish       bool // declares the shape of an object
	nullable        bool
	hasDefault      bool
	defaultValue    any
	enum            []string // canonical JSON of each allowed value
	enumText        string
	intOrString     bool
	preserveUnknown bool
	embedded        bool
	listType        string
	listMapKeys     []string
	rules           []Rule // Path left empty
}

type pattern struct {
	re   *regexp.Regexp
	node *node
}

// Compile compiles a schema from its JSON or YAML text. The schema may be an
// openAPIV3Schema of a CustomResourceDefinition or a JSON Schema such as a
// Helm chart's values.schema.json. It returns an error, never a panic, for a
// schema that is not an object, has keywords of the wrong shape, an unknown
// type, a pattern that Go's regexp cannot compile, a $ref that does not
// resolve, or a $ref cycle that does not pass through a property or item.
//
// The returned Schema reports unknown fields; see [Schema.AllowUnknown].
func Compile(raw []byte) (*Schema, error) {
	j, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("failed to parse schema: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("failed to parse schema: %w", err)
	}
	return CompileValue(doc)
}

// CompileValue compiles a schema that is already decoded, such as the
// openAPIV3Schema field of a CustomResourceDefinition read as
// map[string]any. Like [Schema.Validate], it converts other Go values (for
// example apiextensions' JSONSchemaProps or kube-openapi's spec.Schema)
// through encoding/json. A []byte is compiled with [Compile].
func CompileValue(v any) (s *Schema, err error) {
	if raw, ok := v.([]byte); ok {
		return Compile(raw)
	}
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("failed to compile schema: internal error: %v", r)
		}
	}()
	doc, bad := normalize(v, "", 0)
	if bad != nil {
		return nil, fmt.Errorf("failed to compile schema: %s", bad)
	}
	root, isObject := doc.(map[string]any)
	if _, isBool := doc.(bool); !isObject && !isBool {
		return nil, fmt.Errorf("failed to compile schema: must be an object, not %s", jsonType(doc))
	}
	c := &compiler{doc: root, refs: map[string]*node{}}
	n, err := c.compileAny(doc, "#")
	if err != nil {
		return nil, fmt.Errorf("failed to compile schema: %w", err)
	}
	if err := checkCycles(n); err != nil {
		return nil, fmt.Errorf("failed to compile schema: %w", err)
	}
	return &Schema{root: n}, nil
}

type compiler struct {
	doc  map[string]any
	refs map[string]*node
}

// valueKeywords are handed to kube-openapi unchanged; everything it would
// walk into itself is compiled here instead.
var valueKeywords = []string{
	"type", "format", "nullable", "required",
	"maxLength", "minLength", "pattern",
	"maximum", "minimum", "exclusiveMaximum", "exclusiveMinimum", "multipleOf",
	"maxItems", "minItems", "uniqueItems",
	"maxProperties", "minProperties",
}

var knownTypes = []string{"object", "array", "string", "integer", "number", "boolean", "null"}

// compileAny compiles a schema, which JSON Schema also allows to be a bare
// boolean: true accepts everything and false nothing.
func (c *compiler) compileAny(v any, ptr string) (*node, error) {
	switch x := v.(type) {
	case map[string]any:
		return c.compile(x, ptr)
	case bool:
		if x {
			return &node{ptr: ptr}, nil
		}
		return &node{ptr: ptr, not: &node{ptr: ptr}}, nil
	}
	return nil, fmt.Errorf("%s: a schema must be an object or a boolean, not %s", ptr, jsonType(v))
}

func (c *compiler) compile(m map[string]any, ptr string) (*node, error) {
	n := &node{ptr: ptr}
	if err := c.compileStructure(n, m); err != nil {
		return nil, err
	}
	if err := compileValues(n, m); err != nil {
		return nil, err
	}
	if err := compileExtensions(n, m); err != nil {
		return nil, err
	}
	return n, nil
}

func (c *compiler) compileStructure(n *node, m map[string]any) error {
	ptr := n.ptr
	if ref, ok := m["$ref"]; ok {
		s, ok := ref.(string)
		if !ok {
			return fmt.Errorf("%s/$ref: must be a string", ptr)
		}
		target, err := c.resolve(s, ptr)
		if err != nil {
			return err
		}
		// Keywords beside $ref apply too, as in JSON Schema 2019-09; in
		// older drafts they are usually only descriptions.
		n.allOf = append(n.allOf, target)
	}
	if v, ok := m["properties"]; ok {
		props, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s/properties: must be an object, not %s", ptr, jsonType(v))
		}
		n.props = make(map[string]*node, len(props))
		for k, p := range props {
			child, err := c.compileAny(p, ptr+"/properties/"+escapePointer(k))
			if err != nil {
				return err
			}
			n.props[k] = child
		}
		n.objectish = true
	}
	if v, ok := m["patternProperties"]; ok {
		pats, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s/patternProperties: must be an object, not %s", ptr, jsonType(v))
		}
		keys := make([]string, 0, len(pats))
		for k := range pats {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			re, err := regexp.Compile(k)
			if err != nil {
				return fmt.Errorf("%s/patternProperties: invalid pattern %q: %w", ptr, k, err)
			}
			child, err := c.compileAny(pats[k], ptr+"/patternProperties/"+escapePointer(k))
			if err != nil {
				return err
			}
			n.patterns = append(n.patterns, pattern{re: re, node: child})
		}
		n.objectish = true
	}
	if v, ok := m["additionalProperties"]; ok {
		switch x := v.(type) {
		case bool:
			if x {
				n.additional = &node{ptr: ptr + "/additionalProperties"}
			} else {
				n.noAdditional = true
			}
		default:
			child, err := c.compileAny(v, ptr+"/additionalProperties")
			if err != nil {
				return err
			}
			n.additional = child
		}
		n.objectish = true
	}
	if v, ok := m["items"]; ok {
		switch x := v.(type) {
		case []any:
			for i, it := range x {
				child, err := c.compileAny(it, fmt.Sprintf("%s/items/%d", ptr, i))
				if err != nil {
					return err
				}
				n.tuple = append(n.tuple, child)
			}
		default:
			child, err := c.compileAny(v, ptr+"/items")
			if err != nil {
				return err
			}
			n.items = child
		}
	}
	if v, ok := m["additionalItems"]; ok {
		switch x := v.(type) {
		case bool:
			n.noAdditionalIt = !x
		default:
			child, err := c.compileAny(v, ptr+"/additionalItems")
			if err != nil {
				return err
			}
			n.additionalItem = child
		}
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		v, ok := m[kw]
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s/%s: must be an array, not %s", ptr, kw, jsonType(v))
		}
		var nodes []*node
		for i, b := range list {
			child, err := c.compileAny(b, fmt.Sprintf("%s/%s/%d", ptr, kw, i))
			if err != nil {
				return err
			}
			nodes = append(nodes, child)
		}
		switch kw {
		case "allOf":
			n.allOf = append(n.allOf, nodes...)
		case "anyOf":
			n.anyOf = nodes
		case "oneOf":
			n.oneOf = nodes
		}
	}
	if v, ok := m["not"]; ok {
		child, err := c.compileAny(v, ptr+"/not")
		if err != nil {
			return err
		}
		n.not = child
	}
	return nil
}

// compileValues builds the kube-openapi validator for the value keywords of
// m, and the enum, which is compared here on canonical JSON so that 3 and
// 3.0 are equal and an integer never matches a string.
func compileValues(n *node, m map[string]any) error {
	ptr := n.ptr
	shallow := map[string]any{}
	for _, kw := range valueKeywords {
		if v, ok := m[kw]; ok {
			shallow[kw] = v
		}
	}
	types, err := typeList(shallow["type"])
	if err != nil {
		return fmt.Errorf("%s/type: %w", ptr, err)
	}
	if slices.Contains(types, "object") {
		n.objectish = true
	}
	n.nullable = m["nullable"] == true || slices.Contains(types, "null")
	if b, _ := m["x-kubernetes-int-or-string"].(bool); b && len(types) == 0 {
		shallow["type"] = []any{"integer", "string"}
	}
	// Draft 6 and later write exclusive bounds as numbers; OpenAPI v3.0
	// (and kube-openapi) as booleans beside maximum and minimum.
	for _, b := range [][2]string{{"exclusiveMaximum", "maximum"}, {"exclusiveMinimum", "minimum"}} {
		if v, ok := shallow[b[0]]; ok {
			if _, isBool := v.(bool); !isBool {
				if _, has := shallow[b[1]]; has {
					return fmt.Errorf("%s/%s: a number cannot be combined with %s", ptr, b[0], b[1])
				}
				shallow[b[1]] = v
				shallow[b[0]] = true
			}
		}
	}
	if p, ok := shallow["pattern"]; ok {
		s, ok := p.(string)
		if !ok {
			return fmt.Errorf("%s/pattern: must be a string", ptr)
		}
		if _, err := regexp.Compile(s); err != nil {
			return fmt.Errorf("%s/pattern: invalid pattern %q: %w", ptr, s, err)
		}
	}
	if v, ok := shallow["multipleOf"]; ok {
		if f, isNum := toFloat(v); !isNum || f <= 0 {
			return fmt.Errorf("%s/multipleOf: must be a number greater than 0", ptr)
		}
	}
	if v, ok := m["default"]; ok {
		n.hasDefault, n.defaultValue = true, v
	}
	if v, ok := m["enum"]; ok {
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s/enum: must be an array, not %s", ptr, jsonType(v))
		}
		n.setEnum(list)
	}
	if v, ok := m["const"]; ok {
		n.setEnum([]any{v})
	}
	if len(shallow) == 0 {
		return nil
	}
	b, err := json.Marshal(shallow)
	if err != nil {
		return fmt.Errorf("%s: %w", ptr, err)
	}
	var s spec.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s: %w", ptr, err)
	}
	n.validator = validate.NewSchemaValidator(&s, nil, "", strfmt.Default)
	return nil
}

func (n *node) setEnum(list []any) {
	if len(list) == 0 {
		return
	}
	texts := make([]string, len(list))
	for i, e := range list {
		texts[i] = canonical(e)
	}
	n.enum = texts
	n.enumText = strings.Join(texts, ", ")
}

func compileExtensions(n *node, m map[string]any) error {
	ptr := n.ptr
	for _, ext := range []struct {
		key string
		dst *bool
	}{
		{"x-kubernetes-int-or-string", &n.intOrString},
		{"x-kubernetes-preserve-unknown-fields", &n.preserveUnknown},
		{"x-kubernetes-embedded-resource", &n.embedded},
	} {
		if v, ok := m[ext.key]; ok {
			b, ok := v.(bool)
			if !ok {
				return fmt.Errorf("%s/%s: must be a boolean, not %s", ptr, ext.key, jsonType(v))
			}
			*ext.dst = b
		}
	}
	if n.embedded {
		n.objectish = true
	}
	if v, ok := m["x-kubernetes-list-type"]; ok {
		s, ok := v.(string)
		if !ok || !slices.Contains([]string{"atomic", "set", "map"}, s) {
			return fmt.Errorf("%s/x-kubernetes-list-type: must be atomic, set or map", ptr)
		}
		n.listType = s
	}
	if v, ok := m["x-kubernetes-list-map-keys"]; ok {
		keys, err := stringList(v)
		if err != nil {
			return fmt.Errorf("%s/x-kubernetes-list-map-keys: %w", ptr, err)
		}
		n.listMapKeys = keys
	}
	if v, ok := m["x-kubernetes-validations"]; ok {
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s/x-kubernetes-validations: must be an array, not %s", ptr, jsonType(v))
		}
		for i, e := range list {
			r, ok := e.(map[string]any)
			rule, _ := r["rule"].(string)
			if !ok || rule == "" {
				return fmt.Errorf("%s/x-kubernetes-validations/%d: must be an object with a rule", ptr, i)
			}
			msg, _ := r["message"].(string)
			if msg == "" {
				msg, _ = r["messageExpression"].(string)
			}
			n.rules = append(n.rules, Rule{Rule: rule, Message: msg})
		}
	}
	return nil
}

// resolve compiles the schema a local $ref points to, once per target, so
// that recursive schemas compile to a cyclic graph of nodes.
func (c *compiler) resolve(ref, from string) (*node, error) {
	if n, ok := c.refs[ref]; ok {
		return n, nil
	}
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("%s/$ref: %q: only local references (#/...) are supported", from, ref)
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil, fmt.Errorf("%s/$ref: %q: %w", from, ref, err)
	}
	var target any = c.doc
	if frag != "" {
		if !strings.HasPrefix(frag, "/") {
			return nil, fmt.Errorf("%s/$ref: %q: only JSON pointers are supported", from, ref)
		}
		for _, tok := range strings.Split(frag[1:], "/") {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			switch t := target.(type) {
			case map[string]any:
				next, ok := t[tok]
				if !ok {
					return nil, fmt.Errorf("%s/$ref: %q does not resolve", from, ref)
				}
				target = next
			case []any:
				i, err := indexToken(tok, len(t))
				if err != nil {
					return nil, fmt.Errorf("%s/$ref: %q does not resolve: %w", from, ref, err)
				}
				target = t[i]
			default:
				return nil, fmt.Errorf("%s/$ref: %q does not resolve", from, ref)
			}
		}
	}
	// Register the node before compiling it, so that a reference back to
	// it from inside finds it instead of recursing.
	n := &node{ptr: ref}
	c.refs[ref] = n
	var compiled *node
	switch t := target.(type) {
	case map[string]any:
		compiled, err = c.compile(t, ref)
	default:
		compiled, err = c.compileAny(t, ref)
	}
	if err != nil {
		return nil, err
	}
	*n = *compiled
	return n, nil
}

func indexToken(tok string, n int) (int, error) {
	i := 0
	if tok == "" {
		return 0, errors.New("empty array index")
	}
	for _, r := range tok {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("invalid array index %q", tok)
		}
		i = i*10 + int(r-'0')
		if i >= n {
			return 0, fmt.Errorf("array index %q out of range", tok)
		}
	}
	return i, nil
}

// checkCycles rejects a schema that applies itself to the same value again
// through allOf, anyOf, oneOf, not or $ref without first descending into a
// property or an item: validating with it would never end.
func checkCycles(root *node) error {
	var all []*node
	seen := map[*node]bool{root: true}
	for queue := []*node{root}; len(queue) > 0; queue = queue[1:] {
		n := queue[0]
		all = append(all, n)
		for _, next := range slices.Concat(n.sameValue(), n.children()) {
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	const (
		visiting = 1
		done     = 2
	)
	state := make(map[*node]int, len(all))
	var visit func(n *node) error
	visit = func(n *node) error {
		switch state[n] {
		case visiting:
			return fmt.Errorf("%s: schema refers to itself without descending into a property or item", n.ptr)
		case done:
			return nil
		}
		state[n] = visiting
		for _, next := range n.sameValue() {
			if err := visit(next); err != nil {
				return err
			}
		}
		state[n] = done
		return nil
	}
	for _, n := range all {
		if err := visit(n); err != nil {
			return err
		}
	}
	return nil
}

// sameValue returns the schemas that apply to the same value as n.
func (n *node) sameValue() []*node {
	out := slices.Concat(n.allOf, n.anyOf, n.oneOf)
	if n.not != nil {
		out = append(out, n.not)
	}
	return out
}

// children returns the schemas that apply to values nested in n's value.
func (n *node) children() []*node {
	var out []*node
	keys := make([]string, 0, len(n.props))
	for k := range n.props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, n.props[k])
	}
	for _, p := range n.patterns {
		out = append(out, p.node)
	}
	for _, c := range []*node{n.additional, n.items, n.additionalItem} {
		if c != nil {
			out = append(out, c)
		}
	}
	return append(out, n.tuple...)
}

func typeList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	types, err := stringList(v)
	if err != nil {
		return nil, err
	}
	for _, t := range types {
		if !slices.Contains(knownTypes, t) {
			return nil, fmt.Errorf("unknown type %q", t)
		}
	}
	return types, nil
}

func stringList(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return []string{x}, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("must hold strings, not %s", jsonType(e))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("must be a string or an array of strings, not %s", jsonType(v))
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// jsonType names the JSON type of a normalized value, for messages.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64:
		return "integer"
	case float64:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}
