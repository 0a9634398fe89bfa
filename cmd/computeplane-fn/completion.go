package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// subcommands are the words computeplane-fn takes in place of a CONFIG.
var subcommands = []string{"completion", "help", "schema"}

// completionShells are the shells completion writes a script for.
var completionShells = []string{"bash", "fish", "zsh"}

// runCompletion writes the completion script of shell for the flags of
// flags: the script is made from the flag set, so a new flag completes
// without an edit here.
func runCompletion(args []string, flags *flag.FlagSet, stdout, stderr io.Writer) int {
	if len(args) != 1 || !slices.Contains(completionShells, args[0]) {
		fmt.Fprintf(stderr, "computeplane-fn: completion needs one shell, %s: computeplane-fn completion bash\n", strings.Join(completionShells, ", "))
		return 2
	}
	var valued, switches []string // flags that take a value, and those that do not
	flags.VisitAll(func(f *flag.Flag) {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			switches = append(switches, f.Name)
		} else {
			valued = append(valued, f.Name)
		}
	})
	var script string
	switch args[0] {
	case "bash":
		script = bashCompletion(valued, switches)
	case "zsh":
		// zsh runs the bash function through its bashcompinit emulation.
		script = "#compdef computeplane-fn\n# zsh completion for computeplane-fn: eval \"$(computeplane-fn completion zsh)\" in ~/.zshrc\nautoload -U +X bashcompinit && bashcompinit\n" + bashCompletion(valued, switches)
	case "fish":
		script = fishCompletion(flags)
	}
	if _, err := io.WriteString(stdout, script); err != nil {
		fmt.Fprintf(stderr, "computeplane-fn: failed to write the completion script: %v\n", err)
		return 1
	}
	return 0
}

// bashCompletion completes the subcommands and files as the first word,
// the shells after completion, the flags after a dash, a folder after
// --output-dir, and files elsewhere.
func bashCompletion(valued, switches []string) string {
	dashed := func(names []string) string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = "--" + n
		}
		return strings.Join(out, " ")
	}
	return `# bash completion for computeplane-fn: source <(computeplane-fn completion bash)
_computeplane_fn() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	case $prev in
	--output-dir | -output-dir)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return ;;
` + fileFlags(valued) + `	esac
	if [[ $COMP_CWORD -ge 2 && ${COMP_WORDS[1]} == completion ]]; then
		[[ $COMP_CWORD -eq 2 ]] && mapfile -t COMPREPLY < <(compgen -W "` + strings.Join(completionShells, " ") + `" -- "$cur")
		return
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "` + dashed(append(slices.Clone(valued), switches...)) + `" -- "$cur")
		return
	fi
	if [[ $COMP_CWORD -eq 1 ]]; then
		mapfile -t COMPREPLY < <(compgen -W "` + strings.Join(subcommands, " ") + `" -- "$cur")
	fi
	local files
	mapfile -t files < <(compgen -f -- "$cur")
	COMPREPLY+=("${files[@]}")
}
complete -o filenames -F _computeplane_fn computeplane-fn
`
}

// fileFlags is the case of bash's completion for the flags that take a
// file: all that take a value but --output-dir, which takes a folder.
func fileFlags(valued []string) string {
	files := slices.DeleteFunc(bashAlternatives(valued), func(s string) bool { return strings.HasSuffix(s, "-output-dir") })
	if len(files) == 0 {
		return ""
	}
	return "\t" + strings.Join(files, " | ") + ")\n\t\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n\t\treturn ;;\n"
}

// bashAlternatives lists each flag as --name and -name, which Go's flag
// package both takes.
func bashAlternatives(names []string) []string {
	var out []string
	for _, n := range names {
		out = append(out, "--"+n, "-"+n)
	}
	return out
}

// fishCompletion describes every flag with its usage line.
func fishCompletion(flags *flag.FlagSet) string {
	var b strings.Builder
	b.WriteString("# fish completion for computeplane-fn: computeplane-fn completion fish > ~/.config/fish/completions/computeplane-fn.fish\n")
	fmt.Fprintf(&b, "complete -c computeplane-fn -n '__fish_is_first_arg' -a '%s'\n", strings.Join(subcommands, " "))
	fmt.Fprintf(&b, "complete -c computeplane-fn -n '__fish_seen_subcommand_from completion' -f -a '%s'\n", strings.Join(completionShells, " "))
	flags.VisitAll(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		extra := " -r -F" // a value: a file
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			extra = ""
		} else if f.Name == "output-dir" {
			extra = " -r -f -a '(__fish_complete_directories)'"
		}
		fmt.Fprintf(&b, "complete -c computeplane-fn -l %s%s -d '%s'\n", f.Name, extra, strings.ReplaceAll(usage, "'", `\'`))
	})
	return b.String()
}
