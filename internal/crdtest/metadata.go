package crdtest

import (
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/computeplane-dev/computeplane-fn/pkg/schema"
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
// any resource, with apimachinery's own rules and messages: metadata.name
// must be a DNS-1123 subdomain (at most 253 characters), metadata.namespace
// a DNS-1123 label and present exactly when namespaced is true, label keys
// qualified names with an optional DNS subdomain prefix and label values at
// most 63 characters of [A-Za-z0-9-_.] beginning and ending with an
// alphanumeric, annotation keys qualified names and all annotations together
// at most 256 KiB. ObjectMeta has no other fields than the API server's. A
// rendered object must carry its name, so generateName alone is not enough.
// The violations are sorted by path and message.
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
		for _, msg := range validation.IsDNS1123Subdomain(name) {
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
		for _, msg := range validation.IsDNS1123Label(ns) {
			add("metadata.namespace", msg)
		}
	}

	if labels, ok := stringMap(meta, "labels", add); ok {
		for k, v := range labels {
			p := schema.ChildPath("metadata.labels", k)
			for _, msg := range validation.IsQualifiedName(k) {
				add(p, "invalid key: "+msg)
			}
			for _, msg := range validation.IsValidLabelValue(v) {
				add(p, "invalid value: "+msg)
			}
		}
	}
	if annotations, ok := stringMap(meta, "annotations", add); ok {
		for k := range annotations {
			for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
				add(schema.ChildPath("metadata.annotations", k), "invalid key: "+msg)
			}
		}
		if err := apivalidation.ValidateAnnotationsSize(annotations); err != nil {
			add("metadata.annotations", err.Error())
		}
	}
	return sortViolations(vs)
}

// stringMap returns the string entries of meta[field], reporting through
// add the entries, or the field, that are something else.
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
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			add(schema.ChildPath("metadata."+field, k), "must be a string")
			continue
		}
		out[k] = s
	}
	return out, true
}
