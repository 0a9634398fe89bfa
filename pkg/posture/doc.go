// Package posture reads a tenant's isolation posture from rendered objects
// and states how it changes between two renders: whether the tenant has a
// ComputePlane, the Pod Security level and exemptions of its cluster, which
// of its apps the cluster's VMs may reach, where each app runs, whether the
// VMs may reach the ancestors' ingress, the cluster's node groups, the
// rights of routed apps inside the ComputePlane (the in-cluster baseline's
// grants and the rules of the ClusterRoles it defines), whether Cozystack's
// API may edit the routed releases, and the management-plane guard with its
// identities and the definitions whose kinds and charts it routes
// (docs/fleet-repo.md, "The posture change"). Beside the posture,
// [Lifecycle] states what a change does to what runs: apps added, removed
// or moved between clusters, clusters left running, apps that leave
// Cozystack's dashboard. Each change and fact
// names the input that caused it, where the objects tell it.
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
