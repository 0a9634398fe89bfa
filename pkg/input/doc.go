// Package input reads the input objects of computeplane-fn from files,
// folders and globs: it splits multi-document YAML, unwraps v1 Lists and
// records where each object came from, so that every later message can name
// the file. It refuses what it cannot read safely (binary data, oversized
// files, malformed YAML) with an error naming the file.
package input
