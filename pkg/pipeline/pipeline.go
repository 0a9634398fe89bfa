package pipeline

import (
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/order"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

// Options say what one run reads and how it holds its objects.
type Options struct {
	// Dir is the folder the config's spec.inputs and Inputs are relative
	// to; empty means the working directory.
	Dir string
	// Config is the function config, decoded already (a tool that builds
	// it in code). When it is nil, ConfigObject is decoded, or else
	// ConfigFile read.
	Config *api.Config
	// ConfigObject is the ComputePlaneGenerator as an object already read
	// (a ResourceList's functionConfig), not yet checked.
	ConfigObject *api.Object
	// ConfigFile is the file holding the ComputePlaneGenerator, exactly
	// one object.
	ConfigFile string
	// Items are objects already read (a ResourceList's items), not yet
	// checked; a v1 List among them is unwrapped.
	Items []api.Object
	// Inputs are files, folders and globs named on the command line; unlike
	// the config's spec.inputs, which must stay inside Dir, they may be
	// anywhere.
	Inputs []string
	// Budget counts everything the run reads against the limits of package
	// input; nil starts a new one.
	Budget *input.Budget
}

// Result is one run: the ordered objects, and what a writer or a report
// needs besides them.
type Result struct {
	// Config is the decoded function config; its spec.fleet lays out a
	// fleet folder.
	Config *api.Config
	// Fleet is the checked fleet the objects were rendered from, for
	// reports (the pull-request summary).
	Fleet *model.Fleet
	// Objects are the generated objects, the kept inputs and the objects
	// that pass through, in order.Compare order.
	Objects []render.Object
	// Warnings are what a person should know without the run being
	// refused (model.Fleet.Warnings).
	Warnings api.Problems
}

// Run reads the config and the inputs, builds and checks the fleet, renders
// every output and orders the result. Every problem is found before
// anything is returned; on any problem it returns no result and at most
// api.MaxProblems problems.
func Run(opts Options) (*Result, api.Problems) {
	r, problems := run(opts)
	if len(problems) > 0 {
		return nil, problems.Capped()
	}
	return r, nil
}

func read(opts Options) (*api.Config, []*model.Input, api.Problems) {
	budget := opts.Budget
	if budget == nil {
		budget = new(input.Budget)
	}
	cfg, problems := readConfig(budget, opts)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	objects, problems := readInputs(budget, cfg, opts)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	return cfg, objects, nil
}

func run(opts Options) (*Result, api.Problems) {
	cfg, objects, problems := read(opts)
	if len(problems) > 0 {
		return nil, problems
	}
	f, problems := model.Build(cfg, objects)
	if len(problems) > 0 {
		return nil, problems
	}
	// Every mistake of the user's was found above: what fails from here
	// on is a bug, reported as one.
	generated, err := render.Outputs(f)
	if err != nil {
		return nil, api.Problems{api.Internal(err)}
	}
	others := make([]render.Object, 0, len(f.Passthrough)+len(f.Inputs))
	for _, o := range f.Passthrough {
		others = append(others, render.FromInput(o))
	}
	if cfg.KeepInputs {
		for _, o := range f.Inputs {
			// A kept input is written as it was read, except for what YAML
			// 1.1 readers would read otherwise (quoted strings, string
			// keys): what was validated is what is applied. Objects that
			// pass through are not inputs and stay untouched.
			yamlnode.QuoteForYAML11(o.Node)
			others = append(others, render.FromInput(o))
		}
	}
	out, problems := order.Objects(generated, others)
	if len(problems) > 0 {
		return nil, problems
	}
	return &Result{Config: cfg, Fleet: f, Objects: out, Warnings: f.Warnings()}, nil
}

// ReadConfig reads and decodes the function config of opts alone, for a
// caller that checks it before the run (the CLI's paths); Run then takes it
// as opts.Config.
func ReadConfig(opts Options) (*api.Config, api.Problems) {
	budget := opts.Budget
	if budget == nil {
		budget = new(input.Budget)
	}
	return readConfig(budget, opts)
}

// readConfig reads and decodes the function config: the one given, the
// object given, or the file holding exactly one.
func readConfig(budget *input.Budget, opts Options) (*api.Config, api.Problems) {
	if opts.Config != nil {
		return opts.Config, nil
	}
	if opts.ConfigObject != nil {
		obj, problems := budget.Object(opts.ConfigObject.Node, opts.ConfigObject.Origin)
		if len(problems) > 0 {
			return nil, problems
		}
		return api.DecodeConfig(obj)
	}
	objs, problems := budget.ReadFile(opts.ConfigFile)
	if len(problems) > 0 {
		return nil, problems
	}
	if len(objs) != 1 {
		return nil, api.Problems{{File: opts.ConfigFile, Message: fmt.Sprintf("the config file must hold exactly one %s, found %d objects", api.ConfigKind, len(objs))}}
	}
	return api.DecodeConfig(objs[0])
}

// readInputs reads the items, the config's spec.inputs and the command
// line's inputs, in that order, all charged to one budget, each object
// read by the fleet (model.Reader) as soon as it is decoded.
func readInputs(budget *input.Budget, cfg *api.Config, opts Options) ([]*model.Input, api.Problems) {
	var problems api.Problems
	reader := model.Reader{Config: cfg, EncodeValues: yamltext.EncodeValues}
	readInput := reader.Read
	inputs := make([]*model.Input, 0, len(opts.Items))
	for _, item := range opts.Items {
		objs, ps := budget.Unwrap(item.Node, item.Origin)
		if len(ps) == 0 {
			// Items are held whole until they are written.
			ps = budget.HoldItems(objs)
		}
		if len(ps) > 0 {
			problems = append(problems, ps...)
			if budget.Exhausted() {
				return nil, problems
			}
			continue
		}
		inputs = append(inputs, reader.ReadAll(objs)...)
	}
	if len(problems) > 0 {
		// Sorted, as every other list of problems: items come in any order.
		return nil, problems.Compact()
	}
	if len(cfg.Inputs) > 0 {
		read, problems := input.ReadAs(cfg.Inputs, input.Options{Dir: opts.Dir, Config: cfg, Budget: budget}, readInput)
		if len(problems) > 0 {
			return nil, problems
		}
		inputs = append(inputs, read...)
	}
	if len(opts.Inputs) > 0 {
		read, problems := input.ReadAs(opts.Inputs, input.Options{Dir: opts.Dir, Budget: budget}, readInput)
		if len(problems) > 0 {
			return nil, problems
		}
		inputs = append(inputs, read...)
	}
	return inputs, nil
}
