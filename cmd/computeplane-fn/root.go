package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/computeplane-dev/computeplane-fn/fn"
	"github.com/computeplane-dev/computeplane-fn/internal/profiling"
	"github.com/computeplane-dev/computeplane-fn/internal/version"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/summary"
)

// The command line is cobra's, as kubectl's, kustomize's and flux's are:
// the root command renders, the subcommands print what is not a render.
// Flags may come anywhere among CONFIG and the INPUTs (cobra's default);
// "--" ends them.

const rootLong = `computeplane-fn renders Cozystack ComputePlanes as plain Flux objects.

With a CONFIG (a ComputePlaneGenerator) it renders the config's spec.inputs and
the INPUTs (files, folders or globs, relative to the working directory) to stdout
as one YAML stream, or with --output-dir into a fleet folder. Without a CONFIG it
is a KRM function (kpt, kustomize): a ResourceList on stdin, the result on stdout;
run on a terminal with no arguments, it prints this help instead of waiting.

With --output-dir every generated object goes to a file of its own in DIR
(<namespace>/<kind>-<name>.yaml, or Flux units with spec.fleet), whose first
line names the fleet's config; the files this fleet wrote before and no longer
generates are removed, every other file (another fleet's, your own) is left
alone, and a refused or failed run leaves DIR as it was. --check writes nothing,
prints a unified diff and exits 1 when DIR is out of date. --summary states how
each tenant's isolation posture changes, for a pull request; --summary-json
writes the same for a bot; "-" writes either to stdout, after the output
(docs/fleet-repo.md).

Flags may come before or after CONFIG and the INPUTs; "--" ends the flags. A
CONFIG named like a command (schema, version, completion, help) is read as ./NAME.

Exit status: 0 done (or up to date), 1 refused, failed or out of date, 2 usage error.`

const rootExample = `  computeplane-fn config.yaml > fleet.yaml                       # render to stdout
  computeplane-fn config.yaml --summary -                        # the YAML, then the tenant table
  computeplane-fn --output-dir fleet config.yaml                 # write the fleet folder
  computeplane-fn --output-dir fleet --check --summary pr.md config.yaml   # the CI gate
  kpt fn eval fleet/ --exec computeplane-fn                      # as a KRM function`

// cliFlags are the command line's flags: the fleet folder's (which also
// carry the summaries of a render to stdout) and --version.
type cliFlags struct {
	folderFlags
	version bool
}

// register defines the flags on flags. A new flag is one line here (and
// its field); the help, the completion of every shell and the check that it
// needs a CONFIG follow from it.
func (f *cliFlags) register(flags *pflag.FlagSet) {
	flags.StringVar(&f.dir, "output-dir", "", "write the output into `DIR`, one file per object, pruning what computeplane-fn wrote before and no longer generates")
	flags.BoolVar(&f.check, "check", false, "with --output-dir: write nothing; print a diff and exit 1 when DIR is out of date")
	flags.StringVar(&f.summaries.markdown, "summary", "", "write a Markdown summary for a pull request comment to `FILE` (- for stdout)")
	flags.StringVar(&f.summaries.json, "summary-json", "", "write the summary as JSON to `FILE` (- for stdout; tenants, posture changes, files); not written, and removed, when the run is refused or fails")
	flags.BoolVar(&f.allowEmpty, "allow-empty", false, "with --output-dir: write a fleet of no tenant over one that has tenants, or render inputs that hold no object at all (refused without it)")
	flags.BoolVar(&f.allowPrune, "allow-prune", false, "with --output-dir: remove more than half of the fleet's files in DIR (and more than 10) at once (refused without it)")
	flags.BoolVar(&f.allowGuardMove, "allow-guard-move", false, "with --output-dir: move the guard to another Kustomization out of order, once its live objects carry kustomize.toolkit.fluxcd.io/prune: disabled (refused without it; docs/guard.md)")
	flags.StringVar(&f.base, "base", "", "with --output-dir and a summary: compare the render with DIR as the Git revision `REF` holds it (a pull request's base), not with DIR as it is")
	flags.BoolVar(&f.version, "version", false, "print the version and the commit this binary was built from (the same as the version command), and exit")
}

// folderOnly are the flags that need --output-dir.
var folderOnly = []string{"check", "allow-empty", "allow-prune", "allow-guard-move", "base"}

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// run runs the command line args and returns the exit status. Every error
// cobra returns is a usage error (the commands report their own failures
// and set code); tune, when not nil, tunes the collector for the mode.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, tune func(standalone bool)) (code int) {
	// The last resort: a panic is a bug, reported as one and with exit
	// status 1 like any refusal, never as a Go stack trace. Nothing relies
	// on it: the hostile-input tests fail on this message.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "computeplane-fn: %s: %v\n", fn.BugMessage, r)
			code = 1
		}
	}()
	if tune == nil {
		tune = func(bool) {}
	}
	root := newRootCommand(stdin, stdout, stderr, tune, &code)
	root.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	cmd, err := root.ExecuteC()
	if err != nil {
		fmt.Fprintf(stderr, "computeplane-fn: %v\nRun '%s --help' for usage.\n", err, cmd.CommandPath())
		return 2
	}
	return code
}

// newRootCommand builds the command line; the commands write the exit
// status of what they run to code.
func newRootCommand(stdin io.Reader, stdout, stderr io.Writer, tune func(standalone bool), code *int) *cobra.Command {
	var f cliFlags
	root := &cobra.Command{
		Use:     "computeplane-fn [flags] CONFIG [INPUT...]",
		Short:   "Render Cozystack ComputePlanes as plain Flux objects",
		Long:    rootLong,
		Example: rootExample,
		Args:    cobra.ArbitraryArgs,
		// CONFIG and INPUTs complete as files; as the first word, the
		// commands do, and files where no command matches.
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveDefault
		},
		SilenceErrors:              true,
		SilenceUsage:               true,
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.version {
				fmt.Fprintln(stdout, version.Get())
				return nil
			}
			if len(args) == 0 {
				if cmd.Flags().NFlag() == 0 && isTerminal(stdin) {
					return cmd.Help()
				}
				if set := setFlags(cmd.Flags()); len(set) > 0 {
					verb := "needs"
					if len(set) > 1 {
						verb = "need"
					}
					return usageErrorf("%s %s a CONFIG: without one, computeplane-fn is a KRM function, which takes no flags", strings.Join(set, ", "), verb)
				}
				tune(false)
				*code = runKRM(stdin, stdout, stderr)
				return nil
			}
			if err := f.validate(cmd, args[0]); err != nil {
				return err
			}
			tune(true)
			var err error
			*code, err = f.render(args[0], args[1:], stdout, stderr)
			return err
		},
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	f.register(root.Flags())
	_ = root.MarkFlagDirname("output-dir")
	root.AddCommand(
		&cobra.Command{
			Use:   "schema",
			Short: "Print the JSON Schema of the function config (ComputePlaneGenerator)",
			Args:  cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				if _, err := stdout.Write(api.ConfigSchema()); err != nil {
					fmt.Fprintf(stderr, "computeplane-fn: failed to write the schema: %v\n", err)
					*code = 1
				}
				return nil
			},
		},
		&cobra.Command{
			Use:   "version",
			Short: "Print the version and the commit this binary was built from",
			Args:  cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				fmt.Fprintln(stdout, version.Get())
				return nil
			},
		},
	)
	// cobra's completion command, for every shell it writes a script for;
	// without a shell it is a usage error rather than its help.
	root.InitDefaultCompletionCmd()
	if completion, _, err := root.Find([]string{"completion"}); err == nil && completion != root {
		completion.RunE = func(cmd *cobra.Command, _ []string) error {
			var shells []string
			for _, c := range cmd.Commands() {
				shells = append(shells, c.Name())
			}
			return usageErrorf("completion needs a shell, one of %s: computeplane-fn completion bash", strings.Join(shells, ", "))
		}
	}
	return root
}

// validate checks the flags of a render of config.
func (f *cliFlags) validate(cmd *cobra.Command, config string) error {
	if f.dir == "" {
		for _, name := range folderOnly {
			if cmd.Flags().Changed(name) {
				return usageErrorf("--%s needs --output-dir", name)
			}
		}
	}
	if f.base != "" && !f.summaries.any() {
		return usageErrorf("--base needs --output-dir and --summary or --summary-json: it says what the summaries compare the render with")
	}
	if f.summaries.markdown == stdoutName && f.summaries.json == stdoutName {
		return usageErrorf("--summary and --summary-json both write to stdout (-); one of them would be unreadable")
	}
	if samePath(f.summaries.markdown, f.summaries.json) {
		return usageErrorf("--summary and --summary-json name the same file %s; one would overwrite the other", f.summaries.markdown)
	}
	// A CONFIG that does not exist and reads like a mistyped command is
	// one.
	if _, err := os.Stat(config); errors.Is(err, os.ErrNotExist) {
		if suggestions := cmd.SuggestionsFor(config); len(suggestions) > 0 {
			return usageErrorf("unknown command %q for %q (and no file %s)\n\nDid you mean this?\n\t%s\n", config, cmd.CommandPath(), config, strings.Join(suggestions, "\n\t"))
		}
	}
	return nil
}

// render renders config's inputs and inputs, to stdout or with --output-dir
// into the fleet folder, and returns the exit status, or the usage error
// that stopped it before it wrote anything.
func (f *cliFlags) render(config string, inputs []string, stdout, stderr io.Writer) (int, error) {
	defer profiling.Start()()
	// A summary on stdout follows the output after a blank line.
	out := &afterOutput{w: stdout}
	stdout = out
	f.summaries.stdout = writerFunc(out.writeAfter)
	if f.dir == "" {
		return runStandalone(f.summaries, config, inputs, stdout, stderr), nil
	}
	cfg, problems := pipeline.ReadConfig(pipeline.Options{ConfigFile: config})
	if len(problems) > 0 {
		fmt.Fprintln(stderr, problems.Error())
		return f.summaries.write(summary.Report{Problems: problems, Dir: f.dir, Check: f.check}, false, 1, stderr), nil
	}
	if msg := outputOverlap(f.dir, config, cfg, inputs); msg != "" {
		return 0, usageError{msg}
	}
	return runFleetFolder(f.folderFlags, config, cfg, inputs, stdout, stderr), nil
}

// setFlags lists the flags given on the command line, as --name.
func setFlags(flags *pflag.FlagSet) []string {
	var set []string
	flags.Visit(func(fl *pflag.Flag) { set = append(set, "--"+fl.Name) })
	return set
}

// isTerminal reports whether r is a terminal, where no ResourceList is
// coming.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// afterOutput is stdout, which remembers whether the output was written to
// it, so that a summary that follows is set apart by a blank line.
type afterOutput struct {
	w       io.Writer
	written bool // output so far
	after   bool // the summary so far
}

func (o *afterOutput) Write(p []byte) (int, error) {
	o.written = o.written || len(p) > 0
	return o.w.Write(p)
}

// writeAfter writes a summary: after a blank line when the output came
// first.
func (o *afterOutput) writeAfter(p []byte) (int, error) {
	if o.written && !o.after {
		if _, err := io.WriteString(o.w, "\n"); err != nil {
			return 0, err
		}
	}
	o.after = o.after || len(p) > 0
	return o.w.Write(p)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
