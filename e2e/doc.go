// Package e2e runs the built computeplane-fn binary the ways users run it:
// as a kustomize generator (the kustomize CLI and the krusty library), as a
// KRM function on a ResourceList (kpt, kustomize transformers) and
// standalone, and checks that all of them print the same bytes, and that a
// kpt-style run on the function's own output changes nothing.
package e2e
