package model_test

import (
	"fmt"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

// TestBucketGrows checks the two properties the layout relies on: a key's
// bucket is within 0..n-1 and depends on the key and n only, and growing n
// moves a key only into one of the new buckets, about (m-n)/m of them.
func TestBucketGrows(t *testing.T) {
	const keys = 20_000
	for _, tc := range []struct{ from, to int }{{1, 2}, {2, 3}, {4, 8}, {10, 11}, {64, 100}} {
		moved := 0
		for i := range keys {
			key := fmt.Sprintf("tenant-t%05d", i)
			a, b := model.Bucket("shard", key, tc.from), model.Bucket("shard", key, tc.to)
			if a < 0 || a >= tc.from || b < 0 || b >= tc.to {
				t.Fatalf("%s: bucket %d of %d, %d of %d", key, a, tc.from, b, tc.to)
			}
			if a != b {
				moved++
				if b < tc.from {
					t.Fatalf("%s moved from %d to %d, an old bucket, when n grew from %d to %d", key, a, b, tc.from, tc.to)
				}
			}
		}
		want := float64(keys) * float64(tc.to-tc.from) / float64(tc.to)
		if got := float64(moved); got < 0.9*want || got > 1.1*want {
			t.Errorf("n %d to %d moved %d keys, want about %.0f", tc.from, tc.to, moved, want)
		}
	}
}

// TestBucketDomains: the same key lands independently in two domains, so
// that a tenant's shard says nothing about its unit's wiring group.
func TestBucketDomains(t *testing.T) {
	same := 0
	for i := range 10_000 {
		key := fmt.Sprintf("tenant-t%05d", i)
		if model.Bucket("shard", key, 2) == model.Bucket("group", key, 2) {
			same++
		}
	}
	if same < 4_500 || same > 5_500 {
		t.Errorf("%d of 10,000 keys share their bucket in the two domains, want about half", same)
	}
}
