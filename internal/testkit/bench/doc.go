// Package bench measures computeplane-fn at fleet scale: cmd/fleetbench,
// run by `make bench`, renders fleets of 1,000 and 10,000 tenants through
// the built CLI and checks the targets of the product contract (time,
// memory, the serialization floor, growth); this package measures the
// floor. The stage benchmarks of one run live beside the pipeline
// (go test -run '^$' -bench . -benchmem ./pkg/pipeline/).
package bench
