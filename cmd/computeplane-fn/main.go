// Command computeplane-fn renders Cozystack ComputePlanes as plain Flux
// objects: as a KRM function (ResourceList on stdin, for kpt and kustomize)
// or standalone (computeplane-fn CONFIG [INPUT...]), to stdout or, for fleet
// repos, into a folder (--output-dir, --check, --summary). The command line
// is in root.go; the modes it runs are here.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"

	"syscall"

	"github.com/computeplane-dev/computeplane-fn/fn"
	"github.com/computeplane-dev/computeplane-fn/internal/profiling"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/poolmove"
	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
	"github.com/computeplane-dev/computeplane-fn/pkg/summary"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, tuneGC))
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

// summaryFiles are where the pull-request summaries go ("" for none,
// stdoutName for stdout, after the output).
type summaryFiles struct {
	markdown, json string
	stdout         io.Writer
}

// stdoutName names stdout as a summary file.
const stdoutName = "-"

func (s summaryFiles) any() bool { return s.markdown != "" || s.json != "" }

// folderFlags are the flags of the fleet-folder mode.
type folderFlags struct {
	dir        string
	check      bool
	allowEmpty bool
	allowPrune bool
	// allowGuardMove consents to a render that moves the guard to another
	// Kustomization without the order that keeps it in force, once the
	// live objects are annotated not to be pruned (units.CheckGuardMove).
	allowGuardMove bool
	// base is the Git revision whose fleet folder the summaries compare the
	// render with ("" for the folder as it is).
	base      string
	summaries summaryFiles
}

// samePath reports whether a and b name the same file: the same path once
// made absolute, or, where both exist, the same file on disk.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	infoA, errA := os.Stat(a)
	infoB, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(infoA, infoB)
}

// runKRM runs the KRM function: a ResourceList on stdin, the result on
// stdout. Warnings go to stderr as well as into the results, since
// kustomize drops the results (the standalone modes print them in render,
// and do not run the processor, so no warning is printed twice).
func runKRM(stdin io.Reader, stdout, stderr io.Writer) int {
	if err := fn.Execute(fn.Processor{Warnings: stderr}, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, err.Error())
		return 1
	}
	return 0
}

// runStandalone renders CONFIG's inputs and inputs to stdout as one YAML
// stream.
func runStandalone(summaries summaryFiles, config string, inputs []string, stdout, stderr io.Writer) int {
	r, problems := render(pipeline.Options{ConfigFile: config, Inputs: inputs}, stderr)
	report := summary.Report{Problems: problems}
	if len(problems) > 0 {
		fmt.Fprintln(stderr, problems.Error())
		return summaries.write(report, false, 1, stderr)
	}
	report.Fleet = r.Fleet
	if err := output.Encode(stdout, r.Objects); err != nil {
		fmt.Fprintf(stderr, "computeplane-fn: %v\n", err)
		return 1
	}
	return summaries.write(report, true, 0, stderr)
}

// runFleetFolder renders into the fleet folder f.dir, or with f.check
// compares it and prints the diff, and states the posture change in the
// summaries: from what f.dir holds, or with f.base from what it holds at
// that Git revision.
func runFleetFolder(f folderFlags, configFile string, config *api.Config, inputs []string, stdout, stderr io.Writer) int {
	r, problems := render(pipeline.Options{Config: config, ConfigDir: filepath.Dir(configFile), Inputs: inputs}, stderr)
	report := summary.Report{Problems: problems, Dir: f.dir, Check: f.check, Base: f.base}
	if len(problems) > 0 {
		fmt.Fprintln(stderr, problems.Error())
		return f.summaries.write(report, false, 1, stderr)
	}
	files, problems := units.Files(r.Config, r.Objects)
	if len(problems) > 0 {
		fmt.Fprintln(stderr, problems.Error())
		return f.summaries.write(report, false, 1, stderr)
	}
	opts := output.DirOptions{Fleet: fleetIdentity(f.dir, configFile), Gone: configGone(f.dir), Places: units.Places(r.Config), AllowPrune: f.allowPrune}
	if msg := emptyFleet(f.dir, r, files, opts); msg != "" {
		if !f.allowEmpty {
			fmt.Fprintf(stderr, "computeplane-fn: %s; %s was left as it was (--allow-empty if that is meant)\n", msg, f.dir)
			report.Refusal = msg + " (--allow-empty if that is meant)"
			return f.summaries.write(report, false, 1, stderr)
		}
		// Emptying the fleet is meant: so is removing its files.
		opts.AllowPrune = true
	}
	// The earlier render, which a render must be able to follow: the
	// folder as it is, and with a base, the folder at the base.
	disk, err := units.OpenLayout(f.dir, f.dir)
	if err != nil {
		report.Failure = err
		fmt.Fprintf(stderr, "computeplane-fn: %v\n", err)
		return f.summaries.write(report, false, 1, stderr)
	}
	defer disk.Close()
	if err := poolmove.Check(r.Config, files, disk); err != nil {
		fmt.Fprintf(stderr, "computeplane-fn: %v; %s was left as it was\n", err, f.dir)
		report.Refusal = err.Error()
		return f.summaries.write(report, false, 1, stderr)
	}
	report.Fleet = r.Fleet
	earlier := []*units.Layout{disk}
	var base []output.File
	if f.base != "" {
		var err error
		if base, report.BaseCommit, err = readBase(f.dir, f.base); err != nil {
			report.Failure = err
			fmt.Fprintf(stderr, "computeplane-fn: %v; %s was left as it was\n", err, f.dir)
			return f.summaries.write(report, false, 1, stderr)
		}
		atBase := units.FilesLayout(base, f.dir+" at "+f.base)
		if err := poolmove.Check(r.Config, files, atBase); err != nil {
			fmt.Fprintf(stderr, "computeplane-fn: %v; %s was left as it was\n", err, f.dir)
			report.Fleet, report.Refusal = nil, err.Error()
			return f.summaries.write(report, false, 1, stderr)
		}
		earlier = append(earlier, atBase)
	}
	if !f.allowGuardMove {
		if err := units.CheckGuardMove(r.Config, units.FilesLayout(files, "the render"), earlier...); err != nil {
			var move *units.GuardMoveError
			if errors.As(err, &move) {
				msg := move.Message("--allow-guard-move")
				fmt.Fprintf(stderr, "computeplane-fn: %s\n%s was left as it was\n", msg, f.dir)
				// A refusal, like --allow-empty's: the summary states it
				// in place of the fleet.
				report.Fleet, report.Refusal = nil, msg
			} else {
				report.Failure = err
				fmt.Fprintf(stderr, "computeplane-fn: %v; %s was left as it was\n", err, f.dir)
			}
			return f.summaries.write(report, false, 1, stderr)
		}
	}
	// The posture is read only for a summary: the writer then keeps the
	// documents it parses for a moment longer. With a base, the base's
	// files are compared instead of the folder's.
	var collected *posture.Collector
	if f.summaries.any() {
		collected = posture.NewCollector()
		if f.base == "" {
			opts.Read = collected.Read
		}
	}
	changes, err := runFolder(f.dir, f.check, r, files, opts, stdout, stderr)
	report.Changes, report.Failure = changes, err
	if err == nil && f.base != "" && collected != nil {
		compare := opts
		compare.Read = collected.Read
		if report.BaseChanges, err = output.Compare(base, files, compare); err != nil {
			err = fmt.Errorf("failed to compare the render with the base %s: %w", f.base, err)
			report.Failure = err
		}
	}
	var reviewErr error
	if err == nil && collected != nil {
		if report.Review, reviewErr = posture.Review(r.Objects, collected); reviewErr != nil {
			fmt.Fprintf(stderr, "computeplane-fn: failed to review the posture change: %v\n", reviewErr)
		}
	}
	status := 0
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "computeplane-fn: %v\n", err)
		status = 1
	case f.check && len(changes) > 0:
		fmt.Fprintf(stderr, "computeplane-fn: %s is out of date: %s; run without --check to write it\n", f.dir, countChanges(changes))
		status = 1
	case f.check:
		fmt.Fprintf(stderr, "computeplane-fn: %s is up to date\n", f.dir)
	case len(changes) == 0:
		fmt.Fprintf(stderr, "computeplane-fn: %s is up to date; nothing written\n", f.dir)
	default:
		fmt.Fprintf(stderr, "computeplane-fn: wrote %s: %s\n", f.dir, countChanges(changes))
	}
	if err == nil && f.base != "" {
		fmt.Fprintf(stderr, "computeplane-fn: from the base %s, the render %s\n", f.base, countBaseChanges(report.BaseChanges))
	}
	if reviewErr != nil {
		status = 1
	}
	return f.summaries.write(report, err == nil && reviewErr == nil, status, stderr)
}

// render runs the pipeline on config and inputs and prints its warnings,
// which never change the exit status.
func render(opts pipeline.Options, stderr io.Writer) (*pipeline.Result, api.Problems) {
	r, problems := pipeline.Run(opts)
	if len(problems) > 0 {
		return nil, problems
	}
	profiling.Heap()
	for _, w := range r.Warnings {
		fmt.Fprintf(stderr, "%s%s\n", fn.WarningPrefix, w.Error())
	}
	return r, nil
}

// write writes the summaries of report and returns the exit status: status,
// or 1 when a summary could not be written. A run without a verdict (refused,
// failed, or its posture change not reviewed) writes no JSON summary and
// removes one left from before, so that it cannot pass for this run's.
func (s summaryFiles) write(report summary.Report, verdict bool, status int, stderr io.Writer) int {
	if s.markdown != "" {
		if err := s.writeSummary(s.markdown, report, summary.Write); err != nil {
			fmt.Fprintf(stderr, "computeplane-fn: %v\n", err)
			return 1
		}
	}
	if s.json != "" {
		var err error
		if verdict {
			err = s.writeSummary(s.json, report, summary.WriteJSON)
		} else if err = removeSummary(s.json); errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err != nil {
			fmt.Fprintf(stderr, "computeplane-fn: %v\n", err)
			return 1
		}
	}
	return status
}

// emptyFleet says why a render must not be written to the fleet folder dir
// without --allow-empty: its inputs hold no object at all (a mistyped
// input pattern, an empty checkout), or it has no tenant and would remove
// files of the fleet dir holds. "" when neither.
func emptyFleet(dir string, r *pipeline.Result, files []output.File, opts output.DirOptions) string {
	f := r.Fleet
	for _, t := range f.Tenants {
		if t.Object != nil || len(t.Apps) > 0 {
			return ""
		}
	}
	if len(f.Definitions) == 0 && len(f.Apps) == 0 && len(f.Inputs) == 0 && len(f.Passthrough) == 0 {
		return "the inputs hold no object at all"
	}
	opts.Check = true
	changes, err := output.WriteDir(context.Background(), dir, files, opts)
	if err != nil {
		return ""
	}
	if removed := len(changes.Paths(output.Removed)); removed > 0 {
		return fmt.Sprintf("the render has no tenant and would remove %d files of the fleet", removed)
	}
	return ""
}

// runFolder writes files into the fleet folder, or with check compares it
// and prints the diff, and returns the changes.
func runFolder(dir string, check bool, r *pipeline.Result, files []output.File, opts output.DirOptions, stdout, stderr io.Writer) (output.Changes, error) {
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
		opts.Check = true
		changes, err := output.WriteDir(context.Background(), dir, files, opts)
		if err != nil {
			return nil, err
		}
		return changes, changes.WriteDiff(stdout)
	}
	// A Ctrl-C while files are moved into place must not stop the run half
	// way: the writer finishes or undoes, then the process exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	changes, err := output.WriteDir(ctx, dir, files, opts)
	var prune *output.PruneError
	switch {
	case errors.Is(err, context.Canceled):
		return nil, fmt.Errorf("interrupted; %s was left as it was", dir)
	case errors.As(err, &prune):
		return nil, errors.New(prune.Message("--allow-prune (if that is meant)"))
	}
	return changes, err
}

func countChanges(cs output.Changes) string {
	return fmt.Sprintf("%d added, %d changed, %d removed", len(cs.Paths(output.Added)), len(cs.Paths(output.Changed)), len(cs.Paths(output.Removed)))
}

func (s summaryFiles) writeSummary(file string, r summary.Report, write func(io.Writer, summary.Report) error) error {
	if file == stdoutName {
		return write(s.stdout, r)
	}
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("failed to write summary: %w", err)
	}
	if err := write(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("failed to write summary: %w", err)
	}
	return nil
}

// removeSummary removes a summary file left from before; stdout has none.
func removeSummary(file string) error {
	if file == stdoutName {
		return nil
	}
	return os.Remove(file)
}
