package yaml11

import (
	"regexp"
	"strconv"
	"strings"
)

// Misread reports whether a YAML 1.1 reader reads the plain (unquoted)
// scalar s as something other than the string s, although go-yaml v3 reads
// it as that string: a YAML 1.1 boolean (y, yes, on, n, no, off in their
// case forms), the merge key <<, a base-60 number (190:20:30.15) and the
// value key = (YAML 1.1's value type, yaml.org/type/value.html: PyYAML
// resolves a plain = to tag:yaml.org,2002:value and has no constructor for
// it outside a key, so it fails on the document; go-yaml v2 reads it as the
// string). A writer must quote such a string. Strings that go-yaml v3 itself reads
// otherwise ("true", "5", "null") are not reported: its encoder quotes them
// already.
func Misread(s string) bool {
	if len(s) == 0 || len(s) > maxMisread && !maybeBase60[s[0]] {
		return false
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "off", "Off", "OFF",
		"<<", "=":
		return true
	}
	return maybeBase60[s[0]] && strings.IndexByte(s, ':') > 0 && base60.MatchString(s)
}

// maxMisread is the length of the longest string Misread reports that is
// no base-60 number.
const maxMisread = 3

// maybeBase60 holds the characters a base-60 number starts with.
var maybeBase60 = func() (t [256]bool) {
	for _, c := range "+-0123456789" {
		t[c] = true
	}
	return t
}()

// base60 is a YAML 1.1 base-60 integer or float (yaml.org/type/int.html,
// yaml.org/type/float.html), as go-yaml's encoders recognise it to quote it:
// readers do not enforce the fraction's digits.
var base60 = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)

// KeyKeepsText reports whether sigs.k8s.io/yaml turns a mapping key that
// go-yaml v3 reads with the given tag (short form: !!str, !!int, ...) and
// text into a JSON key equal to that text, as the function reads every key.
// Strings do (if Misread does not object); integers only in their canonical
// decimal form (go-yaml v2 reads 0x10 as 16 and sigs.k8s.io/yaml writes
// "16"); booleans only as true and false; floats, nulls, timestamps, binary
// and other tags do not (a float key 1.0 becomes "1", a null key is an
// error). A writer writes the others as string keys.
func KeyKeepsText(tag, text string) bool {
	switch tag {
	case "!!str":
		return true
	case "!!int":
		i, err := strconv.ParseInt(text, 10, 64)
		return err == nil && strconv.FormatInt(i, 10) == text
	case "!!bool":
		return text == "true" || text == "false"
	}
	return false
}
