// Package profiling writes CPU and heap profiles of one run of the CLI, for
// `go tool pprof`, when the environment asks for them:
//
//	COMPUTEPLANE_FN_PROFILE=/tmp/prof computeplane-fn config.yaml > out.yaml
//	go tool pprof -top bin/computeplane-fn /tmp/prof/cpu.pprof
//
// It is how the performance work on large fleets was guided; see
// docs/performance.md.
package profiling
