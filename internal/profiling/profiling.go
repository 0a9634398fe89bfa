package profiling

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
)

// EnvVar names the folder profiles are written to.
const EnvVar = "COMPUTEPLANE_FN_PROFILE"

// Start begins a CPU profile when EnvVar is set and returns the function
// that ends it; Heap writes the heap profile. Both do nothing otherwise.
// Failures are reported on stderr and never change the run's outcome.
func Start() (stop func()) {
	dir := os.Getenv(EnvVar)
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "computeplane-fn: profile: %v\n", err)
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, "cpu.pprof"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "computeplane-fn: profile: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "computeplane-fn: profile: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// Heap writes the live heap, after a collection, to heap.pprof; call it
// where the run holds the most (before the rendered objects are dropped).
func Heap() {
	dir := os.Getenv(EnvVar)
	if dir == "" {
		return
	}
	runtime.GC()
	f, err := os.Create(filepath.Join(dir, "heap.pprof"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "computeplane-fn: profile: %v\n", err)
		return
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		fmt.Fprintf(os.Stderr, "computeplane-fn: profile: %v\n", err)
	}
}
