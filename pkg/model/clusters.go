package model

import (
	"github.com/computeplane-dev/computeplane-fn/internal/parallel"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// checkClusters builds the values every cluster shares under delivery:
// Direct (NewClusterPlan) and checks every tenant's knobs against them,
// so that rendering a cluster cannot fail on what a user wrote. Tenants are
// checked on all cores: the knob schema's validator is the costly part of a
// large fleet's check.
func (f *Fleet) checkClusters() api.Problems {
	if f.Config.Delivery != api.Direct {
		return nil
	}
	plan, problems := NewClusterPlan(f.Config)
	if len(problems) > 0 {
		return problems
	}
	f.Cluster = plan
	var withKnobs []*Tenant
	for _, t := range f.SortedTenants() {
		if t.ComputePlane && t.Knobs != nil {
			withKnobs = append(withKnobs, t)
		}
	}
	err := parallel.Ordered(len(withKnobs), parallel.Workers(),
		func(i int) (api.Problems, error) { return plan.Check(withKnobs[i].Knobs), nil },
		func(_ int, ps api.Problems) error {
			problems = append(problems, ps...)
			return nil
		})
	if err != nil {
		problems = append(problems, api.Internal(err))
	}
	return problems
}
