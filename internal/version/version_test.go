package version

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolve(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	vcs := func(rev, modified string) *debug.BuildInfo {
		return &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/computeplane-dev/computeplane-fn", Version: "(devel)"},
			Settings:  []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}},
		}
	}
	tests := []struct {
		name            string
		version, commit string
		bi              *debug.BuildInfo
		want            Info
	}{
		{
			name:    "stamped by the Makefile: the stamps win over the build info",
			version: "v0.1.0", commit: "1b8282d1b8282d1b8282d1b8282d1b8282d1b82",
			bi:   vcs("ffffffffffffffffffffffffffffffffffffffff", "false"),
			want: Info{Version: "v0.1.0", Commit: "1b8282d1b8282d1b8282d1b8282d1b8282d1b82", GoVersion: "go1.26.8", Platform: platform},
		},
		{
			name: "go build with VCS stamping: the revision, marked dirty",
			bi:   vcs("1b8282d1b8282d1b8282d1b8282d1b8282d1b82", "true"),
			want: Info{Version: "(devel)", Commit: "1b8282d1b8282d1b8282d1b8282d1b8282d1b82-dirty", GoVersion: "go1.26.8", Platform: platform},
		},
		{
			name: "go install module@version: the module version, no commit",
			bi: &debug.BuildInfo{
				GoVersion: "go1.26.8",
				Main:      debug.Module{Path: "github.com/computeplane-dev/computeplane-fn", Version: "v0.2.0"},
			},
			want: Info{Version: "v0.2.0", Commit: "unknown", GoVersion: "go1.26.8", Platform: platform},
		},
		{
			name: "no build info at all",
			want: Info{Version: "(devel)", Commit: "unknown", GoVersion: runtime.Version(), Platform: platform},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := resolve(tt.version, tt.commit, tt.bi)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("resolve() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestString(t *testing.T) {
	i := Info{Version: "v0.1.0", Commit: "1b8282d1b8282d1b8282d1b8282d1b8282d1b82", GoVersion: "go1.26.8", Platform: "linux/arm64"}
	want := "computeplane-fn v0.1.0 (commit 1b8282d1b8282d1b8282d1b8282d1b8282d1b82, go1.26.8, linux/arm64)"
	if got := i.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
