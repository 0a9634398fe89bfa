// Command computeplane-fn renders Cozystack ComputePlanes as plain Flux
// objects: as a KRM function (ResourceList on stdin, for kpt and kustomize)
// or standalone (computeplane-fn CONFIG [INPUT...]), to stdout or, for fleet
// repos, into a folder (--output-dir, --check, --summary).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/computeplane-dev/computeplane-fn/fn"
	"github.com/computeplane-dev/computeplane-fn/internal/profiling"
	"github.com/computeplane-dev/computeplane-fn/internal/version"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/summary"
)

const usage = `computeplane-fn renders Cozystack ComputePlanes as plain Flux objects.

Usage:
  computeplane-fn                           KRM function: ResourceList on stdin, result on stdout
  computeplane-fn [flags] CONFIG [INPUT...] standalone: render CONFIG's inputs and INPUTs to stdout
  computeplane-fn --output-dir DIR [--check] [--summary FILE] CONFIG [INPUT...]
                                            fleet repo: write (or check) one file per object in DIR

INPUT and the config's spec.inputs are files, folders or globs, relative to
the working directory. Flags go before CONFIG.

With --output-dir, every generated object goes to DIR/<namespace>/<kind>-<name>.yaml;
files computeplane-fn wrote before (their documents carry the label
app.kubernetes.io/managed-by: computeplane-fn) and no longer generates are
removed, every other file is left alone, and a refused or failed run leaves
DIR as it was. --check writes nothing, prints a unified diff of what would
change and exits 1 when DIR is out of date.

Exit status: 0 done (or up to date), 1 refused, failed or out of date, 2 usage error.

Flags:
`

func main() {
	tuneGC(standalone(os.Args[1:]))
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// standalone reports whether args run the standalone CLI (a CONFIG is
// given) rather than the KRM function.
func standalone(args []string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}

// tuneGC trades memory the run can afford for collector time, unless the
// environment sets GOGC or GOMEMLIMIT: a run allocates its input's node
// trees file by file and drops them at once, so collecting half as often
// saves a good part of the collector's work, and the soft limit keeps the
// heap of a large fleet well under 1 GiB. See docs/performance.md.
//
// The KRM function gets no soft limit: kyaml holds the whole ResourceList,
// so a heap above the limit is no garbage, and the collector would only run
// without pause (three times the time for 1,000 tenants, and for hostile
// input near the limits of docs/limits.md, longer than a minute).
func tuneGC(standalone bool) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	if standalone && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(640 << 20)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// The last resort: a panic is a bug, reported as one and with exit
	// status 1 like any refusal, never as a Go stack trace. Nothing relies
	// on it: the hostile-input tests fail on this message.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "computeplane-fn: %s: %v\n", fn.BugMessage, r)
			code = 1
		}
	}()
	flags := flag.NewFlagSet("computeplane-fn", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = func() {
		fmt.Fprint(stderr, usage)
		flags.PrintDefaults()
	}
	outputDir := flags.String("output-dir", "", "write the output into `DIR`, one file per object, pruning what computeplane-fn wrote before and no longer generates")
	check := flags.Bool("check", false, "with --output-dir: write nothing; print a diff and exit 1 when DIR is out of date")
	summaryFile := flags.String("summary", "", "write a Markdown summary for a pull request comment to `FILE`")
	showVersion := flags.Bool("version", false, "print the module version and the commit this binary was built from, and exit")
	if err := flags.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Fprintln(stdout, version.Get())
		return 0
	}
	usageError := func(msg string) int {
		fmt.Fprintf(stderr, "computeplane-fn: %s (see computeplane-fn -h)\n", msg)
		return 2
	}
	if flags.NArg() == 0 {
		if *outputDir != "" || *check || *summaryFile != "" {
			return usageError("--output-dir, --check and --summary need a CONFIG")
		}
		return runKRM(stdin, stdout, stderr)
	}
	for _, arg := range flags.Args() {
		if strings.HasPrefix(arg, "-") {
			return usageError(fmt.Sprintf("%s after CONFIG: flags go before CONFIG", arg))
		}
	}
	if *check && *outputDir == "" {
		return usageError("--check needs --output-dir")
	}
	defer profiling.Start()()
	r, problems := fn.StandaloneRun("", flags.Arg(0), flags.Args()[1:])
	if len(problems) == 0 {
		profiling.Heap()
	}
	report := summary.Report{Problems: problems, Dir: *outputDir, Check: *check}
	status := 0
	if r != nil {
		// Warnings never change the exit status.
		for _, w := range r.Warnings {
			fmt.Fprintf(stderr, "computeplane-fn: warning: %s\n", w.Error())
		}
	}
	switch {
	case len(problems) > 0:
		fmt.Fprintln(stderr, problems.Error())
		status = 1
	case *outputDir == "":
		report.Fleet = r.Fleet
		if err := output.Encode(stdout, r.Objects); err != nil {
			fmt.Fprintf(stderr, "computeplane-fn: %v\n", err)
			return 1
		}
	default:
		report.Fleet = r.Fleet
		changes, err := runFolder(*outputDir, *check, r, stdout, stderr)
		report.Changes, report.Failure = changes, err
		switch {
		case err != nil:
			fmt.Fprintf(stderr, "computeplane-fn: %v\n", err)
			status = 1
		case *check && len(changes) > 0:
			fmt.Fprintf(stderr, "computeplane-fn: %s is out of date: %s; run without --check to write it\n", *outputDir, countChanges(changes))
			status = 1
		case *check:
			fmt.Fprintf(stderr, "computeplane-fn: %s is up to date\n", *outputDir)
		case len(changes) == 0:
			fmt.Fprintf(stderr, "computeplane-fn: %s is up to date; nothing written\n", *outputDir)
		default:
			fmt.Fprintf(stderr, "computeplane-fn: wrote %s: %s\n", *outputDir, countChanges(changes))
		}
	}
	if *summaryFile != "" {
		if err := writeSummary(*summaryFile, report); err != nil {
			fmt.Fprintf(stderr, "computeplane-fn: %v\n", err)
			return 1
		}
	}
	return status
}

// runFolder writes the fleet folder, or with check compares it and prints
// the diff, and returns the changes.
func runFolder(dir string, check bool, r *fn.Run, stdout, stderr io.Writer) (output.Changes, error) {
	files, problems := fn.OutputFiles(r)
	if len(problems) > 0 {
		return nil, problems
	}
	notWritten := 0
	for _, o := range r.Objects {
		if !o.Generated {
			notWritten++
		}
	}
	if notWritten > 0 {
		fmt.Fprintf(stderr, "computeplane-fn: note: %d objects that are not generated (kept inputs, objects passing through) are not written to %s; they stay in their own files\n", notWritten, dir)
	}
	if check {
		changes, err := output.CheckDir(dir, files)
		if err != nil {
			return nil, err
		}
		return changes, changes.WriteDiff(stdout)
	}
	// A Ctrl-C while files are moved into place must not stop the run half
	// way: the writer finishes or undoes, then the process exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	changes, err := output.WriteDirContext(ctx, dir, files)
	if errors.Is(err, context.Canceled) {
		return nil, fmt.Errorf("interrupted; %s was left as it was", dir)
	}
	return changes, err
}

func countChanges(cs output.Changes) string {
	return fmt.Sprintf("%d added, %d changed, %d removed", len(cs.Paths(output.Added)), len(cs.Paths(output.Changed)), len(cs.Paths(output.Removed)))
}

func writeSummary(file string, r summary.Report) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("failed to write summary: %w", err)
	}
	if err := summary.Write(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("failed to write summary: %w", err)
	}
	return nil
}

func runKRM(stdin io.Reader, stdout, stderr io.Writer) int {
	if err := fn.Execute(fn.Processor{}, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	return 0
}
