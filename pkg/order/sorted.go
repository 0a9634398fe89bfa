package order

// The objects of a fleet are many and each is a large struct, and
// slices.SortStableFunc moves them again and again as it merges; sorted sorts
// their indices instead, ties broken by index, and then copies each value
// into place once.

import (
	"cmp"
	"slices"
)

// sorted returns a new slice of the items in the order of compare, items
// that compare equal in the order given: what slices.SortStableFunc would
// leave, without changing items. compare takes pointers so that it copies
// no item either.
func sorted[T any](items []T, compare func(a, b *T) int) []T {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(compare(&items[a], &items[b]), cmp.Compare(a, b))
	})
	out := make([]T, len(items))
	for i, j := range idx {
		out[i] = items[j]
	}
	return out
}
