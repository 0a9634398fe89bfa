package order

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

type item struct {
	key, seq int
}

func byKey(a, b *item) int { return cmp.Compare(a.key, b.key) }

// TestSortedIsSortStableFunc compares sorted with the standard library's
// stable sort on slices with many ties, and checks that the input is left
// as it was.
func TestSortedIsSortStableFunc(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 1000} {
		items := make([]item, n)
		for i := range items {
			items[i] = item{key: r.IntN(5), seq: i}
		}
		before := slices.Clone(items)
		want := slices.Clone(items)
		slices.SortStableFunc(want, func(a, b item) int { return byKey(&a, &b) })

		got := sorted(items, byKey)
		if diff := gocmp.Diff(want, got, gocmp.AllowUnexported(item{})); diff != "" {
			t.Errorf("%d items: (-want +got)\n%s", n, diff)
		}
		if diff := gocmp.Diff(before, items, gocmp.AllowUnexported(item{})); diff != "" {
			t.Errorf("%d items: the input changed (-before +after)\n%s", n, diff)
		}
	}
}
