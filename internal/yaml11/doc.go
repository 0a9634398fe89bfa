// Package yaml11 says which strings a YAML 1.1 reader reads differently
// from the YAML library this project writes with.
//
// The project reads and writes YAML with go.yaml.in/yaml/v3, which resolves
// plain scalars almost as YAML 1.2 does: `yes`, `on`, `N` and `1:20` are
// strings to it, so its encoder writes such strings without quotes. The
// tools that apply the output read YAML 1.1: sigs.k8s.io/yaml (kubectl,
// Flux's controllers, Helm) resolves with go.yaml.in/yaml/v2, which takes
// `y`, `yes`, `on`, `n`, `no`, `off` in their case forms as booleans and a
// plain `<<` key as a merge key; PyYAML and other YAML 1.1 readers also
// take base-60 numbers such as `1:20` as numbers (go-yaml's own encoders
// quote those for them). Misread reports such strings, so that writers
// quote them. The tests derive the list from yaml.v2 itself.
package yaml11
