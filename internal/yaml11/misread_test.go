package yaml11_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	yamlv3 "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/yaml11"
)

// readers compares how go-yaml v3 (what the project reads and writes
// with) and go-yaml v2 (what sigs.k8s.io/yaml reads with: kubectl, Flux,
// Helm) read the string s written the way v3's encoder writes it unless it
// is told to quote it, as a value and as a key. plain reports whether v3
// wrote s without quotes in either place, differ whether v2 read something
// other than the string s there.
func readers(t testing.TB, s string) (plain, differ bool) {
	t.Helper()
	for _, key := range []bool{false, true} {
		doc := &yamlv3.Node{Kind: yamlv3.MappingNode}
		str := &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: s}
		one := &yamlv3.Node{Kind: yamlv3.ScalarNode, Tag: "!!str", Value: "v"}
		if key {
			doc.Content = []*yamlv3.Node{str, one}
		} else {
			doc.Content = []*yamlv3.Node{one, str}
		}
		text, err := yamlv3.Marshal(doc)
		if err != nil {
			t.Fatalf("%q: v3 cannot write it: %v", s, err)
		}
		// v3 reads its own plain << key as a merge key too.
		var v3 map[string]any
		want := map[string]any{"v": s}
		if key {
			want = map[string]any{s: "v"}
		}
		if err := yamlv3.Unmarshal(text, &v3); err != nil || !reflect.DeepEqual(v3, want) {
			if s != "<<" {
				t.Fatalf("%q: v3 reads back %#v (%v) from\n%s", s, v3, err, text)
			}
			differ = true
		}
		if key {
			plain = plain || strings.HasPrefix(string(text), s+":")
		} else {
			plain = plain || string(text) == "v: "+s+"\n"
		}
		var v2 any
		err = yamlv2.Unmarshal(text, &v2)
		var wantV2 any = map[any]any{"v": s}
		if key {
			wantV2 = map[any]any{s: "v"}
		}
		if err != nil || !reflect.DeepEqual(v2, wantV2) {
			differ = true
		}
	}
	return plain, differ
}

// check fails when Misread disagrees with yaml.v2 about s: a string v3
// writes plain must be reported exactly when v2 reads it otherwise.
// Base-60 numbers and the value key =, which v2 reads as strings but YAML
// 1.1 readers such as PyYAML do not (valueKey), are reported on top.
func check(t testing.TB, s string) {
	plain, differ := readers(t, s)
	got := yaml11.Misread(s)
	switch {
	case differ && !plain:
		t.Fatalf("%q: v3 quotes it, yet v2 reads it otherwise", s)
	case differ && !got:
		t.Errorf("Misread(%q) = false, but yaml.v2 reads the plain scalar as something else", s)
	case got && !differ && !base60(s) && !valueKey(s):
		t.Errorf("Misread(%q) = true, but yaml.v2 reads it as the string and it is no base-60 number or value key", s)
	case valueKey(s) && !got:
		t.Errorf("Misread(%q) = false, but YAML 1.1 resolves it to the value type (PyYAML fails on it)", s)
	}
}

// valueKey reports YAML 1.1's value key (yaml.org/type/value.html,
// resolved from exactly "="), written out independently of the package:
// v2 has no resolver for it, PyYAML does and cannot construct it.
func valueKey(s string) bool { return s == "=" }

// base60 is the YAML 1.1 spec's base-60 number, written out independently
// of the package's expression.
func base60(s string) bool {
	s = strings.TrimLeft(s, "+-")
	whole, frac, _ := strings.Cut(s, ".")
	if strings.ContainsAny(frac, ":") || strings.Trim(frac, "0123456789_") != "" {
		return false
	}
	parts := strings.Split(whole, ":")
	if len(parts) < 2 || parts[0] == "" || parts[0][0] < '0' || parts[0][0] > '9' || strings.Trim(parts[0], "0123456789_") != "" {
		return false
	}
	for _, p := range parts[1:] {
		if len(p) == 0 || len(p) > 2 || strings.Trim(p, "0123456789") != "" || len(p) == 2 && p[0] > '5' {
			return false
		}
	}
	return true
}

func TestMisreadAgreesWithYAMLv2(t *testing.T) {
	// Every string of up to two characters over the characters YAML's
	// resolvers look at, every case form of the words they know, and
	// then some.
	alphabet := []string{"y", "Y", "e", "E", "s", "S", "n", "N", "o", "O", "f", "F", "t", "T", "r", "u", "l", "L", "a", "~", "<", "=", "+", "-", ".", ":", "0", "1", "5", "6", "9", "_", "x", "b", "i", " "}
	var all []string
	for _, a := range alphabet {
		all = append(all, a)
		for _, b := range alphabet {
			all = append(all, a+b)
		}
	}
	for _, word := range []string{"yes", "no", "on", "off", "true", "false", "null", "nan", "inf"} {
		for mask := 0; mask < 1<<len(word); mask++ {
			b := []byte(word)
			for i := range b {
				if mask&(1<<i) != 0 {
					b[i] = strings.ToUpper(string(b[i]))[0]
				}
			}
			all = append(all, string(b), "."+string(b), "+."+string(b), "-."+string(b))
		}
	}
	all = append(all,
		"yes", "Yes", "YES", "yEs", "no", "No", "NO", "nO", "on", "On", "ON", "oN", "off", "Off", "OFF", "oFF",
		"true", "True", "TRUE", "tRUE", "false", "null", "Null", "~", "<<", "<<<", "=",
		"1:20", "190:20:30.15", "-1:20", "+1:20", "1:60", "1:5", "1_0:20", "1:20.", "1:20.5_0", "1:2:3:4",
		"12:30", "0:00", "1:20:", ":20", "1::20", "1:200", "2001-12-14", "2001-12-14t21:59:43.10-05:00",
		"0x1F", "0o17", "0b101", "-0b101", "017", "1_000", ".5", "1e3", "1E3", ".inf", ".nan", "+.inf",
		"1.0", "1.", "-", "+", ".", "y:", "yes please", "Norway", "NOK", "NOR", "onn",
	)
	for _, s := range all {
		check(t, s)
	}
}

func TestMisread(t *testing.T) {
	for s, want := range map[string]bool{
		"yes": true, "NO": true, "On": true, "y": true, "N": true, "<<": true, "=": true, "==": false, "=x": false, "a=b": false,
		"1:20": true, "190:20:30.15": true, "-1:20": true,
		"true": false, "5": false, "null": false, "": false, "Norway": false, "1:60": false,
		"10m": false, "1Gi": false, "tenant-no": false,
	} {
		if got := yaml11.Misread(s); got != want {
			t.Errorf("Misread(%q) = %v, want %v", s, got, want)
		}
	}
}

// FuzzMisread checks Misread against yaml.v2 on arbitrary strings.
func FuzzMisread(f *testing.F) {
	for _, s := range []string{"yes", "1:20", "<<", "Off", "0x1F", "2001-12-14", "1:20.5", "y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 || strings.ContainsAny(s, "\x00\r\n\t\ufeff") || !validText(s) {
			return
		}
		check(t, s)
	})
}

// validText keeps to what the encoders write as text (no control
// characters or invalid UTF-8, which go to !!binary or escapes).
func validText(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' || r >= 0x80 {
			return false
		}
	}
	return true
}

func Example() {
	for _, s := range []string{"NO", "on", "1:20", "<<", "Norway", "true"} {
		fmt.Println(s, yaml11.Misread(s))
	}
	// Output:
	// NO true
	// on true
	// 1:20 true
	// << true
	// Norway false
	// true false
}

// TestKeyKeepsTextAgreesWithSigsYAML writes keys the way go-yaml v3 reads
// them (tag implied by the plain text) and reads them back with
// sigs.k8s.io/yaml, as Flux does: the JSON key must be the text exactly
// when KeyKeepsText says so.
func TestKeyKeepsTextAgreesWithSigsYAML(t *testing.T) {
	for _, text := range []string{
		"80", "0", "-5", "+5", "080", "0x10", "0o17", "0b11", "1_000", "9223372036854775807", "9223372036854775808",
		"18446744073709551615", "true", "false", "True", "FALSE", "1.0", "1.5", ".5", "1e3", ".inf", "null", "~", "Null",
		"2001-12-14", "name", "<<x", "1:20",
	} {
		var probe yamlv3.Node
		if err := yamlv3.Unmarshal([]byte(text), &probe); err != nil {
			t.Fatal(err)
		}
		tag := probe.Content[0].ShortTag()
		j, err := sigsyaml.YAMLToJSON([]byte(text + ": v\n"))
		var m map[string]any
		kept := err == nil && json.Unmarshal(j, &m) == nil && m[text] == "v"
		// It may say no where sigs.k8s.io/yaml happens to keep the text
		// (1.5, 2001-12-14): the key is then written as a string, which
		// reads the same. It must never say yes where it does not.
		if got := yaml11.KeyKeepsText(tag, text); got && !kept {
			t.Errorf("KeyKeepsText(%s, %q) = true, but sigs.k8s.io/yaml reads it as %s (%v)", tag, text, j, err)
		}
		if tag == "!!int" && strings.Trim(text, "0123456789-") == "" || text == "true" || text == "false" || tag == "!!str" {
			if !yaml11.KeyKeepsText(tag, text) && kept {
				t.Errorf("KeyKeepsText(%s, %q) = false for a canonical key", tag, text)
			}
		}
	}
}
