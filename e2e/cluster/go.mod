// Module e2e/cluster is the real-control-plane suite (make e2e): etcd,
// kube-apiserver and Flux's controllers, built by the Makefile into bin/e2e,
// reconcile what bin/computeplane-fn renders. A module of its own so that
// the main module's `go test ./...` (make test) never runs it and the main
// go.mod carries none of its dependencies.
module github.com/computeplane-dev/computeplane-fn/e2e/cluster

go 1.26.0
