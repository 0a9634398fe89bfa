// Package fn is the KRM adapter of computeplane-fn: it reads a ResourceList
// (items and the ComputePlaneGenerator function config), adds the objects of
// the files the config's spec.inputs names, runs the pipeline (package
// pipeline) and writes the items back; every refusal becomes a KRM result with the
// object, the field and the file, and then no items are written at all.
//
// It is the only package that imports kyaml's fn/framework. The same
// processor serves kpt (`kpt fn eval --exec`), kustomize transformers and
// kustomize generators (which get no items and read everything from
// spec.inputs).
//
// Execute is the KRM entry point of the binary: it reads the ResourceList
// itself, bounded and checked, before kyaml's code sees it, and a panic in
// the processor becomes a refusal that says it is a bug (see docs/limits.md).
package fn
