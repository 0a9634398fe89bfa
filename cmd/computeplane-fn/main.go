// Command computeplane-fn renders Cozystack ComputePlanes as plain Flux
// objects: as a KRM function (ResourceList on stdin, for kpt and kustomize)
// or standalone (computeplane-fn CONFIG [INPUT...]).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/computeplane-dev/computeplane-fn/fn"
	"github.com/computeplane-dev/computeplane-fn/internal/profiling"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
)

const usage = `computeplane-fn renders Cozystack ComputePlanes as plain Flux objects.

Usage:
  computeplane-fn                          KRM function: ResourceList on stdin, result on stdout
  computeplane-fn [flags] CONFIG [INPUT...] standalone: render CONFIG's inputs and INPUTs to stdout

INPUT and the config's spec.inputs are files, folders or globs, relative to
the working directory.

Flags:
`

func main() {
	tuneGC()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// tuneGC trades memory the run can afford for collector time, unless the
// environment sets GOGC or GOMEMLIMIT: a run allocates its input's node
// trees file by file and drops them at once, so collecting half as often
// saves a good part of the collector's work, and the soft limit keeps the
// heap of a large fleet well under 1 GiB. See docs/performance.md.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(640 << 20)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "computeplane-fn: internal error (this is a bug, please report it): %v\n", r)
			code = 2
		}
	}()
	flags := flag.NewFlagSet("computeplane-fn", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprint(stderr, usage)
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if flags.NArg() == 0 {
		return runKRM(stdin, stdout, stderr)
	}
	defer profiling.Start()()
	objs, problems := fn.Standalone("", flags.Arg(0), flags.Args()[1:])
	if len(problems) > 0 {
		fmt.Fprintln(stderr, problems.Error())
		return 1
	}
	profiling.Heap()
	if err := output.Encode(stdout, objs); err != nil {
		fmt.Fprintf(stderr, "computeplane-fn: %v\n", err)
		return 1
	}
	return 0
}

func runKRM(stdin io.Reader, stdout, stderr io.Writer) int {
	rw := &kio.ByteReadWriter{Reader: stdin, Writer: stdout, KeepReaderAnnotations: true}
	if err := framework.Execute(fn.Processor{}, rw); err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	return 0
}
