// Package posture reads a tenant's isolation posture from rendered objects
// and states how it changes between two renders: whether the tenant has a
// ComputePlane, the Pod Security level and exemptions of its cluster, which
// of its apps the cluster's VMs may reach, where each app runs, whether the
// VMs may reach the ancestors' ingress, the cluster's node groups, and the
// management-plane guard with its identities (docs/fleet-repo.md, "The posture change").
//
// Both sides are read the same way, from the objects alone, never from the
// inputs that made them: the committed fleet folder holds only objects, and
// what is enforced is what the objects say (the egress policy, not the
// annotation copied onto a release). [ReadDocument] turns one object into a
// [Record]; [Assemble] puts a side's records together into a [State];
// [Compare] lists the [Change]s from one State to another, weakening first.
//
// A review reads few objects: the folder writer parses the files that change
// anyway (output.Reader hands their documents over), and [Review] adds only
// the unchanged posture objects (cluster release, admission ConfigMap, egress
// policy) of the namespaces those files are in. Unchanged files are the same
// on both sides, so they can change nothing but the reading of their
// neighbours.
package posture
