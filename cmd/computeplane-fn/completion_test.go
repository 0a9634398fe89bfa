package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// The completion scripts are cobra's; what is tested here is that every
// shell cobra supports gets one, and that what they ask the binary for
// (computeplane-fn __complete WORDS...) names the commands, the flags and
// the kind of file each argument takes.

// TestCompletionScripts: completion writes a script for bash, zsh, fish
// and powershell, each asking the binary for its completions; without a
// shell, or with another, it is a usage error.
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		r := cli(t, "completion", shell)
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "computeplane-fn") || !strings.Contains(r.stdout, "__complete") {
			t.Errorf("completion %s: exit %d, stderr %q, %d bytes of script", shell, r.code, r.stderr, len(r.stdout))
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}} {
		if r := cli(t, args...); r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "Run 'computeplane-fn completion --help' for usage.") {
			t.Errorf("%q: %+v, want a usage error", args, r)
		}
	}
	if r := cli(t, "completion"); !strings.Contains(r.stderr, "one of bash, fish, powershell, zsh") {
		t.Errorf("completion without a shell does not name the shells: %q", r.stderr)
	}
}

// TestCompletions asks for completions as the scripts do: the commands as
// the first word (then files), the shells after completion, every flag
// after a dash, folders after --output-dir, files elsewhere.
func TestCompletions(t *testing.T) {
	var allFlags []string
	var f cliFlags
	flags := pflag.NewFlagSet("", pflag.ContinueOnError)
	f.register(flags)
	flags.VisitAll(func(fl *pflag.Flag) { allFlags = append(allFlags, "--"+fl.Name) })
	allFlags = append(allFlags, "--help")
	slices.Sort(allFlags)
	const (
		files   = ":0"  // the shell completes files
		noFiles = ":4"  // only the words given
		folders = ":16" // the shell completes folders
	)
	for _, tc := range []struct {
		words     []string
		want      []string
		directive string
	}{
		{[]string{""}, []string{"completion", "help", "schema", "version"}, files},
		{[]string{"sch"}, []string{"schema"}, files},
		{[]string{"config.yaml", ""}, nil, files},
		{[]string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}, noFiles},
		{[]string{"--sum"}, []string{"--summary", "--summary-json"}, noFiles},
		{[]string{"--"}, allFlags, noFiles},
		{[]string{"config.yaml", "--ch"}, []string{"--check"}, noFiles},
		{[]string{"--output-dir", ""}, nil, folders},
		{[]string{"--summary", ""}, nil, files},
	} {
		r := cli(t, append([]string{"__complete"}, tc.words...)...)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		directive := lines[len(lines)-1]
		var got []string
		for _, l := range lines[:len(lines)-1] {
			word, _, _ := strings.Cut(l, "\t")
			got = append(got, word)
		}
		slices.Sort(got)
		if r.code != 0 || !slices.Equal(got, tc.want) || directive != tc.directive {
			t.Errorf("complete %q: exit %d, %q with directive %s; want %q with %s", tc.words, r.code, got, directive, tc.want, tc.directive)
		}
	}
}

// TestBashCompletion sources the bash script in a real bash, with the
// binary on PATH, and completes words as bash would. cobra's script relies
// on two functions of the bash-completion package, which the test stands
// in for.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash not found: the bash completion is tested in bash")
	}
	r := cli(t, "completion", "bash")
	if r.code != 0 {
		t.Fatalf("completion bash: %+v", r)
	}
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "completion.bash")
	must(t, os.WriteFile(script, []byte(r.stdout), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "fleet"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "config.yaml"), nil, 0o644))
	complete := func(words ...string) []string {
		t.Helper()
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", `
_get_comp_words_by_ref() { cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}; words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD; }
_filedir() { mapfile -t COMPREPLY < <(compgen -d -- "$cur"); }
compopt() { :; } # outside a completion, bash refuses it
source "$1"; shift
complete -p computeplane-fn >/dev/null || exit 3
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
__start_computeplane-fn
printf '%s\n' "${COMPREPLY[@]}"`, "bash", script)
		cmd.Args = append(cmd.Args, words...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("complete %q: %v\n%s", words, err, out)
		}
		got := strings.Fields(string(out))
		slices.Sort(got)
		return got
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"computeplane-fn", "sch"}, []string{"schema"}},
		{[]string{"computeplane-fn", "completion", "p"}, []string{"powershell"}},
		{[]string{"computeplane-fn", "--summary-"}, []string{"--summary-json"}},
		{[]string{"computeplane-fn", "config.yaml", "--output-dir", ""}, []string{"fleet"}},
	} {
		if got := complete(tc.words...); !slices.Equal(got, tc.want) {
			t.Errorf("complete %q: %q, want %q", tc.words, got, tc.want)
		}
	}
}
