package fn

import (
	"errors"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// FleetFiles lays the rendered objects out as the fleet folder of the
// config's spec.fleet: the Flux units and their wiring (docs/flux-wiring.md),
// as files sorted by path for the fleet-folder writer. It returns nil and no
// problems when the config has no spec.fleet, so that the caller writes its
// default layout instead.
func FleetFiles(cfg *api.Config, objs []render.Object) ([]units.File, api.Problems) {
	if cfg == nil || cfg.Fleet == nil {
		return nil, nil
	}
	files, err := units.Layout(cfg, objs)
	if err != nil {
		var ps api.Problems
		if errors.As(err, &ps) {
			return nil, ps
		}
		return nil, api.Problems{api.Errorf(cfg.Ref, cfg.Origin, "spec.fleet", "failed to lay out the fleet: %v", err)}
	}
	return files, nil
}

// StandaloneFleet is Standalone followed by FleetFiles: it renders the
// config's inputs and args and lays them out as the fleet folder of its
// spec.fleet. laidOut is false, with no files, when the config has no
// spec.fleet.
func StandaloneFleet(dir, configPath string, args []string) (files []units.File, laidOut bool, problems api.Problems) {
	cfg, problems := ReadConfig(configPath)
	if len(problems) > 0 {
		return nil, false, problems
	}
	objs, problems := Standalone(dir, configPath, args)
	if len(problems) > 0 {
		return nil, false, problems
	}
	if cfg.Fleet == nil {
		return nil, false, nil
	}
	files, problems = FleetFiles(cfg, objs)
	if len(problems) > 0 {
		return nil, false, problems
	}
	return files, true, nil
}
