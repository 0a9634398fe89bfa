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
// The config's spec.inputs must stay inside dir (input.ExpandInside); the
// command-line inputs, which the person running it typed, may be anywhere.
// Everything read counts against one input.Budget. At most MaxProblems
// problems are returned.
func Standalone(dir, configPath string, args []string) ([]render.Object, api.Problems) {
	r, problems := StandaloneRun(dir, configPath, args)
	if len(problems) > 0 {
		return nil, problems
	}
	return r.Objects, nil
}

// Run is a whole standalone run: what the fleet-repo mode needs besides the
// objects, the config (its spec.fleet lays out the folder) and the checked
// fleet (the summary reports on it).
type Run struct {
	Config  *api.Config
	Fleet   *fleet.Fleet
	Objects []render.Object
}

// StandaloneRun is Standalone that returns the whole run. On any problem it
// returns no run, and at most MaxProblems problems.
func StandaloneRun(dir, configPath string, args []string) (*Run, api.Problems) {
	r, problems := standaloneRun(dir, configPath, args)
	return r, Capped(problems)
}

func standaloneRun(dir, configPath string, args []string) (*Run, api.Problems) {
	budget := new(input.Budget)
	cfg, problems := readConfig(budget, configPath)
	if len(problems) > 0 {
		return nil, problems
	}
	var objects []api.Object
	if len(cfg.Inputs) > 0 {
		objs, err := budget.ReadAllInside(dir, cfg.Inputs)
		if err != nil {
			return nil, problemsOf(err, cfg)
		}
		objects = append(objects, objs...)
	}
	if len(args) > 0 {
		objs, err := budget.ReadAll(dir, args)
		if err != nil {
			var ps api.Problems
			if errors.As(err, &ps) {
				return nil, ps
			}
			return nil, api.Problems{{Message: err.Error()}}
		}
		objects = append(objects, objs...)
	}
	f, objs, problems := render.RunFleet(cfg, objects)
	if len(problems) > 0 {
		return nil, problems
	}
	return &Run{Config: cfg, Fleet: f, Objects: objs}, nil
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
