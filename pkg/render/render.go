package render

import (
	"errors"
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
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

	if p, over := predictCopies(f); over {
		return nil, api.Problems{p}
	}
	var size outputSize
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
			if p, over := size.add(objs...); over {
				return nil, api.Problems{p}
			}
		}
	}
	for _, app := range f.Apps {
		o, err := RenderRelease(f, app)
		if err != nil {
			fail(err)
			continue
		}
		out = append(out, o)
		if p, over := size.add(o); over {
			return nil, api.Problems{p}
		}
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

// Limits of the generated output. What every cluster copies (the config's
// spec.cluster.values) and what every release of a kind copies (its
// definition's labels and health checks) is multiplied by the number of
// tenants and apps, so the inputs' limits alone do not bound the output.
// The scale target generates 15 million nodes and 190 MB.
const (
	// MaxOutputNodes is the most YAML nodes one run generates.
	MaxOutputNodes = 32_000_000
	// MaxOutputBytes is the most bytes of scalar values one run generates.
	MaxOutputBytes = 1 << 30
)

// outputSize counts what a run has generated.
type outputSize struct{ nodes, bytes int }

// add counts objects and reports the problem when the output goes over a
// limit, naming the object that did.
func (s *outputSize) add(objs ...Object) (api.Problem, bool) {
	for _, o := range objs {
		n, b := yamlnode.Size(o.Node)
		s.nodes += n
		s.bytes += b
		if s.nodes > MaxOutputNodes || s.bytes > MaxOutputBytes {
			return api.Errorf(o.From, o.Origin, "", "the output would hold more than %s YAML nodes or %d MiB of values (at %s %s/%s); split the fleet into several runs, or make what every object copies smaller (spec.cluster.values of the config, the labels and health checks of a definition)",
				yamlnode.Count(MaxOutputNodes), MaxOutputBytes>>20, o.Kind, o.Namespace, o.Name), true
		}
	}
	return api.Problem{}, false
}

// predictCopies refuses, before anything is rendered, a fleet whose copies
// alone go over MaxOutputNodes: every cluster copies the config's
// spec.cluster.values and every release its definition's labels and health
// checks, so a few small inputs can ask for a huge output.
func predictCopies(f *fleet.Fleet) (api.Problem, bool) {
	clusters := 0
	if f.Config.Delivery == api.Direct {
		for _, t := range f.Tenants {
			if t.ComputePlane {
				clusters++
			}
		}
	}
	values := valueSize(f.Config.Cluster.Values)
	fromValues, fromDefinitions := clusters*values, 0
	var largest *api.Definition
	releases := map[*api.Definition]int{}
	copied := func(d *api.Definition) int { return 2*len(d.Labels) + 12*len(d.HealthCheckExprs) }
	for _, app := range f.Apps {
		d := app.Definition
		fromDefinitions += copied(d)
		releases[d]++
		if largest == nil || copied(d)*releases[d] > copied(largest)*releases[largest] {
			largest = d
		}
	}
	if fromValues+fromDefinitions <= MaxOutputNodes {
		return api.Problem{}, false
	}
	advice := "split the fleet into several runs, or make what they copy smaller"
	if fromValues >= fromDefinitions {
		return api.Errorf(f.Config.Ref, f.Config.Origin, "spec.cluster.values",
			"the output would hold more than %s YAML nodes: each of the %d ComputePlane clusters copies these values (%s nodes); %s",
			yamlnode.Count(MaxOutputNodes), clusters, yamlnode.Count(values), advice), true
	}
	return api.Errorf(largest.Ref, largest.Origin, "spec.release",
		"the output would hold more than %s YAML nodes: each of the %d releases of kind %s copies the labels and health checks of this definition (%s nodes); %s",
		yamlnode.Count(MaxOutputNodes), releases[largest], largest.Kind, yamlnode.Count(copied(largest)), advice), true
}

// valueSize counts the YAML nodes of a JSON-like value.
func valueSize(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := 1
		for _, x := range v {
			n += 1 + valueSize(x)
		}
		return n
	case []any:
		n := 1
		for _, x := range v {
			n += valueSize(x)
		}
		return n
	}
	return 1
}
