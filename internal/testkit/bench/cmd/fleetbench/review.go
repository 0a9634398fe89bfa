package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/fleetgen"
)

// reviewMain measures what the posture review (--summary, --summary-json)
// adds to a fleet-folder check: it commits the render of a generated fleet
// to a folder, edits the committed folder the way an older commit would
// differ (every step-th admission ConfigMap at another level, so that those
// tenants' posture changes), and then, reps times, alternates
// `--output-dir DIR --check` without and with both summaries, so that a
// change of load hits both alike. It prints the best times and their ratio.
//
//	fleetbench review [-bin bin/computeplane-fn] [-tenants 10000] [-reps 3] [-every 100] [-work .work/bench]
func reviewMain(args []string) int {
	flags := flag.NewFlagSet("fleetbench review", flag.ContinueOnError)
	bin := flags.String("bin", "bin/computeplane-fn", "the computeplane-fn binary to measure")
	tenants := flags.Int("tenants", 10000, "fleet size in tenants")
	reps := flags.Int("reps", 3, "runs of each kind; the best counts")
	every := flags.Int("every", 100, "change the posture of every n-th ComputePlane in the committed folder (0: leave it up to date)")
	work := flags.String("work", ".work/bench", "folder for the generated fleet and the committed folder")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	binPath, err := filepath.Abs(*bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		return 2
	}
	dir, _, err := ensureFleet(filepath.Join(*work, fmt.Sprintf("fleet-%d", *tenants)), *tenants)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		return 1
	}
	committed := filepath.Join(dir, "committed")
	if err := os.RemoveAll(committed); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		return 1
	}
	if _, err := runCLI(binPath, dir, "--output-dir", committed, fleetgen.ConfigFile); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench: commit:", err)
		return 1
	}
	edited, err := editAdmission(committed, *every)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		return 1
	}
	fmt.Printf("fleetbench review: %d tenants, %d committed admission ConfigMaps edited; --check without and with --summary/--summary-json, best of %d\n", *tenants, edited, *reps)
	plain := []string{"--output-dir", committed, "--check", fleetgen.ConfigFile}
	review := []string{"--output-dir", committed, "--check", "--summary", filepath.Join(dir, "summary.md"), "--summary-json", filepath.Join(dir, "summary.json"), fleetgen.ConfigFile}
	var without, with, cpuWithout, cpuWith []time.Duration
	for rep := 1; rep <= *reps; rep++ {
		a, err := runCLI(binPath, dir, plain...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetbench:", err)
			return 1
		}
		b, err := runCLI(binPath, dir, review...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetbench:", err)
			return 1
		}
		without, with = append(without, a.wall), append(with, b.wall)
		cpuWithout, cpuWith = append(cpuWithout, a.cpu), append(cpuWith, b.cpu)
		fmt.Fprintf(os.Stderr, "  rep %d: check %.2fs (cpu %.2fs), check with summaries %.2fs (cpu %.2fs)\n", rep, a.wall.Seconds(), a.cpu.Seconds(), b.wall.Seconds(), b.cpu.Seconds())
	}
	a, b := slices.Min(without), slices.Min(with)
	ca, cb := slices.Min(cpuWithout), slices.Min(cpuWith)
	fmt.Printf("                         wall      cpu\n")
	fmt.Printf("  check alone            %6.2fs  %6.2fs\n  check with summaries   %6.2fs  %6.2fs\n  ratio                  %6.3f×  %6.3f×\n",
		a.Seconds(), ca.Seconds(), b.Seconds(), cb.Seconds(), b.Seconds()/a.Seconds(), cb.Seconds()/ca.Seconds())
	return 0
}

// runCLI runs the binary in dir and returns its wall and CPU time; exit
// status 1 (out of date) is not an error here.
func runCLI(bin, dir string, args ...string) (measurement, error) {
	var m measurement
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	m.wall = time.Since(start)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		m.rss = ru.Maxrss * 1024
	}
	if err != nil && cmd.ProcessState.ExitCode() != 1 {
		return m, fmt.Errorf("%s: %v: %s", strings.Join(args, " "), err, firstLines(stderr.String(), 5))
	}
	return m, nil
}

// editAdmission lowers the enforced level in every n-th committed admission
// ConfigMap (in path order) and returns how many it edited.
func editAdmission(dir string, n int) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "configmap-computeplane-admission.yaml" {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	slices.Sort(files)
	edited := 0
	for i := 0; i < len(files); i += n {
		data, err := os.ReadFile(files[i])
		if err != nil {
			return edited, err
		}
		if err := os.WriteFile(files[i], bytes.ReplaceAll(data, []byte("enforce: restricted"), []byte("enforce: baseline")), 0o644); err != nil {
			return edited, err
		}
		edited++
	}
	return edited, nil
}
