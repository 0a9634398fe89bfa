// Package readback reads rendered YAML back the way the tools that apply it
// read it, for tests of the property "what is validated is what is
// applied" (docs/limits.md).
//
// The function validates and renders with go-yaml v3 (YAML 1.2 with the
// nodes' tags: yamlnode.ToValue). kubectl and Flux turn a manifest into JSON
// with sigs.k8s.io/yaml, a YAML 1.1 reader (go-yaml v2 underneath), before
// they apply it. Each output document must read as the same JSON to both.
package readback
