// Package yamlemit writes YAML node trees as text, byte for byte as
// go.yaml.in/yaml/v3's encoder writes them with the settings of kyaml's
// encoder (two-space indent, compact sequences, no line wrapping), several
// times faster.
//
// The library's encoder turns a tree into a queue of events and runs a state
// machine over it; the queue of one encoder is never trimmed, so it allocates
// and copies a few hundred bytes per node. This package walks the tree
// directly and keeps the state machine's decisions: the same indentation
// rules, the same scalar analysis and choice of style (plain, single quoted,
// double quoted with the same escapes, literal with the same hints) and the
// same rules for dropping tags that the plain form implies.
//
// It writes the trees this project builds and copies: block mappings and
// sequences, empty ones as {} and [], scalars in the default, literal or
// (strings only) double-quoted style, simple keys. A tree with anything else
// (comments, anchors, aliases, flow or single-quoted styles, explicit tags
// that must be written, long or multi-line keys, invalid UTF-8) is reported
// as not supported, and the caller encodes it with the library instead. The
// tests compare both on generated and fuzzed trees.
//
// One deliberate difference: the library writes a string scalar << plain,
// which YAML 1.1 readers (sigs.k8s.io/yaml, kustomize, PyYAML) and the
// library itself read back as a merge key; this package always quotes it.
// The output is the library's for the tree with such scalars marked
// double-quoted (yamlnode.QuoteMergeKeys), and the tests compare exactly
// that. In AppendCopy, strings that YAML 1.1 readers read otherwise
// (internal/yaml11) are double-quoted, as yamlnode.Copy marks them.
//
// The emitter follows emitterc.go of go.yaml.in/yaml/v3 (MIT licence,
// itself a port of libyaml); names of the functions it mirrors are given in
// the comments.
package yamlemit
