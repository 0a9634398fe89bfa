// Package release is the root of the release tooling of computeplane-fn: a
// Go module of its own, so that the function's module (and binary) never
// depends on what only a release needs.
//
//   - image: the function's container image, built with go-containerregistry
//     from scratch around the static linux binaries of make dist.
//   - sbom: a CycloneDX SBOM of the function's module graph, made by
//     cyclonedx-gomod's library.
//   - checksums: dist/SHA256SUMS, in the format of sha256sum.
//   - cmd/release: the command the Makefile runs (make dist, make image).
//   - disttest: tests of what make dist and make image wrote (make dist-test).
//
// See docs/release.md.
package release
