// Package harness starts and drives the real components of the end-to-end
// suite on 127.0.0.1: etcd, kube-apiserver (a management cluster and
// stand-ins for ComputePlane clusters), Flux's kustomize-controller,
// helm-controller and source-watcher, and a loopback HTTP server that plays
// source-controller's artifact storage.
//
// Every process is started from a binary the Makefile built (bin/e2e), logs
// to a file of its own, is stopped by its PID in the test's Cleanup (and,
// should the test binary die, by the kernel through Pdeathsig), and every
// wait is bounded and reports what the component said last.
package harness
