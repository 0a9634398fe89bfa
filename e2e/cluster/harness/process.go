package harness

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Process is a component the suite started.
type Process struct {
	Name string
	Log  string
	// MetricsAddr is where a Flux controller serves its Prometheus
	// metrics (host:port, StartController's --metrics-addr); "" for the
	// other components.
	MetricsAddr string
	cmd         *exec.Cmd
	done        chan struct{}
	err         error
}

// Start runs bin with args, its output in dir/<name>.log, and stops it by
// PID when the test ends: SIGTERM, then SIGKILL after 10 s.
func Start(t testing.TB, dir, name, bin string, args []string, env ...string) *Process {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("failed to create the log of %s: %v", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	// The kernel kills the component if the test binary dies without
	// running its cleanups (a panic, a timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("failed to start %s (%s): %v", name, bin, err)
	}
	p := &Process{Name: name, Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(p.Stop)
	t.Logf("started %s (pid %d), log %s", name, cmd.Process.Pid, logPath)
	return p
}

// Stop ends the process by its PID and waits for it.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Tail returns the last n lines of the process's log, for failure messages.
func (p *Process) Tail(n int) string {
	data, err := os.ReadFile(p.Log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Grep returns the log lines of the process that contain every one of the
// words, for failure messages about one object.
func (p *Process) Grep(words ...string) []string {
	data, err := os.ReadFile(p.Log)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		ok := true
		for _, w := range words {
			if !strings.Contains(line, w) {
				ok = false
				break
			}
		}
		if ok && line != "" {
			out = append(out, line)
		}
	}
	return out
}

// CPUTime is the CPU time (user and system) the running process has used so
// far, from /proc/<pid>/stat. On a shared machine it says what the component
// did better than the wall clock, which counts the waits for other work.
func (p *Process) CPUTime() (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("failed to read the CPU time of %s: %w", p.Name, err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count the fields after its closing one. utime and stime are fields
	// 14 and 15, in clock ticks (USER_HZ, 100 on Linux).
	rest := string(data)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[i+1:]
	}
	fields := strings.Fields(rest)
	if len(fields) < 13 {
		return 0, fmt.Errorf("failed to read the CPU time of %s: /proc/%d/stat has %d fields", p.Name, p.cmd.Process.Pid, len(fields)+2)
	}
	var utime, stime int64
	if _, err := fmt.Sscan(fields[11], &utime); err != nil {
		return 0, fmt.Errorf("failed to read the CPU time of %s: %w", p.Name, err)
	}
	if _, err := fmt.Sscan(fields[12], &stime); err != nil {
		return 0, fmt.Errorf("failed to read the CPU time of %s: %w", p.Name, err)
	}
	const userHZ = 100
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// Memory is the resident memory of the running process now and at its
// peak (VmRSS and VmHWM of /proc/<pid>/status).
func (p *Process) Memory() (rss, peak int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0, fmt.Errorf("failed to read the memory of %s: %w", p.Name, err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		var kb int64
		if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), &kb); err != nil {
			return 0, 0, fmt.Errorf("failed to read the memory of %s: %s: %w", p.Name, line, err)
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, nil
}

// MachineCPU returns the time every core of the machine spent busy and in
// all since boot (/proc/stat's cpu line; busy is all but idle and iowait):
// two readings give how loaded the machine was between them.
func MachineCPU() (busy, total time.Duration, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("failed to read the machine's CPU time: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 6 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("failed to read the machine's CPU time: /proc/stat begins %q", line)
	}
	var ticks, idle int64
	for i, f := range fields[1:] {
		var n int64
		if _, err := fmt.Sscan(f, &n); err != nil {
			return 0, 0, fmt.Errorf("failed to read the machine's CPU time: %w", err)
		}
		ticks += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	const userHZ = 100
	return time.Duration(ticks-idle) * time.Second / userHZ, time.Duration(ticks) * time.Second / userHZ, nil
}
