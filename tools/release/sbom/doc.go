// Package sbom writes the SBOM of computeplane-fn's module graph as
// CycloneDX JSON, made by the library of cyclonedx-gomod (its mod
// generator: every module the main module's packages need, test-only
// modules left out, with their hashes from go.sum and licenses detected from
// the module cache) and encoded by cyclonedx-go.
//
// What the generator leaves to its caller is set so that one commit always
// gives the same bytes: the timestamp is the commit's (SOURCE_DATE_EPOCH),
// the serial number a name-based UUID of the module and commit, the package
// URLs carry no host GOOS/GOARCH, and the main component's version is the
// version stamped into the binaries, not one guessed from Git.
package sbom
