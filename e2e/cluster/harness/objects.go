package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Decode reads every object of a YAML (or JSON) stream, unwrapping v1 Lists.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("failed to decode YAML: %w", err)
		}
		if m == nil {
			continue
		}
		obj := &unstructured.Unstructured{Object: m}
		if obj.GetKind() == "List" {
			items, _, _ := unstructured.NestedSlice(m, "items")
			for _, it := range items {
				if im, ok := it.(map[string]any); ok {
					out = append(out, &unstructured.Unstructured{Object: im})
				}
			}
			continue
		}
		out = append(out, obj)
	}
}

// DecodeFiles reads the objects of files.
func DecodeFiles(paths ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", p, err)
		}
		objs, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

// YAMLFiles lists the .yaml files below dir, sorted.
func YAMLFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// ApplyCRDs applies the CustomResourceDefinitions of files and waits until
// each is Established.
func ApplyCRDs(ctx context.Context, c *Client, files ...string) error {
	objs, err := DecodeFiles(files...)
	if err != nil {
		return err
	}
	return ApplyCRDObjects(ctx, c, objs)
}

// ApplyCRDObjects applies the CustomResourceDefinitions among objs and waits
// until each is Established; the other objects are left out.
func ApplyCRDObjects(ctx context.Context, c *Client, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if _, _, err := c.Apply(ctx, o, ApplyOptions{}); err != nil {
			return err
		}
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		_, err := c.WaitFor(ctx, 60*time.Second, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", o.GetName(),
			func(u *unstructured.Unstructured) (bool, string) {
				s, r, m, _ := Condition(u, "Established")
				return s == "True", fmt.Sprintf("Established=%s %s: %s", s, r, m)
			})
		if err != nil {
			return err
		}
	}
	return nil
}

// Mismatches lists where got differs from what was sent: every field sent
// must come back with the same value (the server may add defaults, never
// change or drop what it was given). Lists compare item by item.
func Mismatches(sent, got any, path string) []string {
	switch s := sent.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: sent a map, read back %T", path, got)}
		}
		var out []string
		keys := make([]string, 0, len(s))
		for k := range s {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: sent %v, not read back", path, k, s[k]))
				continue
			}
			out = append(out, Mismatches(s[k], gv, path+"."+k)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(s) {
			return []string{fmt.Sprintf("%s: sent %v, read back %v", path, sent, got)}
		}
		var out []string
		for i := range s {
			out = append(out, Mismatches(s[i], g[i], fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	default:
		if !scalarEqual(sent, got) {
			return []string{fmt.Sprintf("%s: sent %v (%T), read back %v (%T)", path, sent, sent, got, got)}
		}
		return nil
	}
}

func scalarEqual(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	// JSON numbers come back as int64 or float64.
	fa, oka := number(a)
	fb, okb := number(b)
	return oka && okb && fa == fb
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
