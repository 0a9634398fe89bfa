package fn

import (
	"errors"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// FleetFiles lays the rendered objects out as the fleet folder of the
// config's spec.fleet: the Flux units and their wiring (docs/flux-wiring.md),
// as files sorted by path for the fleet-folder writer. It returns nil and no
// problems when the config has no spec.fleet, so that the caller writes its
// default layout instead.
func FleetFiles(cfg *api.Config, objs []render.Object) ([]output.File, api.Problems) {
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

// OutputFiles lays a run out as the files the fleet-folder writer writes
// with --output-dir: the Flux units and wiring of spec.fleet when the config
// has it, one file per object otherwise (output.Files). Only generated
// objects are laid out: kept inputs and objects that pass through are the
// user's own files, already in the repository, and a copy without the
// managed-by label could never be pruned (docs/fleet-repo.md).
func OutputFiles(r *Run) ([]output.File, api.Problems) {
	generated := make([]render.Object, 0, len(r.Objects))
	for _, o := range r.Objects {
		if o.Generated {
			generated = append(generated, o)
		}
	}
	if r.Config.Fleet == nil {
		files, err := output.Files(generated)
		if err != nil {
			return nil, api.Problems{{Message: err.Error()}}
		}
		return files, nil
	}
	laidOut, problems := FleetFiles(r.Config, generated)
	if len(problems) > 0 {
		return nil, problems
	}
	return laidOut, nil
}
