package model

import (
	"encoding/json"
	"fmt"
	"strings"
)

// valueAt returns the value at path in a values tree, or nil when some step
// is missing or not a mapping.
func valueAt(v map[string]any, path ...string) any {
	var cur any = v
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// childMap returns m[key] as a mapping, creating it when it is absent or
// null; ok is false when it holds something else.
func childMap(m map[string]any, key string) (map[string]any, bool) {
	switch c := m[key].(type) {
	case map[string]any:
		return c, true
	case nil:
		created := map[string]any{}
		m[key] = created
		return created, true
	}
	return nil, false
}

// childList returns m[key] as a list, empty when it is absent or null; ok is
// false when it holds something else.
func childList(m map[string]any, key string) ([]any, bool) {
	switch c := m[key].(type) {
	case []any:
		return c, true
	case nil:
		return nil, true
	}
	return nil, false
}

// toValue converts a typed API value to the JSON-like form of a values tree.
func toValue(obj any) (any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal %T: %w", obj, err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("failed to unmarshal %T: %w", obj, err)
	}
	return v, nil
}

// hasFlag reports whether a command-line argument sets flag, as --flag or
// --flag=value (kube-apiserver also takes a single dash).
func hasFlag(arg, flag string) bool {
	arg = strings.TrimSpace(arg)
	if !strings.HasPrefix(arg, "--") && strings.HasPrefix(arg, "-") {
		arg = "-" + arg
	}
	return arg == flag || strings.HasPrefix(arg, flag+"=")
}

// flagList returns the comma-separated values of a --flag=a,b argument.
func flagList(arg string) []string {
	_, v, _ := strings.Cut(arg, "=")
	var out []string
	for _, s := range strings.Split(v, ",") {
		out = append(out, strings.TrimSpace(s))
	}
	return out
}
