package api

import (
	"reflect"
	"testing"
)

// TestConfigFieldsDecodable: every field of the function config is of a
// kind that decoder.strict reads, so a new field needs no more than its
// json tag (and its default and checks).
func TestConfigFieldsDecodable(t *testing.T) {
	var walk func(t0 reflect.Type, path string)
	walk = func(t0 reflect.Type, path string) {
		switch t0.Kind() {
		case reflect.Pointer:
			walk(t0.Elem(), path)
		case reflect.Slice:
			walk(t0.Elem(), path+"[]")
		case reflect.Struct:
			for i, name := range jsonNames(t0) {
				if name != "" {
					walk(t0.Field(i).Type, path+"."+name)
				}
			}
		case reflect.Map:
			if t0.Key().Kind() != reflect.String || t0.Elem().Kind() != reflect.Interface {
				t.Errorf("%s: a map of %s; strict reads only map[string]any", path, t0)
			}
		case reflect.Interface, reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		default:
			t.Errorf("%s: strict has no decoder for a %s", path, t0.Kind())
		}
	}
	walk(reflect.TypeOf(Config{}), "spec")
}
