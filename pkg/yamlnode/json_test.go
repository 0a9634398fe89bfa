package yamlnode

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// The JSON cases that fromJSONFast must build as the decoder does, or
// leave to it.
var jsonCases = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `1.0`, `1.5`, `-2.5e-3`, `1e5`, `1E+2`, `1e-0`,
	`9223372036854775807`, `9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`,
	`""`, `"a"`, `"yes"`, `"NO"`, `"on"`, `"1:20"`, `"<<"`, `"5"`, `"true"`, `"null"`, `"~"`, `"0x10"`,
	`"tab\there"`, `"quote\"d"`, `"back\\slash"`, `"\u00e9t\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\u2028"`,
	`"été"`, "\"\xff\xfe\"", "\"a\x01b\"", `"multi\nline\n"`, `"\/"`,
	` {"a" : 1 , "b" : [ 1 , 2 ] } `, "\n\t{\"a\":1}\r\n",
	`{"spec":{"z":1,"a":[true,"5m"]},"apiVersion":"v1","kind":"X"}`,
	`{"b":1,"a":2,"B":3,"a1":4,"":5}`, `{"yes":1,"<<":2,"on":{"off":[]}}`,
	`{"a":1,"a":2}`, `{"a":{"b":1,"b":{}}}`,
	`{"a":1} trailing`, `{"a":1}{"b":2}`, `[1,2,]`, `{"a":1,}`, `{"a"}`, `{a:1}`, `[01]`, `-`, `1.`, `1e`, `.5`, `+1`,
	`tru`, `truex`, `nul`, `[`, `{`, `"open`, ``, `   `, `[[[[]]]]`, `{"a":[{"b":[{"c":null}]}]}`,
	strings.Repeat("[", 150) + strings.Repeat("]", 150),
}

func TestFromJSONFastAsDecoded(t *testing.T) {
	for _, c := range jsonCases {
		checkFromJSON(t, []byte(c))
	}
}

// TestFromJSONFastRandom: values of every JSON shape, as json.Marshal
// writes them (the input TypedNode gives FromJSON).
func TestFromJSONFastRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	words := []string{"", "a", "yes", "No", "ON", "<<", "5", "0x1F", "1:20", "null", "~", "true", "é", "a b", "a: b", "- x", "#c", "line\nline", "\t", "\u2028", "\x00", "\"", "\\", "<>&", "1e3", ".5", "-", "?", "{}", "[]", "\xff"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := r.Intn(9); {
		case k == 0 && depth < 6:
			m := map[string]any{}
			for i := r.Intn(6); i > 0; i-- {
				m[words[r.Intn(len(words))]+fmt.Sprint(r.Intn(3))] = gen(depth + 1)
			}
			return m
		case k == 1 && depth < 6:
			var l []any
			for i := r.Intn(5); i > 0; i-- {
				l = append(l, gen(depth+1))
			}
			return l
		case k == 2:
			return r.Int63() - r.Int63()
		case k == 3:
			return r.NormFloat64() * []float64{1, 1e-9, 1e21, 1e300}[r.Intn(4)]
		case k == 4:
			return r.Intn(2) == 0
		case k == 5:
			return nil
		default:
			return words[r.Intn(len(words))] + words[r.Intn(len(words))]
		}
	}
	for i := 0; i < 20000; i++ {
		data, err := json.Marshal(gen(0))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := fromJSONFast(data); !ok {
			t.Fatalf("fromJSONFast left JSON of json.Marshal to the decoder: %s", data)
		}
		checkFromJSON(t, data)
	}
}

func FuzzFromJSONFast(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkFromJSON)
}

// checkFromJSON fails unless fromJSONFast builds what the decoder's path
// does, or leaves data to it.
func checkFromJSON(t *testing.T, data []byte) {
	t.Helper()
	fast, ok := fromJSONFast(data)
	want, err := fromJSONDecoded(data)
	if !ok {
		return
	}
	if err != nil {
		t.Fatalf("%q: fromJSONFast built a tree, the decoder fails: %v", data, err)
	}
	if !reflect.DeepEqual(fast, want) {
		t.Fatalf("%q: fromJSONFast built\n%s\nthe decoder's path\n%s", data, Describe(fast), Describe(want))
	}
}
