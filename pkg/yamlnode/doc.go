// Package yamlnode reads and builds YAML nodes (go.yaml.in/yaml/v3, as used by
// kustomize's kyaml) without panicking on any input.
//
// Checking: Check walks an input object once, following aliases, and refuses
// what would make a later walk unsafe or the written output unreadable (alias
// bombs, cycles, aliases to other objects, nesting beyond MaxDepth, keys that
// are not strings, merge keys, duplicate keys, scalars their tag does not
// fit), at O(1) per node.
//
// Reading: typed lookups that tell a missing field from one of the wrong type,
// and conversion of a node tree into JSON-like Go values with a budget, so that
// an alias bomb or a very deep document ends in an error instead of exhausting
// memory or the stack.
//
// Building: nodes from JSON (to keep the field order of upstream Go API types),
// from JSON-like Go values (map keys sorted, for a stable key order) and deep
// copies of input nodes with comments and anchors dropped.
package yamlnode
