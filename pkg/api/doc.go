// Package api holds the typed inputs of computeplane-fn (ApplicationDefinitions,
// Tenants, app objects, ComputePlane knob objects), the function config
// (ComputePlaneGenerator), their defaults and validation, and Problem, the one
// shape in which every user mistake is reported.
//
// Decoding is strict and never panics: a field of the wrong type, a missing
// name or an unknown config field becomes a Problem that names the object, the
// field path and the file it came from. The function config is checked
// against its JSON Schema (computeplanegenerator.schema.json) with the API
// server's packages, through package knobs, then decoded into its Go type
// with sigs.k8s.io/json, defaulted and checked across fields; the inputs,
// which are Kubernetes objects of other projects, are each read once from
// their YAML node into Go values (readObject, in object.go, which holds what
// every object shares) and checked in plain Go, one file a kind
// (definition.go, tenant.go, app.go, knobs.go).
// Nothing here knows about KRM ResourceLists; package fn turns Problems into
// KRM results.
package api
