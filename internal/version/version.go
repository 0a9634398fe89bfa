package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time by the Makefile:
//
//	-X github.com/computeplane-dev/computeplane-fn/internal/version.version=v0.1.0
//	-X github.com/computeplane-dev/computeplane-fn/internal/version.commit=<40 hex digits>
//
// They are variables, not constants, because -X can only set variables.
var (
	version string
	commit  string
)

// Unknown is the commit of a build that was neither stamped nor built with
// VCS information.
const Unknown = "unknown"

// devel is what Go reports as the main module's version for a build from a
// source tree (not go install module@version).
const devel = "(devel)"

// Info describes one build.
type Info struct {
	// Version is the module version: a tag such as v0.1.0, a Go
	// pseudo-version such as v0.0.0-20261201045800-1b8282d1a2b3 (with
	// "+dirty" when the tree had uncommitted changes), or "(devel)".
	Version string
	// Commit is the full commit hash, or "unknown".
	Commit string
	// GoVersion and Platform (GOOS/GOARCH) are those of the binary.
	GoVersion string
	Platform  string
}

// Get returns the running binary's Info: the stamped values first, then the
// Go build info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, bi)
}

// resolve prefers the link-time stamps and falls back to the build info
// (which may be nil).
func resolve(stampedVersion, stampedCommit string, bi *debug.BuildInfo) Info {
	info := Info{
		Version:   stampedVersion,
		Commit:    stampedCommit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" {
			info.Version = bi.Main.Version
		}
		if info.Commit == "" {
			info.Commit = buildSetting(bi, "vcs.revision")
			if info.Commit != "" && buildSetting(bi, "vcs.modified") == "true" {
				info.Commit += "-dirty"
			}
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
	}
	if info.Version == "" {
		info.Version = devel
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	return info
}

func buildSetting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// String is the line computeplane-fn --version prints:
//
//	computeplane-fn v0.1.0 (commit 1b8282d…, go1.26.8, linux/amd64)
func (i Info) String() string {
	return fmt.Sprintf("computeplane-fn %s (commit %s, %s, %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}
