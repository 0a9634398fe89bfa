package fn

import (
	"errors"
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// Standalone runs the function outside a ResourceList: the config is read
// from configPath, and the inputs from the files, folders and globs of its
// spec.inputs and of args, all relative to dir (empty: the working
// directory).
//
// Every object comes with its whole node; StandaloneRun is the way for
// fleets of any size, and what the CLI runs. Every problem is found before
// anything is returned; the output is byte for byte the KRM function's.
//
// The config's spec.inputs must stay inside dir (input.ExpandInside); the
// command-line inputs, which the person running it typed, may be anywhere.
// Everything read counts against one input.Budget. At most MaxProblems
// problems are returned.
func Standalone(dir, configPath string, args []string) ([]render.Object, api.Problems) {
	r, problems := StandaloneRun(dir, configPath, args)
	if len(problems) > 0 {
		return nil, problems
	}
	objs := make([]render.Object, len(r.Objects))
	for i, o := range r.Objects {
		b, err := o.Build()
		if err != nil {
			return nil, api.Problems{{Object: o.From, File: o.Origin.File, Message: fmt.Sprintf("internal error: %v", err)}}
		}
		objs[i] = b
	}
	return objs, nil
}

// Run is a whole standalone run: what the fleet-repo mode needs besides the
// objects, the config (its spec.fleet lays out the folder) and the checked
// fleet (the summary reports on it).
type Run struct {
	Config  *api.Config
	Fleet   *fleet.Fleet
	Objects []render.Object
	// Warnings are what a person should know without the run being
	// refused (render.Warnings); the CLI prints them on stderr.
	Warnings api.Problems
}

// StandaloneRun is Standalone that returns the whole run, built for fleets
// of any size: files are decoded on all cores, each input is boiled down
// while its file is read (decoded, an app's values encoded as the text of its
// release, see prepare), and its objects are lazy (render.RunLazy): the app
// releases are rendered, and tenant objects held as text, until a writer
// encodes them one by one (Object.AppendYAML, which output.Encode and the
// fleet-folder writers use; Object.Build gives a node). On any problem it
// returns no run.
func StandaloneRun(dir, configPath string, args []string) (*Run, api.Problems) {
	cfg, objects, problems := ReadInputs(dir, configPath, args)
	if len(problems) > 0 {
		return nil, problems
	}
	f, objs, problems := render.RunLazy(cfg, objects)
	if len(problems) > 0 {
		return nil, Capped(problems)
	}
	return &Run{Config: cfg, Fleet: f, Objects: objs, Warnings: render.Warnings(f)}, nil
}

// ReadInputs is the reading half of Standalone: the config, and the objects
// of its spec.inputs and of args, inputs boiled down (see prepare).
func ReadInputs(dir, configPath string, args []string) (*api.Config, []api.Object, api.Problems) {
	cfg, objects, problems := readInputs(dir, configPath, args)
	return cfg, objects, Capped(problems)
}

func readInputs(dir, configPath string, args []string) (*api.Config, []api.Object, api.Problems) {
	budget := new(input.Budget)
	cfg, problems := readConfig(budget, configPath)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	// Kept inputs are written as they were read: their nodes must stay.
	prepareInput := prepare
	if cfg.KeepInputs {
		prepareInput = nil
	}
	var objects []api.Object
	if len(cfg.Inputs) > 0 {
		objs, err := budget.ReadInside(dir, cfg.Inputs, prepareInput)
		if err != nil {
			return nil, nil, problemsOf(err, cfg)
		}
		objects = append(objects, objs...)
	}
	if len(args) > 0 {
		objs, err := budget.Read(dir, args, prepareInput)
		if err != nil {
			var ps api.Problems
			if errors.As(err, &ps) {
				return nil, nil, ps
			}
			return nil, nil, api.Problems{{Message: err.Error()}}
		}
		objects = append(objects, objs...)
	}
	return cfg, objects, nil
}

// prepare decodes a Tenant, ComputePlane knobs or an app object as indexing
// would, encodes an app's values as they will read in its release, and drops
// the object's node tree: from here on the object is a few strings, maps and
// the text of its values.
func prepare(o *api.Object) {
	var d api.Decoded
	switch {
	case fleet.IsApp(*o):
		d.App, d.Problems = api.DecodeApp(*o)
		if d.App.Spec != nil {
			d.App.Values = render.EncodeValues(d.App.Spec)
			d.App.Spec = nil
		}
	case fleet.IsTenant(*o):
		d.Tenant, d.Problems = api.DecodeTenant(*o)
	case fleet.IsKnobs(*o):
		d.Knobs, d.Problems = api.DecodeKnobs(*o)
	default:
		return
	}
	o.Decoded, o.Node = &d, nil
}

// ReadConfig reads the ComputePlaneGenerator from a file holding exactly one.
func ReadConfig(path string) (*api.Config, api.Problems) {
	return readConfig(new(input.Budget), path)
}

func readConfig(budget *input.Budget, path string) (*api.Config, api.Problems) {
	objs, err := budget.ReadFile(path)
	if err != nil {
		var ps api.Problems
		if errors.As(err, &ps) {
			return nil, ps
		}
		return nil, api.Problems{{File: path, Message: err.Error()}}
	}
	if len(objs) != 1 {
		return nil, api.Problems{{File: path, Message: fmt.Sprintf("the config file must hold exactly one %s, found %d objects", api.ConfigKind, len(objs))}}
	}
	return api.DecodeConfig(objs[0])
}
