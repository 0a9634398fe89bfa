// Package yamltext writes YAML as text: node trees encoded byte for byte as
// kyaml's encoder writes them, and the values of releases encoded ahead of
// time and spliced into their release when it is written. It is the one
// place that knows what the output's bytes look like.
//
// AppendDocument writes a tree with this package's emitter, which follows
// go.yaml.in/yaml/v3's encoder with the settings of kyaml's (two-space
// indent, compact sequences, no line wrapping) several times faster, or with
// the library itself for what the emitter leaves to it. The library's
// encoder turns a tree into a queue of events and runs a state machine over
// it; the queue of one encoder is never trimmed, so it allocates and copies
// a few hundred bytes per node. The emitter walks the tree directly and
// keeps the state machine's decisions: the same indentation rules, the same
// scalar analysis and choice of style (plain, single quoted, double quoted
// with the same escapes, literal with the same hints) and the same rules for
// dropping tags that the plain form implies. It writes the trees this
// project builds and copies: block mappings and sequences, empty ones as {}
// and [], scalars in the default, literal or (strings only) double-quoted
// style, simple keys. A tree with anything else (comments, anchors,
// aliases, flow or single-quoted styles, explicit tags that must be written,
// long or multi-line keys, invalid UTF-8) goes to the library. The tests
// compare both on generated and fuzzed trees.
//
// Values are an app's spec on its way into its HelmRelease: the text it
// takes at spec.values of a release (EncodeValues), written straight from
// the tree as read as yamlnode.NormalizedCopy would copy it, without the
// copy. Every run encodes an app's values while its file is read and drops
// the tree; AppendRelease then writes a release that holds Placeholder() at
// spec.values with the text spliced in.
//
// One deliberate difference from the library: it writes a string scalar <<
// plain, which YAML 1.1 readers (sigs.k8s.io/yaml, kustomize, PyYAML) and
// the library itself read back as a merge key; this package always quotes
// it. The output is the library's for the tree with such scalars marked
// double-quoted (yamlnode.QuoteMergeKeys), and the tests compare exactly
// that. Values are encoded with strings that YAML 1.1 readers read
// otherwise (internal/yaml11) double-quoted, as yamlnode.NormalizedCopy
// marks them.
//
// The emitter follows emitterc.go of go.yaml.in/yaml/v3 (MIT licence,
// itself a port of libyaml); names of the functions it mirrors are given in
// the comments.
package yamltext
