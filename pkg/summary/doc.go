// Package summary writes the Markdown report of a fleet-repo run for a pull
// request comment: the app values that break their definition's schema,
// how each tenant's isolation posture changes (weakening first, each with
// the input that caused it), the lifecycle facts of the change (apps added,
// removed or moved between clusters, clusters left running, apps that leave
// Cozystack's dashboard), the tenants, whether each has a ComputePlane,
// which apps are routed onto it and which stay on the management plane, and
// what the run changes in the fleet folder. Long lists are folded and cut so that the
// report stays readable, and within GitHub's comment size, at any fleet size.
package summary
