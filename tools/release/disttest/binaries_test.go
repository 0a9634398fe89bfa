package disttest

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

var elfMachine = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
var machoCPU = map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}

// checkStaticELF fails unless data is a static ELF executable for arch: no
// program interpreter (PT_INTERP, .interp), no dynamic section, no needed
// library; so it runs in a scratch image, with no loader.
func checkStaticELF(t *testing.T, what string, data []byte, arch string) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: not an ELF file: %v", what, err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC || f.Machine != elfMachine[arch] {
		t.Errorf("%s: ELF type %v, machine %v; want ET_EXEC, %v", what, f.Type, f.Machine, elfMachine[arch])
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s: has a %v program header: dynamically linked", what, p.Type)
		}
	}
	for _, s := range []string{".interp", ".dynamic", ".dynsym"} {
		if f.Section(s) != nil {
			t.Errorf("%s: has a %s section: dynamically linked", what, s)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s: needs libraries %v (%v)", what, libs, err)
	}
}

// TestBinariesAreStatic reads every release binary: the linux ones are
// static ELF executables; the darwin ones link only what every Mac has
// (macOS has no static executables: Go's darwin binaries call the kernel
// through libSystem, and its resolver and certificate verification through
// libresolv and the CoreFoundation and Security frameworks).
func TestBinariesAreStatic(t *testing.T) {
	e := setup(t)
	for _, p := range distPlatforms {
		t.Run(p.OS+"-"+p.Architecture, func(t *testing.T) {
			data, err := os.ReadFile(e.binary(p))
			if err != nil {
				t.Fatal(err)
			}
			switch p.OS {
			case "linux":
				checkStaticELF(t, e.binary(p), data, p.Architecture)
			case "darwin":
				f, err := macho.NewFile(bytes.NewReader(data))
				if err != nil {
					t.Fatalf("not a Mach-O file: %v", err)
				}
				defer f.Close()
				if f.Cpu != machoCPU[p.Architecture] || f.Type != macho.TypeExec {
					t.Errorf("Mach-O cpu %v, type %v; want %v, executable", f.Cpu, f.Type, machoCPU[p.Architecture])
				}
				libs, err := f.ImportedLibraries()
				if err != nil || !slices.Contains(libs, "/usr/lib/libSystem.B.dylib") {
					t.Errorf("links %v (%v); want libSystem", libs, err)
				}
				for _, l := range libs {
					if !strings.HasPrefix(l, "/usr/lib/") && !strings.HasPrefix(l, "/System/Library/Frameworks/") {
						t.Errorf("links %s, which is not part of macOS", l)
					}
				}
			}
		})
	}
}

// TestBinariesBuildInfo reads the Go build info of every binary: built
// without cgo, with -trimpath, for its platform at the pinned
// micro-architecture level, from the main module, without VCS stamping but
// with the Makefile's stamps, and no path of the build machine anywhere in
// its bytes.
func TestBinariesBuildInfo(t *testing.T) {
	e := setup(t)
	home, _ := os.UserHomeDir()
	gopath := strings.TrimSpace(goEnv(t, "GOPATH"))
	goroot := runtime.GOROOT()
	for _, p := range distPlatforms {
		t.Run(p.OS+"-"+p.Architecture, func(t *testing.T) {
			bi, err := buildinfo.ReadFile(e.binary(p))
			if err != nil {
				t.Fatal(err)
			}
			if bi.Main.Path != "github.com/computeplane-dev/computeplane-fn" || bi.Path != "github.com/computeplane-dev/computeplane-fn/cmd/computeplane-fn" {
				t.Errorf("main module %q, package %q", bi.Main.Path, bi.Path)
			}
			want := map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": p.OS, "GOARCH": p.Architecture}
			if p.Architecture == "amd64" {
				want["GOAMD64"] = "v1"
			} else {
				want["GOARM64"] = "v8.0"
			}
			got := map[string]string{}
			for _, s := range bi.Settings {
				got[s.Key] = s.Value
				if strings.HasPrefix(s.Key, "vcs") {
					t.Errorf("build setting %s=%s: the commit is stamped by -X, VCS stamping must be off", s.Key, s.Value)
				}
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("build setting %s=%q, want %q", k, got[k], v)
				}
			}
			// Go leaves -ldflags out of the build info of a -trimpath build;
			// the stamps are in the binary's data.
			data, err := os.ReadFile(e.binary(p))
			if err != nil {
				t.Fatal(err)
			}
			for _, stamp := range []string{e.version, e.commit} {
				if !bytes.Contains(data, []byte(stamp)) {
					t.Errorf("the stamp %s is not in the binary", stamp)
				}
			}
			for _, dir := range []string{e.project, e.dist, gopath, goroot, home + "/", os.TempDir() + "/go-build"} {
				if dir != "" && dir != "/" && bytes.Contains(data, []byte(dir)) {
					t.Errorf("holds the build machine's path %s", dir)
				}
			}
		})
	}
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return string(out)
}

// TestVersion runs --version of the linux binary of this machine and of
// make build's bin/computeplane-fn: both name the version and the commit.
func TestVersion(t *testing.T) {
	e := setup(t)
	if runtime.GOOS != "linux" {
		t.Skipf("runs the linux release binary; this is %s", runtime.GOOS)
	}
	host := v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	for what, bin := range map[string]string{"release binary": e.binary(host), "make build": filepath.Join(e.project, "bin", "computeplane-fn")} {
		out, err := exec.Command(bin, "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("%s --version: %v\n%s", what, err, out)
		}
		want := fmt.Sprintf("computeplane-fn %s (commit %s, %s, %s/%s)\n", e.version, e.commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		if string(out) != want {
			t.Errorf("%s --version printed %q, want %q", what, out, want)
		}
	}
}
