package model

// Keys are placed in buckets so that a key's bucket depends on
// the key and the bucket count only: the rule behind every assignment of the
// fleet folder (an object to a part of its unit, a unit to a wiring group, a
// tenant's Kustomizations to a kustomize-controller shard). It is the
// model's because the layout (package units) and the render (the baseline
// Kustomization of package render, through KustomizationShard) must place a
// tenant on the same shard.

import "hash/fnv"

// Every assignment in a layout (object to part, unit to wiring group, unit
// to shard) is a jump consistent hash (Lamport and Veach, "A Fast, Minimal
// Memory, Consistent Hash Algorithm", 2014) of the FNV-1a hash of a stable
// key. Two properties follow, and the layout depends on both:
//
//   - the bucket of a key depends on that key and the bucket count only, so
//     adding or removing other keys never moves it;
//   - when the bucket count grows from n to m, a key either stays or moves
//     to one of the new buckets n..m-1, and only about (m-n)/m of the keys
//     move.
//
// The domain ("part", "group", "shard") is hashed with the key so that the
// three assignments are independent of each other.

// Bucket returns the bucket, 0..n-1, of key among n (n >= 1) in the given
// domain.
func Bucket(domain, key string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(domain))
	h.Write([]byte{0})
	h.Write([]byte(key))
	return jump(mix(h.Sum64()), n)
}

// mix is the splitmix64 finaliser: FNV-1a leaves keys that differ in their
// last byte close together, and jump's generator is seeded with the key.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// jump is the jump consistent hash of key over n buckets.
func jump(key uint64, n int) int {
	var b, j int64 = -1, 0
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}
