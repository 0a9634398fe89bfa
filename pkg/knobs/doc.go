// Package knobs checks a tenant's knobs (the apps/kubernetes values that its
// ComputePlane object sets) against the operator's knob schema, the way a
// Kubernetes API server checks a custom resource against the schema of its
// CustomResourceDefinition, with the API server's own packages:
//
//   - [Compile] turns the schema into a structural schema
//     (k8s.io/apiextensions-apiserver/pkg/apiserver/schema) and refuses one
//     the API server would refuse in a CustomResourceDefinition: $ref,
//     patternProperties, a field without a type, and so on. The knob schema
//     is compiled as the property spec of an object, as the spec of a custom
//     resource is, so that its root may be any object schema.
//   - [Schema.Validate] prunes a copy of the knobs and refuses every field
//     the schema does not declare, with its path, as the API server does
//     under strict field validation (pruning); checks the values with
//     kube-openapi's validator, the one behind the API server's (types,
//     formats, enums, patterns, bounds, required, ...); and checks
//     x-kubernetes-list-type set and map (listtype).
//
// additionalProperties: false is accepted and dropped: a structural schema
// already prunes what properties does not declare, and pruned fields are
// refused here, so it adds nothing (the API server forbids it beside
// properties). x-kubernetes-validations (CEL) rules are refused in a knob
// schema, because evaluating them needs the CEL interpreter, which this
// function does not ship; a rule that is not evaluated would be a check the
// operator believes in and nobody runs. Defaults are not applied: the knobs
// go to the chart as the tenant wrote them, so a required field must be set.
//
// [Schema.CheckValues] is Check field by field, for many objects of a
// large schema (an ApplicationDefinition's, package model checks every
// app against it), and [Schema.Suspect] reads an object's [Shape], taken
// when it was read, to tell in one pass without allocating whether
// CheckValues may find anything in it.
//
// [Schema.Check] is the API server's checks alone, each violation with the
// schema keyword it breaks: package api checks the function config's spec
// with it against the config's JSON Schema, and words its own messages.
//
// Paths are written as the API server writes them: spec.nodeGroups.md0.roles[0].
package knobs
