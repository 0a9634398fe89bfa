// Package image builds the computeplane-fn container image without a
// container engine, with go-containerregistry: from scratch, one layer
// holding the static binary as the entrypoint and the /etc/passwd and
// /etc/group that a non-root user needs, the OCI labels of the release, and
// every timestamp taken from the commit (SOURCE_DATE_EPOCH), so that the same
// binaries give the same image digest.
//
// It writes one docker-archive tarball per platform, tagged with the name the
// image is published under, which docker load and podman load accept, and an
// OCI image layout holding the multi-platform index, from which the release
// pipeline publishes (crane push, skopeo copy --all).
package image
