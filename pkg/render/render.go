package render

import (
	"errors"
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/internal/parallel"
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
	return run(cfg, objects, false)
}

// RunLazy is RunFleet for large fleets: the releases of apps whose values
// were encoded ahead (api.App.Values) are checked and ordered but rendered
// only by Object.Build, when they are written, and the objects of each
// tenant's ComputePlane are held as text (Object.Text) from the moment they
// are rendered. Every problem is still found before anything is returned.
func RunLazy(cfg *api.Config, objects []api.Object) (*fleet.Fleet, []Object, api.Problems) {
	return run(cfg, objects, true)
}

func run(cfg *api.Config, objects []api.Object, lazy bool) (*fleet.Fleet, []Object, api.Problems) {
	f, problems := fleet.Build(cfg, objects)
	if len(problems) > 0 {
		return nil, nil, problems
	}
	generated, problems := render(f, lazy)
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
	return render(f, false)
}

func render(f *fleet.Fleet, lazy bool) ([]Object, api.Problems) {
	out := make([]Object, 0, len(f.Apps)+len(f.Tenants)+1)
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
		var tenants []*fleet.Tenant
		for _, t := range f.SortedTenants() {
			if t.ComputePlane {
				tenants = append(tenants, t)
			}
		}
		// Tenants are rendered on all cores, and collected in their order.
		type rendered struct {
			objs     []Object
			problems api.Problems
		}
		err := parallel.Ordered(len(tenants), parallel.Workers(),
			func(i int) (rendered, error) {
				objs, ps := RenderComputePlane(f, plan, tenants[i])
				if lazy && len(ps) == 0 {
					// Held as text until written: a few KB instead of
					// hundreds of nodes per tenant.
					for j := range objs {
						if err := objs[j].encode(); err != nil {
							ps = append(ps, problemOf(tenants[i], err))
						}
					}
				}
				return rendered{objs, ps}, nil
			},
			func(_ int, r rendered) error {
				problems = append(problems, r.problems...)
				out = append(out, r.objs...)
				return nil
			})
		if err != nil {
			fail(err)
		}
	}
	rs := newReleases(f, lazy)
	renderRelease := rs.render
	if lazy {
		renderRelease = rs.plan
	}
	for _, app := range f.Apps {
		o, err := renderRelease(app)
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
