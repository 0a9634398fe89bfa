package render

import (
	"errors"
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
)

// Run is the whole function: it builds and checks the fleet from the
// objects, renders every output, adds the kept inputs and the objects that
// pass through, and orders the result. On any problem it returns no objects.
func Run(cfg *api.Config, objects []api.Object) ([]Object, api.Problems) {
	_, out, problems := RunFleet(cfg, objects)
	return out, problems
}

// RunFleet is Run that also returns the checked fleet the objects were
// rendered from, for reports about a run (the pull-request summary). On any
// problem it returns neither.
func RunFleet(cfg *api.Config, objects []api.Object) (*fleet.Fleet, []Object, api.Problems) {
	f, problems := fleet.Build(cfg, objects)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	generated, problems := Render(f)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	others := make([]Object, 0, len(f.Passthrough)+len(f.Inputs))
	for _, o := range f.Passthrough {
		others = append(others, FromInput(o))
	}
	if cfg.KeepInputs {
		for _, o := range f.Inputs {
			others = append(others, FromInput(o))
		}
	}
	out, problems := Assemble(generated, others)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	return f, out, nil
}

// Render builds every generated object of a checked fleet, unordered.
func Render(f *fleet.Fleet) ([]Object, api.Problems) {
	var out []Object
	var problems api.Problems
	fail := func(err error) {
		var p api.Problem
		var ps api.Problems
		switch {
		case errors.As(err, &ps):
			problems = append(problems, ps...)
		case errors.As(err, &p):
			problems = append(problems, p)
		default:
			problems = append(problems, api.Problem{Message: fmt.Sprintf("internal error: %v", err)})
		}
	}

	if f.Config.Delivery == api.Direct {
		if f.Config.Source.Generate {
			o, err := RenderSource(f)
			if err != nil {
				fail(err)
			} else {
				out = append(out, o)
			}
		}
		plan, ps := NewClusterPlan(f.Config)
		if len(ps) > 0 {
			return nil, ps
		}
		for _, t := range f.SortedTenants() {
			if !t.ComputePlane {
				continue
			}
			objs, ps := RenderComputePlane(f, plan, t)
			problems = append(problems, ps...)
			out = append(out, objs...)
		}
	}
	for _, app := range f.Apps {
		o, err := RenderRelease(f, app)
		if err != nil {
			fail(err)
			continue
		}
		out = append(out, o)
	}
	if len(problems) > 0 {
		return nil, problems.Compact()
	}
	return out, nil
}

// RenderComputePlane builds everything one tenant's ComputePlane needs under
// delivery: Direct: the cluster HelmRelease and the hardening around it, the
// Pod Security ConfigMap its API server loads (not under podSecurity:
// privileged) and the egress policy of its VMs.
func RenderComputePlane(f *fleet.Fleet, plan *ClusterPlan, t *fleet.Tenant) ([]Object, api.Problems) {
	cluster, problems := RenderCluster(f, plan, t)
	if len(problems) > 0 {
		return nil, problems
	}
	out := []Object{cluster}
	if a := plan.Admission(); a != nil {
		cm, err := RenderAdmission(a, t)
		if err != nil {
			return nil, api.Problems{problemOf(t, err)}
		}
		out = append(out, cm)
	}
	egress, err := RenderEgress(f, t)
	if err != nil {
		return nil, api.Problems{problemOf(t, err)}
	}
	return append(out, egress), nil
}
