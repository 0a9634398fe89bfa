package pipeline

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/yaml"

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
	// Dir is the folder Inputs are relative to; empty means the working
	// directory.
	Dir string
	// ConfigDir is the folder the config's spec.inputs are relative to (and
	// must stay inside), as kustomize and kpt resolve the paths of a file:
	// the folder of the config file. Empty means the folder of ConfigFile
	// when the config is read from one, and Dir otherwise.
	ConfigDir string
	// ConfigDirShown is how origins and messages name ConfigDir: the files
	// of spec.inputs are named <ConfigDirShown>/<path below ConfigDir>. The
	// KRM function gives the config's folder as kpt names its items, so
	// that an item and the file of spec.inputs it came from share a name.
	// Empty means ConfigDir itself when it is a relative path.
	ConfigDirShown string
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
	// checked; a v1 List among them is unwrapped. Three kinds of item
	// come back as they came, whatever keepInputs says, since kpt deletes
	// the file of an item a function drops: one that is the file of one of
	// spec.inputs (its origin names that file: it is read once, as the
	// item, and the file is not read again), a ComputePlaneGenerator from a
	// file (the function config kpt hands over as an item too; kustomize's
	// generator items name no file, and stay out of kustomize's output),
	// and a kustomization file that is no Kubernetes object (kustomize
	// allows a kustomization.yaml without apiVersion and kind, and kpt
	// hands it over).
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

// read is what the read stage hands on: the config, the inputs, and the
// items that come back as they came (see Options.Items).
type readResult struct {
	cfg       *api.Config
	inputs    []*model.Input
	untouched []api.Object
	// back are the nodes of the objects read from untouched items (the
	// objects of a v1 List among them included): neither keepInputs nor
	// the objects that pass through write them a second time.
	back map[*yaml.Node]bool
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

func readAll(opts Options) (*readResult, api.Problems) {
	budget := opts.Budget
	if budget == nil {
		budget = new(input.Budget)
	}
	cfg, problems := readConfig(budget, opts)
	if len(problems) > 0 {
		return nil, problems
	}
	r, problems := readInputs(budget, cfg, opts)
	if len(problems) > 0 {
		return nil, problems
	}
	r.cfg = cfg
	return r, nil
}

func run(opts Options) (*Result, api.Problems) {
	rd, problems := readAll(opts)
	if len(problems) > 0 {
		return nil, problems
	}
	cfg, objects := rd.cfg, rd.inputs
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
	others := make([]render.Object, 0, len(f.Passthrough)+len(f.Inputs)+len(rd.untouched))
	for _, o := range f.Passthrough {
		if !rd.back[o.Node] {
			others = append(others, render.FromInput(o))
		}
	}
	for _, o := range rd.untouched {
		others = append(others, render.FromInput(o))
	}
	if cfg.KeepInputs {
		for _, o := range f.Inputs {
			if rd.back[o.Node] {
				continue // back as it came already
			}
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

// configDir is the folder the config's spec.inputs are relative to, and
// how origins name it.
func configDir(opts Options) (dir, shown string) {
	switch {
	case opts.ConfigDir != "":
		dir = opts.ConfigDir
	case opts.Config == nil && opts.ConfigObject == nil && opts.ConfigFile != "":
		dir = filepath.Dir(opts.ConfigFile)
	default:
		dir = opts.Dir
	}
	shown = opts.ConfigDirShown
	if shown == "" && dir != "." && !filepath.IsAbs(dir) {
		shown = filepath.ToSlash(dir)
	}
	return dir, shown
}

// kustomizationFiles are the names kustomize reads a kustomization from.
var kustomizationFiles = konfig.RecognizedKustomizationFileNames()

// untouchedItem reports whether an item comes back as it came without
// being read as an input: a kustomization file that is no Kubernetes
// object, which kpt hands over as an item.
func untouchedItem(o api.Object) bool {
	return (o.APIVersion == "" || o.Kind == "") && slices.Contains(kustomizationFiles, path.Base(o.Origin.File))
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
func readInputs(budget *input.Budget, cfg *api.Config, opts Options) (*readResult, api.Problems) {
	var problems api.Problems
	reader := model.Reader{Config: cfg, EncodeValues: yamltext.EncodeValues}
	readInput := reader.Read
	r := &readResult{inputs: make([]*model.Input, 0, len(opts.Items)), back: map[*yaml.Node]bool{}}
	dir, shown := configDir(opts)
	// The files of spec.inputs, named as their items would be: an item of
	// one of them is that file, read once.
	var named map[string]bool
	if len(opts.Items) > 0 && len(cfg.Inputs) > 0 {
		files, ps := input.ExpandInside(dir, cfg.Inputs)
		if len(ps) == 0 {
			named = make(map[string]bool, len(files))
			for _, f := range files {
				if rel, err := filepath.Rel(dir, f); err == nil {
					named[path.Join(shown, filepath.ToSlash(rel))] = true
				}
			}
		}
	}
	items := map[string]bool{}
	for _, item := range opts.Items {
		file := path.Clean(item.Origin.File)
		if item.Origin.File != "" && named[file] {
			items[file] = true // read once, as the item
		}
		if o := api.NewObject(item.Node, item.Origin); untouchedItem(o) {
			r.untouched = append(r.untouched, o)
			continue
		}
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
		// Earlier output is rendered anew, never kept, wherever it is.
		earlier := len(objs) > 0 && !slices.ContainsFunc(objs, func(o api.Object) bool { return !o.Generated })
		switch {
		case item.Origin.File != "" && named[file]:
			if earlier {
				break
			}
			r.untouched = append(r.untouched, api.NewObject(item.Node, item.Origin))
			for _, o := range objs {
				r.back[o.Node] = true
			}
		case item.Origin.File != "":
			for _, o := range objs {
				if o.APIVersion == api.ConfigAPIVersion && o.Kind == api.ConfigKind {
					r.untouched = append(r.untouched, o)
					r.back[o.Node] = true
				}
			}
		}
		r.inputs = append(r.inputs, reader.ReadAll(objs)...)
	}
	if len(problems) > 0 {
		// Sorted, as every other list of problems: items come in any order.
		return nil, problems.Compact()
	}
	if len(cfg.Inputs) > 0 {
		in := input.Options{Dir: dir, Shown: shown, Config: cfg, Budget: budget}
		if len(items) > 0 {
			in.Skip = func(name string) bool { return items[name] }
		}
		read, problems := input.ReadAs(cfg.Inputs, in, readInput)
		if len(problems) > 0 {
			return nil, problems
		}
		r.inputs = append(r.inputs, read...)
	}
	if len(opts.Inputs) > 0 {
		read, problems := input.ReadAs(opts.Inputs, input.Options{Dir: opts.Dir, Budget: budget}, readInput)
		if len(problems) > 0 {
			return nil, problems
		}
		r.inputs = append(r.inputs, read...)
	}
	return r, nil
}
