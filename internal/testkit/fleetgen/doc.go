// Package fleetgen writes synthetic Cozystack fleets for benchmarks: the
// inputs computeplane-fn reads at the scale of a large installation, in the
// shapes real ones have.
//
// A fleet is 30 ApplicationDefinitions of the real Cozystack shape (long
// openAPISchema strings, dashboard icons, release labels and chartRefs, some
// with timeout annotations, some routed onto the ComputePlane by
// spec.placement or by the computeplane.dev/placement annotation), a tree of
// Tenants nested a few levels deep, ComputePlane knob objects for some of the
// tenants that have a ComputePlane, and app objects whose specs are Helm
// values of a few KB with nested maps, lists and multi-line strings.
//
// Generation is deterministic: the same [Params] always give the same bytes,
// and every tenant draws from its own random stream, so that tenant 42 looks
// the same in a fleet of 1,000 and of 10,000 tenants. The layout is the one
// of a fleet repository: a few big files (one per definition, the tenant
// list) and many small ones (one file per tenant with its apps).
package fleetgen
