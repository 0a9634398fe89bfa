// Package testkit holds, below it, what only the project's tests,
// benchmarks and doc generator use: oracles that judge the output the way
// the real components do (crdtest, ciliumeval), synthetic fleets
// (fleetgen), the benchmark (bench), a test file system (testfs) and the
// generator of the config reference (configdoc). The binary never links
// any of it: TestProductNeverLinksTestkit checks the import graph of every
// package outside it.
package testkit
