package schema

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	oaerrors "k8s.io/kube-openapi/pkg/validation/errors"
)

// walker collects what one validation finds.
type walker struct {
	violations []Violation
	rules      []Rule
	withRules  bool
}

func (w *walker) add(path, msg string) {
	w.violations = append(w.violations, Violation{Path: path, Message: msg})
}

// validate checks the normalized value v, found at path, against n and
// everything n applies below it. Unknown fields are left to unknown, which
// needs to see all the branches of an object's schema at once.
func (w *walker) validate(v any, n *node, path string) {
	for _, b := range n.allOf {
		w.validate(v, b, path)
	}
	if len(n.anyOf) > 0 && w.matching(v, n.anyOf, path) == 0 {
		w.add(path, "must validate at least one schema (anyOf)")
	}
	if len(n.oneOf) > 0 {
		if m := w.matching(v, n.oneOf, path); m != 1 {
			w.add(path, fmt.Sprintf("must validate one and only one schema (oneOf), but validates %d", m))
		}
	}
	if n.not != nil && w.matching(v, []*node{n.not}, path) == 1 {
		w.add(path, "must not validate the schema (not)")
	}

	obj, isObject := v.(map[string]any)
	var absent map[string]bool
	view := v
	if isObject {
		view, absent = n.objectView(obj)
	}
	if n.validator != nil {
		for _, err := range n.validator.Validate(view).Errors {
			w.addError(err, path)
		}
	}
	if len(n.enum) > 0 && !(v == nil && n.nullable) && !slices.Contains(n.enum, canonical(v)) {
		w.add(path, fmt.Sprintf("unsupported value %s: supported values: %s", canonical(v), n.enumText))
	}
	if w.withRules && v != nil {
		for _, r := range n.rules {
			r.Path = path
			w.rules = append(w.rules, r)
		}
	}

	switch x := v.(type) {
	case map[string]any:
		if n.embedded {
			for _, k := range []string{"apiVersion", "kind"} {
				if s, _ := x[k].(string); s == "" {
					w.add(ChildPath(path, k), "must not be empty")
				}
			}
		}
		for _, k := range sortedKeys(x) {
			if absent[k] {
				continue
			}
			w.validateField(x[k], n, k, ChildPath(path, k))
		}
	case []any:
		w.checkList(x, n, path)
		for i, e := range x {
			cp := IndexPath(path, i)
			switch {
			case n.items != nil:
				w.validate(e, n.items, cp)
			case i < len(n.tuple):
				w.validate(e, n.tuple[i], cp)
			case n.additionalItem != nil:
				w.validate(e, n.additionalItem, cp)
			case len(n.tuple) > 0 && n.noAdditionalIt:
				w.add(cp, fmt.Sprintf("must have at most %d items", len(n.tuple)))
			}
		}
	}
}

// validateField checks the value of field k of an object against the
// schemas n gives it: its property, the patternProperties it matches, or
// else additionalProperties.
func (w *walker) validateField(v any, n *node, k, path string) {
	declared := false
	if c, ok := n.props[k]; ok {
		w.validate(v, c, path)
		declared = true
	}
	for _, p := range n.patterns {
		if p.re.MatchString(k) {
			w.validate(v, p.node, path)
			declared = true
		}
	}
	switch {
	case declared:
	case n.additional != nil:
		w.validate(v, n.additional, path)
	case n.noAdditional:
		w.add(path, "unknown field")
	}
}

// matching returns how many of the branches v validates against, each
// checked on its own so that one branch's failures do not leak out.
func (w *walker) matching(v any, branches []*node, path string) int {
	count := 0
	for _, b := range branches {
		probe := &walker{}
		probe.validate(v, b, path)
		if len(probe.violations) == 0 {
			count++
		}
	}
	return count
}

// objectView returns obj as the API server would see it after pruning and
// defaulting, for the checks on the object as a whole (required,
// minProperties, maxProperties): a null field that n does not allow to be
// null is dropped (and reported as absent), and a missing field with a
// default is filled in.
func (n *node) objectView(obj map[string]any) (map[string]any, map[string]bool) {
	var absent map[string]bool
	view := obj
	copied := false
	cp := func() {
		if !copied {
			view, copied = maps.Clone(obj), true
		}
	}
	for k, v := range obj {
		if v != nil {
			continue
		}
		field := n.props[k]
		if field == nil && !n.matchesPattern(k) {
			field = n.additional
		}
		// A field without constraints accepts null as it is.
		if field == nil || field.nullable || field.validator == nil {
			continue
		}
		cp()
		delete(view, k)
		if absent == nil {
			absent = map[string]bool{}
		}
		absent[k] = true
	}
	for k, field := range n.props {
		if _, ok := view[k]; !ok && field.hasDefault {
			cp()
			view[k] = field.defaultValue
		}
	}
	return view, absent
}

func (n *node) matchesPattern(k string) bool {
	for _, p := range n.patterns {
		if p.re.MatchString(k) {
			return true
		}
	}
	return false
}

// checkList enforces x-kubernetes-list-type: set (no duplicate items) and
// map (no two items with the same values of the list-map keys).
func (w *walker) checkList(list []any, n *node, path string) {
	switch n.listType {
	case "set":
		seen := map[string]bool{}
		for i, e := range list {
			c := canonical(e)
			if seen[c] {
				w.add(IndexPath(path, i), "duplicate value "+c)
			}
			seen[c] = true
		}
	case "map":
		if len(n.listMapKeys) == 0 {
			return
		}
		seen := map[string]bool{}
		for i, e := range list {
			obj, ok := e.(map[string]any)
			if !ok {
				continue
			}
			key := map[string]any{}
			for _, k := range n.listMapKeys {
				v, ok := obj[k]
				if !ok && n.items != nil {
					if f := n.items.props[k]; f != nil && f.hasDefault {
						v = f.defaultValue
					}
				}
				key[k] = v
			}
			c := canonical(key)
			if seen[c] {
				w.add(IndexPath(path, i), "duplicate entry with keys "+c)
			}
			seen[c] = true
		}
	}
}

// addError turns an error of kube-openapi's validator, run at the root of
// a node with an empty path, into a violation at path.
func (w *walker) addError(err error, path string) {
	var composite *oaerrors.CompositeError
	if errors.As(err, &composite) {
		for _, e := range composite.Errors {
			w.addError(e, path)
		}
		return
	}
	var v *oaerrors.Validation
	if !errors.As(err, &v) {
		// The range checks of numbers say "Checked value must be ... in
		// <path>", and the path given to kube-openapi is empty.
		msg := strings.TrimSuffix(err.Error(), " in ")
		w.add(path, strings.TrimPrefix(msg, "Checked "))
		return
	}
	p := path
	if v.Name != "" {
		// Only "required" names a field below the node: "." + field.
		p = ChildPath(path, strings.TrimPrefix(v.Name, "."))
	}
	w.add(p, strings.TrimPrefix(v.Error(), v.Name+" in body "))
}

// unknown reports the fields of v that none of the schemas in views, nor
// the allOf, anyOf and oneOf branches below them, declares. Looking at all
// branches together means a field declared in one branch is known at the
// object, as JSON Schema users expect, and that a field declared in two
// places gets the union of both declarations below it.
func (w *walker) unknown(v any, views []*node, path string) {
	views = expand(views)
	for _, n := range views {
		if n.intOrString {
			return
		}
	}
	switch x := v.(type) {
	case map[string]any:
		open, objectish, embedded := false, false, false
		for _, n := range views {
			open = open || n.preserveUnknown || n.additional != nil
			objectish = objectish || n.objectish
			embedded = embedded || n.embedded
		}
		for _, k := range sortedKeys(x) {
			var fields []*node
			for _, n := range views {
				if c, ok := n.props[k]; ok {
					fields = append(fields, c)
				}
				for _, p := range n.patterns {
					if p.re.MatchString(k) {
						fields = append(fields, p.node)
					}
				}
			}
			if len(fields) == 0 {
				for _, n := range views {
					if n.additional != nil {
						fields = append(fields, n.additional)
					}
				}
			}
			cp := ChildPath(path, k)
			if len(fields) == 0 {
				metaField := k == "apiVersion" || k == "kind" || k == "metadata"
				if objectish && !open && !(embedded && metaField) {
					w.add(cp, "unknown field")
				}
				continue
			}
			w.unknown(x[k], fields, cp)
		}
	case []any:
		for i, e := range x {
			var items []*node
			for _, n := range views {
				switch {
				case n.items != nil:
					items = append(items, n.items)
				case i < len(n.tuple):
					items = append(items, n.tuple[i])
				case n.additionalItem != nil:
					items = append(items, n.additionalItem)
				}
			}
			if len(items) > 0 {
				w.unknown(e, items, IndexPath(path, i))
			}
		}
	}
}

// expand returns views with every allOf, anyOf and oneOf branch below them,
// each once.
func expand(views []*node) []*node {
	seen := map[*node]bool{}
	var out []*node
	var add func(n *node)
	add = func(n *node) {
		if seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
		for _, b := range slices.Concat(n.allOf, n.anyOf, n.oneOf) {
			add(b)
		}
	}
	for _, n := range views {
		add(n)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}
