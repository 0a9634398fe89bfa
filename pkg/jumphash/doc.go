// Package jumphash places keys in buckets so that a key's bucket depends on
// the key and the bucket count only: the rule behind every assignment of the
// fleet folder (an object to a part of its unit, a unit to a wiring group, a
// tenant's Kustomizations to a kustomize-controller shard). It is its own
// package because the layout (package units) and the render (the baseline
// Kustomization of package render) must place a tenant on the same shard.
package jumphash
