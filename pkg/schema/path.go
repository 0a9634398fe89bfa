package schema

import (
	"strconv"
	"strings"
)

// ChildPath returns the path of the field key under parent, in the form used
// by [Violation.Path]: "parent.key", or "key" at the root. A key that would
// make the dotted form ambiguous or hard to read (empty, or holding '.', '/',
// '[', ']', a quote or white space, such as the label key
// "app.kubernetes.io/name") is written in brackets instead:
// "metadata.labels[app.kubernetes.io/name]".
func ChildPath(parent, key string) string {
	if key == "" || strings.ContainsAny(key, "./[]\"' \t\r\n") {
		return parent + "[" + key + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// IndexPath returns the path of the i-th item of the list at parent:
// "parent[i]".
func IndexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}
