// Package crdtest lets tests check rendered objects the way a Kubernetes API
// server would admit them, without a cluster.
//
// [Load] reads CustomResourceDefinitions from a folder, normally
// <module root>/../shared/crds found with [SharedDir] (or both at once with
// [LoadShared]), and [Registry.Validate] checks an object against them: its
// kind and served version, its metadata (name, namespace, labels and
// annotation keys, with the API server's syntax rules) and its body against
// the version's openAPIV3Schema with package schema, unknown fields
// rejected as under strict field validation.
//
// x-kubernetes-validations CEL rules are not evaluated, since that needs a
// CEL interpreter; the registry records the ones it met and
// [Registry.SkippedRules] lists them so that a test can show what was not
// checked.
package crdtest
