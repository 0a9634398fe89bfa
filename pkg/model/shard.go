package model

import "strconv"

// KustomizationShard is the kustomize-controller shard, 1..shards, of a
// Kustomization the fleet folder renders (spec.fleet.shards), or 0 when the
// fleet is not sharded (shards <= 1: no label at all). key is the namespace
// for everything the fleet renders for one namespace: its unit and the
// unit's parts, its routed unit and their parts, and its tenant's in-cluster
// baseline Kustomization, so that all of a tenant's Kustomizations land on
// one shard and tenants, not units, are spread over the shards. The fleet's
// own Kustomizations (the account's, the platform's and the wiring groups)
// belong to no tenant: package units places them.
//
// The shard is a jump consistent hash of the key: it depends on the key and
// the shard count only, never on a tenant's position among the others, so
// adding or removing a tenant moves no other tenant, and changing the count
// from n to m moves about |m-n|/max(m,n) of them, only to or from the shards
// added or removed. A hash spreads tenants evenly only on average: for a
// fleet of 100 tenants the share of one of 2 shards is off a half by about
// 5 points (one standard deviation), for 1,000 by under 2.
func KustomizationShard(shards int, key string) int {
	if shards <= 1 {
		return 0
	}
	return Bucket("shard", key, shards) + 1
}

// ShardValue is the value of the sharding label (wire.ShardingLabel) for
// shard s (1-based), as the shard controllers select it:
// sharding.fluxcd.io/key in (shard1).
func ShardValue(s int) string { return "shard" + strconv.Itoa(s) }
