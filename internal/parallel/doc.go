// Package parallel runs independent steps of one run on all cores and hands
// their results back in order, so that the output of a parallel run is the
// output of the sequential one.
package parallel
