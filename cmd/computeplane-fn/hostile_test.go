package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The hostile-input catalog: every case runs through the CLI twice, in
// process (run) and as the built binary, and must end in bounded time and
// memory either with exit status 1 and a message naming what is wrong
// (object, field, file where known), or, where the input is legitimately
// fine, with a render. Never with a panic, a bug message, items next to a
// refusal, or a file written.

// caseTimeout bounds every run of a case; the issue allows a minute.
const caseTimeout = 60 * time.Second

var showOutput = flag.Bool("show", false, "print every case's stderr")

// binary is the computeplane-fn built for these tests.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "computeplane-fn-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "computeplane-fn")
	build := exec.Command(goTool(), "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "failed to build computeplane-fn:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// hostileCase is one entry of the catalog.
type hostileCase struct {
	name string
	// files are written into the case's folder, the working directory.
	files map[string]string
	// prepare writes what is too large for files.
	prepare func(t *testing.T, dir string)
	// args are the command-line arguments; none runs the KRM function.
	args []string
	// stdin is the KRM function's input (ignored with args); stdinFile
	// names a file of the folder to use instead, and stdinReader makes an
	// endless stream.
	stdin       string
	stdinFile   string
	stdinReader func() io.Reader
	// want are the pieces of the refusal message; empty means the input
	// must render, and then render holds pieces of the output.
	want   []string
	render []string
	// writes is the folder, relative to the working directory, that the
	// run may write into (--output-dir); nothing else may change.
	writes string
	// stable asks that a render, run again on its own output (the KRM
	// function on the ResourceList, the CLI on the stream), writes the same.
	stable bool
	// maxRSS bounds the binary's peak memory in MiB (default 1024).
	maxRSS int64
	// long cases are skipped with -short.
	long bool
}

func (c hostileCase) standalone() bool { return len(c.args) > 0 }

func TestHostileInputs(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			if c.long && testing.Short() {
				t.Skip("large input; skipped with -short")
			}
			// The working directory is two levels below the folder that is
			// watched, so that a write to ../../x would show.
			root := t.TempDir()
			dir := filepath.Join(root, "a", "b")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range c.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if c.prepare != nil {
				c.prepare(t, dir)
			}
			skip := ""
			if c.writes != "" {
				skip = filepath.Join(dir, c.writes)
			}
			before := snapshot(t, root, skip)
			t.Run("in-process", func(t *testing.T) {
				t.Chdir(dir)
				var stdout, stderr bytes.Buffer
				start := time.Now()
				code := run(c.args, c.input(t, dir), &stdout, &stderr, nil)
				c.check(t, code, stdout.Bytes(), stderr.String(), time.Since(start))
			})
			t.Run("binary", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
				defer cancel()
				cmd := exec.CommandContext(ctx, binary, c.args...)
				cmd.Dir = dir
				cmd.Stdin = c.input(t, dir)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				start := time.Now()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				peak := watchPeakMemory(cmd.Process.Pid)
				err := cmd.Wait()
				elapsed := time.Since(start)
				rss := peak()
				if ctx.Err() != nil {
					t.Fatalf("did not end within %v", caseTimeout)
				}
				code := 0
				var exitErr *exec.ExitError
				if errors.As(err, &exitErr) {
					code = exitErr.ExitCode()
				} else if err != nil && cmd.ProcessState == nil {
					t.Fatal(err)
				} else if cmd.ProcessState != nil {
					code = cmd.ProcessState.ExitCode()
				}
				c.check(t, code, stdout.Bytes(), stderr.String(), elapsed)
				limit := c.maxRSS
				if limit == 0 {
					limit = 1024
				}
				if *showOutput {
					t.Logf("peak memory %d MiB", rss)
				}
				if rss > limit {
					t.Errorf("peak memory %d MiB, more than %d MiB", rss, limit)
				}
			})
			if after := snapshot(t, root, skip); after != before {
				t.Errorf("the run changed files it must not:\n%s\n---- after ----\n%s", before, after)
			}
		})
	}
}

func (c hostileCase) input(t *testing.T, dir string) io.Reader {
	t.Helper()
	switch {
	case c.standalone():
		return strings.NewReader("")
	case c.stdinReader != nil:
		return c.stdinReader()
	case c.stdinFile != "":
		f, err := os.Open(filepath.Join(dir, c.stdinFile))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	return strings.NewReader(c.stdin)
}

// check asserts the outcome of one run.
func (c hostileCase) check(t *testing.T, code int, stdout []byte, stderr string, elapsed time.Duration) {
	t.Helper()
	if *showOutput {
		t.Logf("exit %d in %v; stderr:\n%s", code, elapsed.Round(time.Millisecond), clipText(stderr, 2000))
	}
	for _, bad := range []string{"internal error", "this is a bug", "panic", "goroutine "} {
		if strings.Contains(stderr, bad) {
			t.Fatalf("stderr holds %q:\n%s", bad, clipText(stderr, 4000))
		}
	}
	if len(c.want) == 0 {
		if code != 0 {
			t.Fatalf("exit status %d, want a render; stderr:\n%s", code, clipText(stderr, 4000))
		}
		for _, w := range c.render {
			if !bytes.Contains(stdout, []byte(w)) {
				t.Errorf("the output lacks %q:\n%s", w, clipText(string(stdout), 4000))
			}
		}
		if c.stable {
			c.checkStable(t, stdout)
		}
		return
	}
	if code != 1 {
		t.Fatalf("exit status %d, want 1; stderr:\n%s", code, clipText(stderr, 4000))
	}
	for _, w := range c.want {
		if !strings.Contains(stderr, w) {
			t.Errorf("the message lacks %q:\n%s", w, clipText(stderr, 4000))
		}
	}
	if c.standalone() {
		if len(stdout) > 0 && c.writes == "" {
			t.Errorf("a refusal wrote %d bytes to stdout", len(stdout))
		}
		return
	}
	rl, err := yaml.Parse(string(stdout))
	if err != nil {
		t.Fatalf("a refusal's output is no ResourceList: %v\n%s", err, clipText(string(stdout), 2000))
	}
	if items := rl.Field("items"); items != nil && len(items.Value.Content()) > 0 {
		t.Errorf("a refusal wrote %d items", len(items.Value.Content()))
	}
	if results := rl.Field("results"); results == nil || len(results.Value.Content()) == 0 {
		t.Errorf("a refusal wrote no results:\n%s", clipText(string(stdout), 2000))
	}
}

// checkStable runs the CLI again on its own output, as kpt does in place:
// the KRM function on the ResourceList it wrote, the standalone CLI on the
// stream it wrote with the same config. The case's config keeps its
// inputs, so the output must come back the same.
func (c hostileCase) checkStable(t *testing.T, first []byte) {
	t.Helper()
	var args []string
	if c.standalone() {
		dir := t.TempDir()
		cfg, out := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "out.yaml")
		if err := os.WriteFile(cfg, []byte(c.files["config.yaml"]), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, first, 0o644); err != nil {
			t.Fatal(err)
		}
		args = []string{cfg, out}
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, bytes.NewReader(first), &stdout, &stderr, nil); code != 0 {
		t.Fatalf("the run on its own output failed (exit %d):\n%s", code, clipText(stderr.String(), 4000))
	}
	if !bytes.Equal(first, stdout.Bytes()) {
		t.Errorf("the run on its own output wrote another output:\n%s\n---- second ----\n%s", clipText(string(first), 4000), clipText(stdout.String(), 4000))
	}
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

// watchPeakMemory polls the high-water mark of a process's resident memory
// (VmHWM in /proc, Linux only) until the returned function is called, which
// returns it in MiB, or 0 where /proc is missing. The rusage of a child is
// no use here: it counts the memory of this test process, which the child
// shared until it started the binary.
func watchPeakMemory(pid int) func() int64 {
	status := fmt.Sprintf("/proc/%d/status", pid)
	done := make(chan struct{})
	result := make(chan int64)
	go func() {
		var peak int64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if data, err := os.ReadFile(status); err == nil {
				for _, line := range strings.Split(string(data), "\n") {
					var kb int64
					if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil {
						peak = max(peak, kb>>10)
					}
				}
			}
			select {
			case <-done:
				result <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		return <-result
	}
}

// snapshot lists the files below dir with their sizes, leaving out the
// folder skip.
func snapshot(t *testing.T, dir, skip string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d\n", p, info.Mode().Type(), info.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
