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
// (package clustervalues), app values that cannot be copied into a release
// (Reader), and inputs that would make the output copy too much
// (checkCopies). Build returns every problem at once, or a fleet that the
// render stage can render without failing on anything the user wrote; the
// warnings a person should read go with it (Fleet.Warnings).
//
// The model never reads the values it carries: an app's values are the
// text their release holds (App.Values), encoded by the function the
// pipeline gives the Reader.
package model
