// Package fleet turns the decoded inputs into one checked model of the
// fleet: the ApplicationDefinitions indexed by kind, the tenant tree with
// Cozystack's namespaces, each tenant's ComputePlane and knobs, and every app
// with its definition, tenant and placement.
//
// Every cross-object rule of the contract that does not depend on rendered
// output is checked here: unknown app kinds, two definitions of one kind,
// unknown parent tenants, ComputePlane apps without a ComputePlane in their
// own tenant (never an ancestor's), release names that are too long or taken
// by the cluster, knob objects where no cluster takes them, and a Direct
// delivery next to the platform's own ComputePlane module.
package fleet
