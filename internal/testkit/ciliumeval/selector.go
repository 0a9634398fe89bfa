package ciliumeval

import (
	"fmt"
	"slices"
	"strings"
)

// requirement is one term of a selector, its key split into source and key.
type requirement struct {
	source, key, op string
	values          []string
}

// selector is an endpoint selector: its requirements are ANDed.
type selector struct {
	reqs []requirement
}

// parseKey splits a selector key into its source and key: "k8s:app" is
// source k8s, "app" is source any.
func parseKey(s string) (source, key string) {
	if src, k, ok := strings.Cut(s, ":"); ok {
		return src, k
	}
	return SourceAny, s
}

// parseSelector reads a label selector (matchLabels, matchExpressions) the
// way Cilium does, refusing what Cilium refuses.
func parseSelector(v any, path string) (selector, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return selector{}, fmt.Errorf("%s: must be a label selector, not %T", path, v)
	}
	var sel selector
	for k := range m {
		if k != "matchLabels" && k != "matchExpressions" {
			return selector{}, fmt.Errorf("%s.%s: unknown selector field", path, k)
		}
	}
	if ml, ok := m["matchLabels"]; ok {
		labels, ok := ml.(map[string]any)
		if !ok {
			return selector{}, fmt.Errorf("%s.matchLabels: must be a map", path)
		}
		for k, val := range labels {
			s, ok := val.(string)
			if !ok {
				return selector{}, fmt.Errorf("%s.matchLabels[%s]: must be a string", path, k)
			}
			src, key := parseKey(k)
			sel.reqs = append(sel.reqs, requirement{src, key, "In", []string{s}})
		}
	}
	if me, ok := m["matchExpressions"]; ok {
		err := eachEntry(me, path+".matchExpressions", "a requirement", func(e map[string]any, path string) error {
			r, err := parseRequirement(e, path)
			sel.reqs = append(sel.reqs, r)
			return err
		})
		if err != nil {
			return selector{}, err
		}
	}
	return sel, nil
}

func parseRequirement(m map[string]any, path string) (requirement, error) {
	key, _ := m["key"].(string)
	op, _ := m["operator"].(string)
	if key == "" {
		return requirement{}, fmt.Errorf("%s.key: is required", path)
	}
	var values []string
	if raw, ok := m["values"]; ok {
		list, ok := raw.([]any)
		if !ok {
			return requirement{}, fmt.Errorf("%s.values: must be a list", path)
		}
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return requirement{}, fmt.Errorf("%s.values: must hold strings", path)
			}
			values = append(values, s)
		}
	}
	switch op {
	case "In", "NotIn":
		if len(values) == 0 {
			return requirement{}, fmt.Errorf("%s: operator %s needs values", path, op)
		}
	case "Exists", "DoesNotExist":
		if len(values) > 0 {
			return requirement{}, fmt.Errorf("%s: operator %s takes no values", path, op)
		}
	default:
		return requirement{}, fmt.Errorf("%s.operator: %q is not In, NotIn, Exists or DoesNotExist", path, op)
	}
	src, k := parseKey(key)
	return requirement{src, k, op, values}, nil
}

// hasKey reports whether a requirement names source:key; a requirement of
// source any names every source's key.
func (s selector) hasKey(source, key string) bool {
	return slices.ContainsFunc(s.reqs, func(r requirement) bool {
		return r.key == key && (r.source == source || r.source == SourceAny)
	})
}

// hasKeyPrefix reports whether a requirement's key starts with prefix, in
// source or in any source.
func (s selector) hasKeyPrefix(source, prefix string) bool {
	return slices.ContainsFunc(s.reqs, func(r requirement) bool {
		return strings.HasPrefix(r.key, prefix) && (r.source == source || r.source == SourceAny)
	})
}

func (s selector) hasSource(source string) bool {
	return slices.ContainsFunc(s.reqs, func(r requirement) bool { return r.source == source })
}

// matches reports whether every requirement holds for the identity.
func (s selector) matches(id []label) bool {
	for _, r := range s.reqs {
		var present []string
		for _, l := range id {
			if l.key == r.key && (r.source == SourceAny || r.source == l.source) {
				present = append(present, l.value)
			}
		}
		hit := slices.ContainsFunc(present, func(v string) bool { return slices.Contains(r.values, v) })
		var ok bool
		switch r.op {
		case "In":
			ok = hit
		case "NotIn":
			ok = !hit
		case "Exists":
			ok = len(present) > 0
		case "DoesNotExist":
			ok = len(present) == 0
		}
		if !ok {
			return false
		}
	}
	return true
}
