// Package api holds the typed inputs of computeplane-fn (ApplicationDefinitions,
// Tenants, app objects, ComputePlane knob objects), the function config
// (ComputePlaneGenerator), their defaults and validation, and Problem, the one
// shape in which every user mistake is reported.
//
// Decoding is strict and never panics: a field of the wrong type, a missing
// name or an unknown config field becomes a Problem that names the object, the
// field path and the file it came from. Nothing here knows about KRM
// ResourceLists; package fn turns Problems into KRM results.
package api
