// Package fn is the KRM adapter of computeplane-fn: a thin layer on kyaml's
// fn/framework. Processor is the framework.ResourceListProcessor: it runs
// the pipeline (package pipeline) on the items and the ComputePlaneGenerator
// function config, together with the objects of the files the config's
// spec.inputs names, and turns every refusal into KRM results with the
// object, the field and the file, and then no items are written at all.
// Warnings become results of severity warning, and lines on stderr, since
// kustomize drops results.
//
// It is the only package that imports kyaml's fn/framework. The same
// processor serves kpt (`kpt fn eval --exec`), kustomize transformers and
// kustomize generators (which get no items and read everything from
// spec.inputs).
//
// Execute is the KRM entry point of the binary: framework.Execute, behind
// a check of stdin before kyaml reads it. Package input reads the bytes and
// the YAML as it reads a file (input.Budget.ReadStream); read.go checks
// only the shape of the ResourceList (see there why it must; and
// docs/limits.md). A panic in the processor becomes a refusal that says it
// is a bug.
package fn
