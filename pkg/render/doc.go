// Package render builds the output objects of computeplane-fn from a checked
// fleet, one file per output kind: the ArtifactGenerator source (source.go),
// the ComputePlane cluster HelmRelease and its values (cluster.go), on the
// SplitPools line its worker pools' releases and, under poolMigration
// Adopt, the hand-over of their MachineDeployments (pools.go), the app
// HelmReleases with their routing (release.go), and the hardening around the
// cluster: the Pod Security ConfigMap its API server loads (admission.go;
// its configuration and exemptions are package model's) and the
// egress policy of its VMs (egress.go). Objects are built from the upstream Go API
// types (Flux, core/v1), or from typed local structs where the upstream
// module would be too heavy (Cilium, the API server's admission config), and
// converted to YAML nodes with sorted keys.
//
// The cluster's values are the operator's fixed values, with the Pod
// Security wiring added, merged over the tenant's knobs
// (model.ClusterPlan.Values); the check stage (package model) has refused
// every knob outside the knob schema or on a fixed path, never overridden.
//
// Outputs renders every output of a checked fleet, unordered, and fails only
// on a bug: nothing here checks the user's input. Building and checking the
// fleet, adding what passes through and ordering are the pipeline's
// (packages model, order and pipeline).
//
// An Object holds its content as a Body: a node tree, text encoded already,
// or a release still to render. The
// releases of apps, whose values were encoded while the inputs were read
// (model.App.Values), are rendered only when a writer reaches them
// (Object.AppendYAML), over a spec rendered once per definition and routing;
// a tenant's cluster objects are held as text. docs/performance.md tells
// why.
package render
