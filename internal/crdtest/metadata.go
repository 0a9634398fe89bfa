package crdtest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/schema"
)

// The syntax rules of k8s.io/apimachinery/pkg/util/validation, written out
// here because this module does not depend on apimachinery directly.
var (
	dns1123Label     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	qualifiedName    = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	labelValue       = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

const (
	maxSubdomainLength      = 253
	maxLabelLength          = 63
	maxAnnotationsTotalSize = 256 * 1024
)

// objectMetaFields are the fields of ObjectMeta; the API server drops any
// other, and rejects it under strict field validation.
var objectMetaFields = map[string]bool{
	"name": true, "generateName": true, "namespace": true, "selfLink": true, "uid": true,
	"resourceVersion": true, "generation": true, "creationTimestamp": true,
	"deletionTimestamp": true, "deletionGracePeriodSeconds": true, "labels": true,
	"annotations": true, "ownerReferences": true, "finalizers": true, "managedFields": true,
}

// ValidateMetadata checks an object's metadata as the API server does for
// any resource: metadata.name must be a DNS-1123 subdomain (at most 253
// characters), metadata.namespace a DNS-1123 label and present exactly when
// namespaced is true, label keys qualified names with an optional DNS
// subdomain prefix and label values at most 63 characters of
// [A-Za-z0-9-_.] beginning and ending with an alphanumeric, annotation keys
// qualified names and all annotations together at most 256 KiB. A rendered
// object must carry its name, so generateName alone is not enough.
func ValidateMetadata(metadata any, namespaced bool) []schema.Violation {
	var vs []schema.Violation
	add := func(path, msg string) { vs = append(vs, schema.Violation{Path: path, Message: msg}) }

	meta, ok := metadata.(map[string]any)
	if !ok {
		if metadata == nil {
			add("metadata", "is required")
		} else {
			add("metadata", "must be an object")
		}
		return vs
	}
	for k := range meta {
		if !objectMetaFields[k] {
			add(schema.ChildPath("metadata", k), "unknown field")
		}
	}

	switch name, ok := meta["name"].(string); {
	case !ok && meta["name"] != nil:
		add("metadata.name", "must be a string")
	case name == "":
		add("metadata.name", "is required")
	default:
		for _, msg := range isDNS1123Subdomain(name) {
			add("metadata.name", msg)
		}
	}

	ns, isString := meta["namespace"].(string)
	switch {
	case !isString && meta["namespace"] != nil:
		add("metadata.namespace", "must be a string")
	case namespaced && ns == "":
		add("metadata.namespace", "is required for a namespaced kind")
	case !namespaced && ns != "":
		add("metadata.namespace", "must not be set for a cluster-scoped kind")
	case ns != "":
		for _, msg := range isDNS1123Label(ns) {
			add("metadata.namespace", msg)
		}
	}

	if labels, ok := stringMap(meta, "labels", add); ok {
		for k, v := range labels {
			p := schema.ChildPath("metadata.labels", k)
			for _, msg := range isQualifiedName(k) {
				add(p, "invalid key: "+msg)
			}
			for _, msg := range isLabelValue(v) {
				add(p, "invalid value: "+msg)
			}
		}
	}
	if annotations, ok := stringMap(meta, "annotations", add); ok {
		total := 0
		for k, v := range annotations {
			total += len(k) + len(v)
			for _, msg := range isQualifiedName(strings.ToLower(k)) {
				add(schema.ChildPath("metadata.annotations", k), "invalid key: "+msg)
			}
		}
		if total > maxAnnotationsTotalSize {
			add("metadata.annotations", fmt.Sprintf("may not be more than %d bytes in total", maxAnnotationsTotalSize))
		}
	}
	return vs
}

// stringMap returns meta[field] as a map of strings, reporting through add
// when it is something else.
func stringMap(meta map[string]any, field string, add func(path, msg string)) (map[string]string, bool) {
	raw, ok := meta[field]
	if !ok || raw == nil {
		return nil, false
	}
	m, ok := raw.(map[string]any)
	if !ok {
		if sm, isStrings := raw.(map[string]string); isStrings {
			return sm, true
		}
		add("metadata."+field, "must be an object of strings")
		return nil, false
	}
	out := make(map[string]string, len(m))
	valid := true
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			add(schema.ChildPath("metadata."+field, k), "must be a string")
			valid = false
			continue
		}
		out[k] = s
	}
	return out, valid
}

func isDNS1123Label(s string) []string {
	var msgs []string
	if len(s) > maxLabelLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters", maxLabelLength))
	}
	if !dns1123Label.MatchString(s) {
		msgs = append(msgs, fmt.Sprintf("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (regex %q)", dns1123Label))
	}
	return msgs
}

func isDNS1123Subdomain(s string) []string {
	var msgs []string
	if len(s) > maxSubdomainLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters", maxSubdomainLength))
	}
	if !dns1123Subdomain.MatchString(s) {
		msgs = append(msgs, fmt.Sprintf("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (regex %q)", dns1123Subdomain))
	}
	return msgs
}

// isQualifiedName checks a label or annotation key: a name part, optionally
// behind a DNS subdomain prefix and a slash ("example.com/name").
func isQualifiedName(s string) []string {
	var msgs []string
	name := s
	if prefix, rest, found := strings.Cut(s, "/"); found {
		name = rest
		if prefix == "" {
			msgs = append(msgs, "prefix part must be non-empty")
		} else {
			for _, msg := range isDNS1123Subdomain(prefix) {
				msgs = append(msgs, "prefix part "+msg)
			}
		}
		if strings.Contains(rest, "/") {
			return append(msgs, "a qualified name must consist of an optional DNS subdomain prefix, one '/', and a name")
		}
	}
	switch {
	case name == "":
		msgs = append(msgs, "name part must be non-empty")
	case len(name) > maxLabelLength:
		msgs = append(msgs, fmt.Sprintf("name part must be no more than %d characters", maxLabelLength))
	}
	if name != "" && !qualifiedName.MatchString(name) {
		msgs = append(msgs, fmt.Sprintf("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (regex %q)", qualifiedName))
	}
	return msgs
}

func isLabelValue(s string) []string {
	var msgs []string
	if len(s) > maxLabelLength {
		msgs = append(msgs, fmt.Sprintf("must be no more than %d characters", maxLabelLength))
	}
	if !labelValue.MatchString(s) {
		msgs = append(msgs, fmt.Sprintf("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (regex %q)", labelValue))
	}
	return msgs
}
