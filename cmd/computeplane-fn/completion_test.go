package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBashCompletion sources the bash script in a real bash and completes
// words as bash would: the subcommands first, the shells after
// completion, every flag after a dash, folders after --output-dir, files
// after a flag that takes one and as CONFIG and INPUT.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash not found: the bash completion is tested in bash")
	}
	r := cli(t, "completion", "bash")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("completion bash: %+v", r)
	}
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "completion.bash")
	for name, content := range map[string]string{script: r.stdout, filepath.Join(dir, "config.yaml"): "", filepath.Join(dir, "summary.md"): ""} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "fleet"), 0o755); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) []string {
		t.Helper()
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", `source "$1"; shift
complete -p computeplane-fn >/dev/null || exit 3
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _computeplane_fn
printf '%s\n' "${COMPREPLY[@]}"`, "bash", script)
		cmd.Args = append(cmd.Args, words...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("complete %q: %v\n%s", words, err, out)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		return got
	}
	var allFlags []string
	f := &cliFlags{}
	f.flagSet(nil).VisitAll(func(fl *flag.Flag) { allFlags = append(allFlags, "--"+fl.Name) })
	slices.Sort(allFlags)
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"computeplane-fn", "sch"}, []string{"schema"}},
		{[]string{"computeplane-fn", "co"}, []string{"completion", "config.yaml"}},
		{[]string{"computeplane-fn", "completion", "z"}, []string{"zsh"}},
		{[]string{"computeplane-fn", "completion", ""}, []string{"bash", "fish", "zsh"}},
		{[]string{"computeplane-fn", "--sum"}, []string{"--summary", "--summary-json"}},
		{[]string{"computeplane-fn", "-"}, allFlags},
		{[]string{"computeplane-fn", "--output-dir", ""}, []string{"fleet"}},
		{[]string{"computeplane-fn", "--summary", "su"}, []string{"summary.md"}},
		{[]string{"computeplane-fn", "--check", "--output-dir", "fleet", "con"}, []string{"config.yaml"}},
	} {
		if got := complete(tc.words...); !slices.Equal(got, tc.want) {
			t.Errorf("complete %q: %q, want %q", tc.words, got, tc.want)
		}
	}
}

// TestZshAndFishCompletion: the zsh script is the bash one under zsh's
// bashcompinit, and the fish script names every flag; both are made from
// the flag set. (No zsh or fish runs here: bash, which runs the shared
// function, is tested above.)
func TestZshAndFishCompletion(t *testing.T) {
	bashScript := cli(t, "completion", "bash").stdout
	zsh := cli(t, "completion", "zsh")
	if zsh.code != 0 || !strings.HasPrefix(zsh.stdout, "#compdef computeplane-fn\n") || !strings.Contains(zsh.stdout, "bashcompinit\n"+bashScript) {
		t.Errorf("completion zsh: %+v", zsh)
	}
	fish := cli(t, "completion", "fish")
	if fish.code != 0 || fish.stderr != "" {
		t.Fatalf("completion fish: %+v", fish)
	}
	f := &cliFlags{}
	f.flagSet(nil).VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(fish.stdout, "complete -c computeplane-fn -l "+fl.Name+" ") {
			t.Errorf("completion fish: no line for --%s", fl.Name)
		}
	})
	if r := cli(t, "completion", "powershell"); r.code != 2 || !strings.Contains(r.stderr, "bash, fish, zsh") {
		t.Errorf("completion powershell: %+v, want a usage error naming the shells", r)
	}
}
