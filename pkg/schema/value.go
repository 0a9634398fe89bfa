package schema

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
)

// maxDepth bounds how deeply a value may nest. It is far beyond any real
// document and stops a self-referencing map from recursing for ever.
const maxDepth = 1000

// normalize returns v in the canonical JSON form the walk and kube-openapi
// expect: map[string]any, []any, string, bool, int64, float64 or nil.
// Integers become int64 (float64 beyond its range); anything else is
// converted as encoding/json would marshal it. A value that JSON cannot
// represent is reported as a violation at its path.
func normalize(v any, path string, depth int) (any, *Violation) {
	if depth > maxDepth {
		return nil, &Violation{Path: path, Message: fmt.Sprintf("value is nested more than %d levels deep", maxDepth)}
	}
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string, bool, int64:
		return x, nil
	case float64:
		return number(x, path)
	case int:
		return int64(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, &Violation{Path: path, Message: fmt.Sprintf("invalid number %q", string(x))}
		}
		return number(f, path)
	case map[string]any:
		if x == nil {
			return nil, nil
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			n, bad := normalize(e, ChildPath(path, k), depth+1)
			if bad != nil {
				return nil, bad
			}
			out[k] = n
		}
		return out, nil
	case []any:
		if x == nil {
			return nil, nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			n, bad := normalize(e, IndexPath(path, i), depth+1)
			if bad != nil {
				return nil, bad
			}
			out[i] = n
		}
		return out, nil
	case json.Marshaler:
		return viaJSON(x, path, depth)
	}
	return normalizeReflect(reflect.ValueOf(v), path, depth)
}

func normalizeReflect(rv reflect.Value, path string, depth int) (any, *Violation) {
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool(), nil
	case reflect.String:
		return rv.String(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if u := rv.Uint(); u <= math.MaxInt64 {
			return int64(u), nil
		}
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return number(rv.Float(), path)
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, nil
		}
		return normalize(rv.Elem().Interface(), path, depth+1)
	case reflect.Map:
		if rv.IsNil() {
			return nil, nil
		}
		out := make(map[string]any, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			k, ok := mapKey(iter.Key())
			if !ok {
				return nil, &Violation{Path: path, Message: fmt.Sprintf("unsupported map key type %s", rv.Type().Key())}
			}
			n, bad := normalize(iter.Value().Interface(), ChildPath(path, k), depth+1)
			if bad != nil {
				return nil, bad
			}
			out[k] = n
		}
		return out, nil
	case reflect.Slice:
		if rv.IsNil() {
			return nil, nil
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			// As encoding/json does: []byte is a base64 string.
			return base64.StdEncoding.EncodeToString(rv.Bytes()), nil
		}
		return normalizeList(rv, path, depth)
	case reflect.Array:
		return normalizeList(rv, path, depth)
	case reflect.Struct:
		return viaJSON(rv.Interface(), path, depth)
	}
	return nil, &Violation{Path: path, Message: fmt.Sprintf("unsupported value of type %s", rv.Type())}
}

func normalizeList(rv reflect.Value, path string, depth int) (any, *Violation) {
	out := make([]any, rv.Len())
	for i := range out {
		n, bad := normalize(rv.Index(i).Interface(), IndexPath(path, i), depth+1)
		if bad != nil {
			return nil, bad
		}
		out[i] = n
	}
	return out, nil
}

func mapKey(k reflect.Value) (string, bool) {
	switch k.Kind() {
	case reflect.String:
		return k.String(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), true
	}
	return "", false
}

// viaJSON converts v as encoding/json marshals it, which honours json tags,
// omitempty and custom marshalers (resource.Quantity, metav1.Time, ...).
func viaJSON(v any, path string, depth int) (any, *Violation) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &Violation{Path: path, Message: fmt.Sprintf("failed to convert %T to JSON: %v", v, err)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, &Violation{Path: path, Message: fmt.Sprintf("failed to convert %T to JSON: %v", v, err)}
	}
	return normalize(out, path, depth+1)
}

// number returns f as an int64 when it is integral, as the API server's
// decoder would read "3" (YAML decoders give float64 for every number), so
// that messages name integers as integers.
func number(f float64, path string) (any, *Violation) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &Violation{Path: path, Message: fmt.Sprintf("%v is not a JSON number", f)}
	}
	if f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
		return int64(f), nil
	}
	return f, nil
}

// canonical returns a JSON encoding of a normalized value that is equal for
// equal JSON values: keys are sorted and 3 and 3.0 encode alike.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}
