// Package stablesort sorts slices of large values stably, moving each value
// once: the objects of a fleet are many and each is a large struct, and
// slices.SortStableFunc moves them again and again as it merges. It sorts
// their indices instead, ties broken by index, and then copies the values
// into place.
package stablesort
