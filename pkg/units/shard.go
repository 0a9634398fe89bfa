package units

import (
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

// assignShards places every Kustomization of the fleet folder on a
// kustomize-controller shard when spec.fleet.shards > 1 (docs/flux-wiring.md,
// "Sharding"):
//
//   - a namespace's units and parts, its routed units and the tenant's
//     in-cluster baseline (a Kustomization object inside the namespace's
//     unit, labelled by package render) go to the namespace's shard,
//     model.KustomizationShard: a hash of the namespace, so that adding or
//     removing a tenant moves no other tenant;
//   - the fleet's own Kustomizations (the account's unit, the platform
//     unit's parts and the wiring groups), which belong to no tenant, even
//     out what the hash left uneven: the least-loaded shards get them. They
//     are cut, in a fixed order (the account's, the platform's parts, the
//     groups by index), into consecutive runs, one per shard, whose lengths
//     fill the shards up to an even level. A tenant added or removed changes
//     the lengths by at most its own Kustomizations, so with 2 shards at
//     most as many of them change shard (with N, at most N-1 times as
//     many, as the runs after a changed one shift): their label changes,
//     nothing is deleted.
//
// A hash alone leaves a shard of 2 with 40% to 60% of a fleet of 100
// tenants only about 85% of the time (a tenant with a ComputePlane carries
// 3 Kustomizations, one without 1); with the fleet's own filling the gap,
// every generated fleet of 100 tenants tried was within it.
func (p *Plan) assignShards() {
	n := p.Fleet.Shards
	if n <= 1 {
		return
	}
	load := make([]int, n+1) // by shard, 1..n
	var own []*int
	for _, u := range p.Units {
		if u.Namespace == "" {
			own = append(own, &u.Shard)
			continue
		}
		u.Shard = model.KustomizationShard(n, u.Namespace)
		load[u.Shard] += 1 + kustomizationsIn(u)
	}
	for _, g := range p.Groups {
		own = append(own, &g.Shard)
	}
	quota := make([]int, n+1)
	for range own {
		least := 1
		for s := 2; s <= n; s++ {
			if load[s]+quota[s] < load[least]+quota[least] {
				least = s
			}
		}
		quota[least]++
	}
	next := 0
	for s := 1; s <= n; s++ {
		for range quota[s] {
			*own[next] = s
			next++
		}
	}
}

// kustomizationsIn counts the Flux Kustomizations a unit applies (a
// tenant's in-cluster baseline), which kustomize-controller reconciles too.
func kustomizationsIn(u *Unit) int {
	n := 0
	for _, o := range u.Objects {
		if o.Kind == "Kustomization" && strings.HasPrefix(o.APIVersion, "kustomize.toolkit.fluxcd.io/") {
			n++
		}
	}
	return n
}
