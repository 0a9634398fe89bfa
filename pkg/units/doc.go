// Package units lays a rendered fleet out as many small Flux units, so that
// kustomize-controller reconciles it quickly at any size.
//
// kustomize build is quadratic in the number of resources and
// kustomize-controller runs it on every reconcile, so one Kustomization over
// a large fleet would take hours. [NewPlan] cuts the rendered objects into
// units: the unit of the fleet's own account (folder _account: its
// ServiceAccount, ClusterRole and ClusterRoleBinding, applied first), a
// platform unit (folder _platform: cozy-system, the platform objects and
// every other cluster-scoped object) and one unit per namespace (folder
// <namespace>), a unit over spec.fleet.maxObjectsPerUnit being split into
// parts (<namespace>/part<N>) by a consistent hash of each object's
// identity. Each unit folder holds one file per object and a
// kustomization.yaml that lists them.
//
// The wiring folder (spec.fleet.wiringPath, default _flux) holds one
// kustomize.toolkit.fluxcd.io/v1 Kustomization per unit, spread over wiring
// groups (_flux/<g>-of-<n>) by a consistent hash of the unit's name, and one
// Kustomization per group in _flux itself, so that the root Kustomization
// the operator applies, pointing at _flux, builds a handful of objects
// whatever the fleet's size. The number of groups is spec.fleet.wiringGroups,
// or with 0 (the default) about the square root of the number of units, a
// power of two (sizedGroups). With spec.fleet.shards > 1 every Kustomization
// carries the sharding.fluxcd.io/key label: a tenant's all share the shard of
// a hash of its namespace, and the fleet's own even out the shards
// (assignShards).
//
// With spec.fleet.unitSource: ExternalArtifact each namespace's units read
// an ExternalArtifact of their own instead of the whole fleet source: a
// namespace's folder lies below its wiring group's, the root applies an
// ArtifactGenerator that cuts the fleet source into one artifact per group
// and one per group that cuts it into one per namespace (artifacts.go).
//
// Every assignment of a tenant is stable: an object, a unit or a tenant is
// placed by its own name, never by its neighbours', so adding a tenant moves
// no other tenant.
// docs/flux-wiring.md explains the wiring, what Flux prunes when a tenant
// goes and how to bootstrap it.
package units
