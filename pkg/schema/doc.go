// Package schema validates JSON-like Go values against an OpenAPI v3 schema
// the way a Kubernetes API server validates a custom resource against the
// openAPIV3Schema of its CustomResourceDefinition.
//
// A [Schema] is compiled once from JSON or YAML ([Compile]) or from a decoded
// value ([CompileValue]) and can then validate any number of values, from any
// number of goroutines. [Schema.Validate] returns every [Violation] it finds,
// each with a dotted field path from the validated root such as
// "nodeGroups.md0.roles[0]", sorted by path and then message.
//
// Value-level keywords (type, format, enum, pattern, lengths, bounds,
// required, uniqueItems, ...) are checked by kube-openapi's validator, the
// one the API server uses. The walk through the structure is done here, so
// that paths are exact and so that the API server's structural rules apply:
//
//   - A field that no properties, patternProperties or additionalProperties
//     declares is an "unknown field" (the API server prunes it, and rejects
//     it under strict field validation), unless the object schema, or one of
//     its allOf/anyOf/oneOf branches, says x-kubernetes-preserve-unknown-fields
//     or allows additionalProperties. [Schema.AllowUnknown] turns this off;
//     an explicit additionalProperties: false still applies.
//   - x-kubernetes-int-or-string accepts an integer or a string;
//     x-kubernetes-embedded-resource requires apiVersion and kind and allows
//     metadata; x-kubernetes-list-type set and map forbid duplicates.
//   - A null value of a property that is not nullable counts as absent, and
//     an absent property with a default counts as present, as after the API
//     server's pruning and defaulting.
//
// x-kubernetes-validations (CEL) rules are not evaluated: [Schema.SkippedRules]
// lists the ones that apply to a value so that callers can show them.
// Local $ref ("#/definitions/x", "#/$defs/x") are resolved; other references
// and the JSON Schema "dependencies" keyword are not supported.
//
// Validate never panics, whatever the value: a value that is not JSON-like
// is converted through encoding/json, and what cannot be converted is a
// violation. A schema that cannot be compiled is an error from Compile.
package schema
