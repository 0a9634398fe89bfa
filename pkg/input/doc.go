// Package input reads the input objects of computeplane-fn from files,
// folders and globs: it splits multi-document YAML, unwraps v1 Lists and
// records where each object came from, so that every later message can name
// the file.
//
// It is the gate for hostile input. A Budget counts what one run reads
// (bytes, an estimate of the YAML nodes made before parsing, objects, nodes
// with aliases followed, files) against the limits in limits.go, and every
// object passes yamlnode.Check before any other code walks it. What cannot
// be read safely (binary data, oversized files, malformed YAML, alias bombs,
// absurd nesting, duplicate or merge keys, FIFOs, inputs of a config that
// lead outside the config's folder) is refused as api.Problems naming the
// file, the object and the field: every reader of this package reports
// api.Problems, and none carries them in an error. A limit of the whole run
// exhausts the Budget (Budget.Exhausted), which ends the run at once; a
// failure that is no mistake of the user's (a panic of the YAML parser) is
// reported as api.Internal. docs/limits.md explains each limit.
package input
