// Package cluster is the real-control-plane suite of computeplane-fn
// (make e2e): what the function renders is applied to a real kube-apiserver
// and reconciled by Flux's real kustomize-controller, helm-controller and
// source-watcher, with routed releases landing in a second API server that
// stands in for a tenant's ComputePlane cluster. The charts are stand-ins
// (KubeVirt and Kamaji cannot run here): each renders one ConfigMap named
// after the release, holding its namespace and values; the RealChart stage
// installs Cozystack's real apps/kubernetes chart instead, with stand-ins
// only for the CRDs KubeVirt's operators create at run time, and the
// RealChartPools and RealChartPoolsMove stages Cozystack's split charts
// (apps/kubernetes and apps/kubernetes-nodes of cozystack#3315).
//
// The tests run under one TestControlPlane so that the components start
// once; its subtests can be picked with -run (E2E_RUN in make e2e).
package cluster
