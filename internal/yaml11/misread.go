package yaml11

import (
	"regexp"
	"strings"
)

// Misread reports whether a YAML 1.1 reader reads the plain (unquoted)
// scalar s as something other than the string s, although go-yaml v3 reads
// it as that string: a YAML 1.1 boolean (y, yes, on, n, no, off in their
// case forms), the merge key << and a base-60 number (190:20:30.15). A
// writer must quote such a string. Strings that go-yaml v3 itself reads
// otherwise ("true", "5", "null") are not reported: its encoder quotes them
// already.
func Misread(s string) bool {
	if len(s) == 0 || len(s) > maxMisread && !maybeBase60[s[0]] {
		return false
	}
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON",
		"n", "N", "no", "No", "NO", "off", "Off", "OFF",
		"<<":
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
