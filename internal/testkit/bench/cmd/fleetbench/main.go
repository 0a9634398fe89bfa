// Command fleetbench renders generated fleets through the computeplane-fn
// binary and checks the scale targets of the product contract: at the
// largest size, under 15 s and 1 GiB, at most 2× the serialization floor, and
// at most 11× the time of a fleet ten times smaller. `make bench` runs it.
//
// For every size it generates the fleet (or reuses one generated before with
// the same parameters) and then, reps times, alternates a render of the whole
// fleet (output written to a file) with a measurement of the floor on the
// same input files and that output, in a separate process. Times are the best
// of the reps: the machine is shared, and the best run is the one least
// disturbed by others.
//
// With -baseline, an older binary renders every fleet in every rep too, right
// before or right after the binary under test (which one goes first
// alternates from rep to rep), to out-<tenants>.baseline.yaml. A second table
// then gives both binaries' best wall and CPU times and peak RSS with the
// ratios current/baseline, and says whether the two outputs are
// byte-identical; a refactor must not change the output, so a difference
// makes the exit code 1, as a failed target does.
//
//	fleetbench [-bin bin/computeplane-fn] [-baseline OLD-BIN] [-sizes 1000,10000] [-reps 3] [-work .work/bench]
//	fleetbench floor INPUT-DIR OUTPUT-FILE   (the floor alone, as JSON)
//	fleetbench generate DIR TENANTS          (a fleet alone; the benchmark generates in a child process)
//	fleetbench review [-tenants 10000] ...   (what the posture review adds to --check, see review.go)
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/bench"
	"github.com/computeplane-dev/computeplane-fn/internal/testkit/fleetgen"
)

// The scale targets (docs/performance.md), checked at the largest size.
const (
	maxWall   = 15 * time.Second
	maxRSS    = 1 << 30
	maxRatio  = 2.0
	maxGrowth = 11.0
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		os.Exit(floorMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "generate" {
		os.Exit(generateMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "review" {
		os.Exit(reviewMain(os.Args[2:]))
	}
	os.Exit(benchMain(os.Args[1:]))
}

func floorMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fleetbench floor INPUT-DIR OUTPUT-FILE")
		return 2
	}
	f, err := bench.MeasureFloor(args[0], args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench floor:", err)
		return 1
	}
	if err := json.NewEncoder(os.Stdout).Encode(f); err != nil {
		return 1
	}
	return 0
}

// renders is what one binary's renders of one fleet measured over the reps.
// The first failed render ends that binary's reps for the fleet: a render
// killed for its memory would be killed again.
type renders struct {
	walls   []time.Duration
	cpus    []time.Duration
	rss     int64 // highest peak RSS over the reps, bytes
	failure string
}

// renderWith renders the fleet in dir with bin, output to out, unless an
// earlier render failed, records it, and reports whether it succeeded.
func (rs *renders) renderWith(bin, dir, out string, killAbove int64) (measurement, bool) {
	if rs.failure != "" {
		return measurement{}, false
	}
	m, err := render(bin, dir, out, killAbove)
	rs.rss = max(rs.rss, m.rss)
	if err != nil {
		rs.failure = err.Error()
		return m, false
	}
	rs.walls = append(rs.walls, m.wall)
	rs.cpus = append(rs.cpus, m.cpu)
	return m, true
}

// best returns the least wall time and the least CPU time (user+sys) of the
// successful renders, or zeros when there were none.
func (rs *renders) best() (wall, cpu time.Duration) {
	if len(rs.walls) == 0 {
		return 0, 0
	}
	return slices.Min(rs.walls), slices.Min(rs.cpus)
}

type result struct {
	tenants int
	stats   fleetgen.Stats
	renders
	wall     time.Duration // best render
	cpu      time.Duration // least CPU time (user+sys) of a render
	floor    bench.Floor
	floors   []time.Duration
	outBytes int64
}

func (r result) ratio() float64 { return r.wall.Seconds() / r.floor.Total().Seconds() }

func benchMain(args []string) int {
	flags := flag.NewFlagSet("fleetbench", flag.ContinueOnError)
	bin := flags.String("bin", "bin/computeplane-fn", "the computeplane-fn binary to measure")
	sizesFlag := flags.String("sizes", "1000,10000", "fleet sizes in tenants, comma-separated; the targets are checked at the largest and the growth between the first and the largest")
	reps := flags.Int("reps", 3, "renders (and floor measurements) per size; the best counts")
	work := flags.String("work", ".work/bench", "folder for the generated fleets and the rendered output")
	rssLimit := flags.Int64("kill-above", 4<<30, "kill a render whose resident memory grows above this many bytes (protects a shared machine)")
	baselineBin := flags.String("baseline", "", "an older computeplane-fn binary to render the same fleets with, alternating with -bin, and compare: times, memory and the output bytes")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "fleetbench: bad size %q\n", s)
			return 2
		}
		sizes = append(sizes, n)
	}
	binPath, err := filepath.Abs(*bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench:", err)
		return 2
	}
	var basePath string
	if *baselineBin != "" {
		if basePath, err = filepath.Abs(*baselineBin); err != nil {
			fmt.Fprintln(os.Stderr, "fleetbench:", err)
			return 2
		}
	}
	fmt.Printf("fleetbench: %s on %d CPUs (%s/%s), best of %d, shared machine: compare ratios, not absolute times\n",
		*bin, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, *reps)
	if basePath != "" {
		fmt.Printf("fleetbench: baseline %s, rendered alternately with it\n", *baselineBin)
	}

	results := make([]*result, len(sizes))
	dirs := make([]string, len(sizes))
	outs := make([]string, len(sizes))
	var bases []*baseline // one per size, only with -baseline
	for i, n := range sizes {
		dir, stats, err := ensureFleet(filepath.Join(*work, fmt.Sprintf("fleet-%d", n)), n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetbench:", err)
			return 1
		}
		out, err := filepath.Abs(filepath.Join(*work, fmt.Sprintf("out-%d.yaml", n)))
		if err != nil {
			fmt.Fprintln(os.Stderr, "fleetbench:", err)
			return 1
		}
		dirs[i], outs[i] = dir, out
		results[i] = &result{tenants: n, stats: stats}
		if basePath != "" {
			bases = append(bases, newBaseline(basePath, out))
		}
	}
	// Sizes alternate within each rep, so that a change of load on the
	// machine hits all of them alike and the growth stays comparable. The
	// baseline renders each fleet right before or right after the binary
	// under test, first every other rep, for the same reason.
	for rep := 1; rep <= *reps; rep++ {
		for i, r := range results {
			var b *baseline
			if bases != nil {
				b = bases[i]
			}
			if b != nil && baselineFirst(rep) {
				fmt.Fprint(os.Stderr, b.render(dirs[i], r.tenants, rep, *rssLimit))
			}
			m, rendered := r.renderWith(binPath, dirs[i], outs[i], *rssLimit)
			var baselineAfter string // printed after the render's line, in the order they ran
			if b != nil && !baselineFirst(rep) {
				baselineAfter = b.render(dirs[i], r.tenants, rep, *rssLimit)
			}
			if rendered {
				f, err := floor(self, dirs[i], outs[i])
				if err != nil {
					fmt.Fprintln(os.Stderr, "fleetbench:", err)
					return 1
				}
				r.floors = append(r.floors, f.Total())
				if r.floor.Total() == 0 || f.Total() < r.floor.Total() {
					r.floor = f
				}
				fmt.Fprintf(os.Stderr, "  %d tenants, rep %d: render %.2fs (cpu %.2fs, peak %s), floor %.2fs\n", r.tenants, rep, m.wall.Seconds(), m.cpu.Seconds(), mib(m.rss), f.Total().Seconds())
			}
			fmt.Fprint(os.Stderr, baselineAfter)
		}
	}
	for i, r := range results {
		r.wall, r.cpu = r.best()
		if info, err := os.Stat(outs[i]); err == nil {
			r.outBytes = info.Size()
		}
	}
	for i, b := range bases {
		b.compare(results[i])
	}
	return report(results, bases)
}

// ensureFleet generates the fleet of n tenants into dir unless dir already
// holds exactly that fleet. It generates in a child process ("fleetbench
// generate"): on Linux a child started by this process inherits its peak
// resident memory in the rusage the renders are measured by, and generating
// 10,000 tenants here would make every render's peak read about 540 MiB.
func ensureFleet(dir string, n int) (string, fleetgen.Stats, error) {
	p := fleetgen.Defaults(n)
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fleetgen.Stats{}, err
	}
	if mf, err := fleetgen.ReadManifest(abs); err == nil && mf.Params == p && mf.Generator == fleetgen.GeneratorVersion {
		return abs, mf.Stats, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fleetgen.Stats{}, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(self, "generate", abs, strconv.Itoa(n))
	cmd.Stdout, cmd.Stderr = os.Stderr, &stderr
	if err := cmd.Run(); err != nil {
		return "", fleetgen.Stats{}, fmt.Errorf("failed to generate the fleet of %d tenants: %v: %s", n, err, firstLines(stderr.String(), 5))
	}
	mf, err := fleetgen.ReadManifest(abs)
	if err != nil {
		return "", fleetgen.Stats{}, err
	}
	return abs, mf.Stats, nil
}

// generateMain generates the default fleet of a number of tenants into a
// folder, replacing what it holds.
func generateMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fleetbench generate DIR TENANTS")
		return 2
	}
	n, err := strconv.Atoi(args[1])
	if err != nil || n <= 0 {
		fmt.Fprintf(os.Stderr, "fleetbench generate: bad number of tenants %q\n", args[1])
		return 2
	}
	if err := os.RemoveAll(args[0]); err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench generate:", err)
		return 1
	}
	start := time.Now()
	stats, err := fleetgen.Generate(args[0], fleetgen.Defaults(n))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleetbench generate:", err)
		return 1
	}
	fmt.Printf("  generated %d tenants, %d apps, %d files, %s in %.1fs\n", stats.Tenants, stats.Apps, stats.Files, mib(stats.Bytes), time.Since(start).Seconds())
	return 0
}

// measurement is one render.
type measurement struct {
	wall, cpu time.Duration
	rss       int64
}

// render runs the binary on the fleet in dir, writing its output to out, and
// returns the wall time, the CPU time and the peak resident memory.
func render(bin, dir, out string, killAbove int64) (measurement, error) {
	var m measurement
	f, err := os.Create(out)
	if err != nil {
		return m, err
	}
	defer f.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, fleetgen.ConfigFile)
	cmd.Dir = dir
	cmd.Stdout = f
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return m, err
	}
	killed := make(chan int64, 1)
	done := make(chan struct{})
	go watch(cmd.Process, killAbove, killed, done)
	err = cmd.Wait()
	m.wall = time.Since(start)
	close(done)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.rss = ru.Maxrss * 1024 // KiB on Linux
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	select {
	case seen := <-killed:
		m.rss = max(m.rss, seen)
		return m, fmt.Errorf("killed after %.1fs: resident memory above %s", m.wall.Seconds(), mib(seen))
	default:
	}
	if err != nil {
		return m, fmt.Errorf("render failed: %v: %s", err, firstLines(stderr.String(), 5))
	}
	return m, nil
}

// watch kills p when its resident memory grows above limit.
func watch(p *os.Process, limit int64, killed chan<- int64, done <-chan struct{}) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	status := fmt.Sprintf("/proc/%d/status", p.Pid)
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		data, err := os.ReadFile(status)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if kb*1024 > limit {
					_ = p.Kill()
					killed <- kb * 1024
					return
				}
			}
		}
	}
}

// floor measures the serialization floor in a separate process, so that
// neither run's heap disturbs the other.
func floor(self, dir, out string) (bench.Floor, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(self, "floor", dir, out)
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return bench.Floor{}, fmt.Errorf("floor: %v: %s", err, firstLines(stderr.String(), 5))
	}
	var f bench.Floor
	if err := json.Unmarshal(stdout.Bytes(), &f); err != nil {
		return f, fmt.Errorf("floor: %w", err)
	}
	if f.Total() <= 0 {
		return f, errors.New("floor: measured nothing")
	}
	return f, nil
}

// report prints the table, the comparison with the baseline when there is
// one (bases is nil otherwise), and the targets; it returns the exit code:
// 1 when a target fails or the baseline's output differs.
func report(results []*result, bases []*baseline) int {
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tenants\tapps\tinput\toutput\twall\tcpu\tpeak RSS\tfloor (decode+encode)\trender/floor\t")
	for _, r := range results {
		if r.failure != "" {
			fmt.Fprintf(tw, "%d\t%d\t%s\t-\t-\t-\t%s\t-\t-\t\n", r.tenants, r.stats.Apps, mib(r.stats.Bytes), mib(r.rss))
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%.2fs\t%.2fs\t%s\t%.2fs (%.2f+%.2f)\t%.2f×\t\n",
			r.tenants, r.stats.Apps, mib(r.stats.Bytes), mib(r.outBytes), r.wall.Seconds(), r.cpu.Seconds(), mib(r.rss),
			r.floor.Total().Seconds(), r.floor.Decode.Seconds(), r.floor.Encode.Seconds(), r.ratio())
	}
	tw.Flush()
	for _, r := range results {
		if r.failure != "" {
			fmt.Printf("%d tenants: %s\n", r.tenants, r.failure)
		}
	}
	same := true
	if bases != nil {
		same = reportComparison(results, bases)
	}

	last := results[len(results)-1]
	first := results[0]
	fmt.Printf("\ntargets at %d tenants / %d apps:\n", last.tenants, last.stats.Apps)
	ok := true
	check := func(name, got string, pass bool) {
		verdict := "PASS"
		if !pass {
			verdict, ok = "FAIL", false
		}
		fmt.Printf("  %-26s %-12s %s\n", name, got, verdict)
	}
	failed := last.failure != ""
	check("wall < 15s", dur(last.wall, failed), !failed && last.wall < maxWall)
	check("peak RSS < 1 GiB", mib(last.rss), !failed && last.rss < maxRSS)
	check("render ≤ 2× floor", ratio(last.ratio(), failed), !failed && last.ratio() <= maxRatio)
	if len(results) > 1 {
		growth := last.wall.Seconds() / first.wall.Seconds()
		scale := float64(last.tenants) / float64(first.tenants)
		failed := failed || first.failure != ""
		check(fmt.Sprintf("growth %d→%d ≤ %.0f×", first.tenants, last.tenants, maxGrowth*scale/10),
			ratio(growth, failed), !failed && growth <= maxGrowth*scale/10)
		if !failed {
			fmt.Printf("  (over the same sizes the floor grew %.2f×, the render's CPU time %.2f×)\n",
				last.floor.Total().Seconds()/first.floor.Total().Seconds(), last.cpu.Seconds()/first.cpu.Seconds())
		}
	}
	if !ok || !same {
		return 1
	}
	return 0
}

func mib(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

func dur(d time.Duration, failed bool) string {
	if failed {
		return "-"
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

func ratio(x float64, failed bool) string {
	if failed {
		return "-"
	}
	return fmt.Sprintf("%.2f×", x)
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
