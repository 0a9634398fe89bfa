// Package model is the check stage: it turns the decoded inputs into one
// checked model of the fleet: the ApplicationDefinitions indexed by kind,
// the tenant tree with Cozystack's namespaces, each tenant's ComputePlane
// and knobs, and every app with its definition, tenant and placement.
//
// Every rule of the contract on the user's input is checked here or before
// (the decoders of package api, the reader of package input): unknown app
// kinds, two definitions of one kind, unknown parent tenants, ComputePlane
// apps without a ComputePlane in their own tenant (never an ancestor's),
// release names that are too long or taken by the cluster, knob objects
// where no cluster takes them, a Direct delivery next to the platform's own
// ComputePlane module, the cluster values and every tenant's knobs
// (ClusterPlan), app values that cannot be copied into a release
// (Reader), app values that break their definition's openAPISchema
// (appvalues.go: a warning, or a problem under spec.apps.values: Refuse),
// and inputs that would make the output copy too much
// (checkCopies). Build returns every problem at once, or a fleet that the
// render stage can render without failing on anything the user wrote; the
// warnings a person should read go with it (Fleet.Warnings).
//
// The cluster's values (the cluster_*.go files) are those of every
// ComputePlane cluster that delivery: Direct renders: the operator-fixed
// values (the config's spec.cluster.values or the defaults) with the Pod
// Security wiring added (cluster_admission.go, with the addon namespaces it
// exempts in cluster_exemptions.go), the knob schema, the paths no knob may
// touch whatever the schema says (cluster_operatoronly.go) and the node
// group names the chart writes unquoted (cluster_nodegroups.go).
// NewClusterPlan refuses a config whose values or knob schema cannot be
// used, and ClusterPlan.Check a tenant's knobs; what passes is merged by
// ClusterPlan.Values, which cannot fail, when the render writes the
// cluster's release. A knob outside the knob schema or on a fixed path is
// refused, never overridden.
//
// The model reads the values it carries only to check them: an app's
// values are the text their release holds (App.Values), encoded by the
// function the pipeline gives the Reader, and the Reader keeps their shape
// (knobs.Shape) for the check against the definition's schema, which
// decodes the text again only for the apps whose shape may break it.
package model
