// Package clustervalues holds the values of every ComputePlane cluster that
// delivery: Direct renders, and checks what a tenant may set of them: the
// operator-fixed values (the config's spec.cluster.values or the defaults)
// with the Pod Security wiring added (admission.go, with the addon
// namespaces it exempts in exemptions.go), the knob schema, the paths no
// knob may touch whatever the schema says (operatoronly.go) and the node
// group names the chart writes unquoted (nodegroups.go).
//
// It belongs to the check stage: New refuses a config whose values or knob
// schema cannot be used, and Plan.Check refuses a tenant's knobs, each
// problem with its object, field and file. What passes is merged by
// Plan.Values, which cannot fail, when the cluster's release is rendered
// (package render). A knob outside the knob schema or on a fixed path is
// refused, never overridden.
package clustervalues
