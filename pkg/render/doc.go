// Package render builds the output objects of computeplane-fn from a checked
// fleet, one file per output kind: the ArtifactGenerator source (source.go),
// the ComputePlane cluster HelmRelease and its values (cluster.go), the app
// HelmReleases with their routing (release.go), and the hardening around the
// cluster (admission.go, egress.go). Objects are built from the upstream Go
// API types of Flux and converted to YAML nodes in the types' field order.
//
// Assemble then adds what passes through, refuses two writers of one object
// and puts everything in the one stable order: platform objects first, then
// by namespace, kind and name.
package render
