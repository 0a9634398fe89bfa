// Package ciliumeval decides, for tests, whether Cilium network policies let
// one endpoint open a connection to another, the way the Cilium agent
// decides it, for the part of the policy language that computeplane-fn
// writes and that Cozystack's tenant baseline uses: egress and egressDeny
// rules with toEndpoints and toEntities, narrowed or not by toPorts (numeric
// ports, endPort ranges, TCP, UDP, SCTP or ANY), and enableDefaultDeny.
//
// It is an imitation, written for the tests because the Cilium agent cannot
// run here: it decides from the policy text as Cilium's policy repository
// resolves it (deny before allow, whatever the specificity; a rule without
// toPorts covers every protocol and port, ICMP included; port 0 is every
// port), not from the BPF policy map the datapath looks up. A [Flow] is the
// destination port as the destination pod sees it, after Service
// translation, which is what Cilium's policy sees.
//
// An [Endpoint] is a pod (namespace, pod labels, namespace labels) or a
// reserved entity such as kube-apiserver or world. Its identity is what
// Cilium derives: each pod label with the source prefix "k8s:", the
// namespace as k8s:io.kubernetes.pod.namespace, each namespace label as
// k8s:io.cilium.k8s.namespace.labels.<key>, and reserved:<entity> for an
// entity.
//
// Selectors follow Cilium: a key without a source prefix matches a label of
// any source; matchLabels and matchExpressions (In, NotIn, Exists,
// DoesNotExist) are ANDed, and NotIn and DoesNotExist match an absent label.
// A CiliumNetworkPolicy selects only endpoints of its own namespace, and a
// peer selector that names neither the namespace nor a namespace label is
// confined to the policy's namespace too; a clusterwide policy's selectors
// match only pods. An egress connection is denied when any policy selecting
// the source has a deny rule matching the destination (deny wins over
// allow); otherwise, when any of them puts the source in default-deny, an
// allow rule must match; otherwise it is allowed.
//
// [Parse] refuses what the evaluator does not model (named ports, other
// protocols, L7 rules, icmps, CIDRs, FQDNs, services, node selectors...) and what Cilium itself refuses (a rule that
// combines kinds of peer, malformed selector requirements), so that a test
// never passes on a field that was silently ignored.
package ciliumeval
