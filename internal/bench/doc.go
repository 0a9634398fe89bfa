// Package bench measures computeplane-fn at fleet scale.
//
// Its Go benchmarks time the stages of one run on a generated mid-size fleet
// (read, index, render, serialize, and the whole standalone run):
//
//	go test -run '^$' -bench . -benchmem ./internal/bench/
//
// and cmd/fleetbench, run by `make bench`, renders fleets of 1,000 and
// 10,000 tenants through the built CLI and checks the targets of the
// product contract (time, memory, the serialization floor, growth).
package bench
