// Package sbom writes the SBOM of computeplane-fn's release binaries as
// CycloneDX JSON, made by the library of cyclonedx-gomod (its bin generator:
// every module a binary links, read from the binary's build info as go
// version -m prints it, with its go.sum hash and the license detected from
// the module cache) and encoded by cyclonedx-go. One SBOM covers every
// release binary: a module is listed once, with the binaries that link it.
//
// What the generator leaves to its caller is set so that one commit always
// gives the same bytes: the timestamp is the commit's (SOURCE_DATE_EPOCH),
// the serial number a name-based UUID of the module and commit, the package
// URLs carry no host GOOS/GOARCH, the components are sorted, and the main
// component's version is the version stamped into the binaries.
package sbom
