// Package disttest tests what make dist and make image wrote into dist/,
// the way a user and a registry would look at it: the binaries are static
// and reproducible and print their version, SHA256SUMS verifies, the SBOM
// parses and lists the module's dependencies, and the image tarballs read
// back with go-containerregistry hold a non-root, shell-less image whose
// binary renders the quickstart fleet byte for byte like make demo.
//
// make dist-test runs it with the environment it needs (DIST_DIR,
// PROJECT_DIR, RELEASE_VERSION, RELEASE_COMMIT, SOURCE_DATE_EPOCH,
// KUSTOMIZE); without DIST_DIR every test skips, saying so.
package disttest
