// Package version tells which build of computeplane-fn is running: the
// module version and the commit it was built from.
//
// The Makefile stamps both at link time with -ldflags -X (see Stamp), for
// every build it makes: the Go environment of the project's machines sets
// GOFLAGS=-buildvcs=false, so the build info alone carries no commit. A
// build that is not stamped (go build, go install module@version) falls back
// to what the Go build info says: the module version that go install
// records, and vcs.revision where the build had VCS stamping on; what is
// known nowhere is printed as "unknown" (commit) or "(devel)" (version).
package version
