// Package crdtest lets tests check rendered objects the way a Kubernetes API
// server would admit them, without a cluster, with the API server's own
// packages (k8s.io/apiextensions-apiserver and apimachinery).
//
// [Load] reads CustomResourceDefinitions from a folder, normally
// <module root>/../shared/crds found with [SharedDir] (or both at once with
// [LoadShared]), and checks each as the API server checks a definition that
// is created. [Registry.Validate] then checks an object as the API server
// checks a custom resource created under strict field validation: its kind
// and served version; its metadata ([ValidateMetadata]: decoded strictly into
// ObjectMeta and checked by apimachinery's ValidateObjectMeta); and its body
// against the version's structural schema ([Schema.Validate]): pruning, each
// pruned field reported as an unknown field, defaulting, value validation,
// embedded resources, list types and the x-kubernetes-validations CEL rules
// with the API server's cost budget. [CompileSpec] compiles the schema of a
// resource's spec alone, such as a Helm chart's values schema.
//
// It is for tests only: the API server's validation and CEL packages add
// megabytes that the function's binary does without (package knobs checks
// knobs with the light parts of the same code).
package crdtest
