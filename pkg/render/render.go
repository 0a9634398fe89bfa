package render

import (
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/internal/parallel"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Outputs renders every generated object of a checked fleet, unordered:
// the source, each tenant's cluster with its hardening, the guard and every
// app's release (package order then adds what passes through and sorts).
//
// Every check is done here; the releases of apps are only planned, and
// rendered over their definition's shared parts when a writer reaches them
// (see Body), and the objects of each tenant's cluster are held as text
// from the moment they are rendered, so that fleets of any size fit. On any
// problem it returns no objects.
func Outputs(f *fleet.Fleet) ([]Object, api.Problems) {
	out := make([]Object, 0, len(f.Apps)+len(f.Tenants)+1)
	var problems api.Problems
	// The renderers' errors are none of the user's: the encoder failed.
	fail := func(err error) { problems = append(problems, internalProblem(err)) }

	if p, over := predictCopies(f); over {
		return nil, api.Problems{p}
	}
	if f.Config.Delivery == api.Platform {
		// The module provisions the cluster; the egress policy of its VMs
		// is still this function's.
		for _, t := range f.SortedTenants() {
			if !t.ComputePlane {
				continue
			}
			objs := make([]Object, 0, 2)
			o, err := RenderEgress(f, t)
			if err == nil {
				objs = append(objs, o)
				o, err = renderBaseline(f, t)
				objs = append(objs, o)
			}
			for i := range objs {
				if err == nil {
					err = objs[i].holdAsText()
				}
			}
			if err != nil {
				problems = append(problems, problemOf(t, err))
				continue
			}
			out = append(out, objs...)
		}
	}
	var installers []string
	if f.Config.Delivery == api.Direct {
		for _, t := range f.SortedTenants() {
			if t.ComputePlane {
				installers = append(installers, t.Namespace)
			}
		}
		role, err := RenderInstallerRole(f)
		if err != nil {
			fail(err)
		} else {
			out = append(out, role...)
		}
	}
	if account, err := RenderFleetAccount(f, installers); err != nil {
		fail(err)
	} else {
		out = append(out, account...)
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
				if len(ps) == 0 {
					// Held as text until written: a few KB instead of
					// hundreds of nodes per tenant.
					for j := range objs {
						if err := objs[j].holdAsText(); err != nil {
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
	if f.Config.Guard.Enabled {
		guard, err := RenderGuard(f)
		if err != nil {
			fail(err)
		} else {
			out = append(out, guard...)
		}
	}
	if f.Config.Fleet == nil && hasComputePlane(f) {
		if source, err := RenderBaselineSource(f); err != nil {
			fail(err)
		} else {
			out = append(out, source...)
		}
	}
	if policy, err := RenderShardLabelPolicy(f); err != nil {
		fail(err)
	} else {
		out = append(out, policy...)
	}
	releases := newReleases(f)
	for _, app := range f.Apps {
		o, ps := releases.render(app)
		if len(ps) > 0 {
			problems = append(problems, ps...)
			continue
		}
		out = append(out, o)
	}
	if len(problems) > 0 {
		return nil, problems.Compact()
	}
	return out, nil
}

// internalProblem is the problem of a failure that is no mistake of the
// user's (an encoder that failed): a bug to report.
func internalProblem(err error) api.Problem {
	return api.Problem{Message: fmt.Sprintf("internal error: %v", err)}
}

// RenderComputePlane builds everything one tenant's ComputePlane needs under
// delivery: Direct: the cluster HelmRelease, its installer (RenderInstaller)
// and the hardening around it, the
// Pod Security ConfigMap its API server loads (not under podSecurity:
// privileged), the egress policy of its VMs and the in-cluster baseline
// (renderBaseline).
func RenderComputePlane(f *fleet.Fleet, plan *ClusterPlan, t *fleet.Tenant) ([]Object, api.Problems) {
	cluster, problems := RenderClusterRelease(f, plan, t)
	if len(problems) > 0 {
		return nil, problems
	}
	out := []Object{cluster}
	installer, err := RenderInstaller(f, t)
	if err != nil {
		return nil, api.Problems{problemOf(t, err)}
	}
	out = append(out, installer...)
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
	out = append(out, egress)
	baseline, err := renderBaseline(f, t)
	if err != nil {
		return nil, api.Problems{problemOf(t, err)}
	}
	out = append(out, baseline)
	return out, nil
}

// renderBaseline builds a tenant's in-cluster baseline as its mode
// delivers it: a Kustomization of the fleet folder's files with spec.fleet,
// a release of the baseline chart in the stream without it.
func renderBaseline(f *fleet.Fleet, t *fleet.Tenant) (Object, error) {
	if f.Config.Fleet != nil {
		return RenderBaseline(f, t)
	}
	return RenderBaselineRelease(f, t)
}

// hasComputePlane reports whether any tenant of the fleet has one.
func hasComputePlane(f *fleet.Fleet) bool {
	for _, t := range f.Tenants {
		if t.ComputePlane {
			return true
		}
	}
	return false
}

// Limits of what inputs make the output copy many times: every ComputePlane
// cluster copies the config's spec.cluster.values, and every release of a
// kind its definition's labels and health checks. Everything else in the
// output is bounded by the inputs' own limits (package input); these
// copies are multiplied by the number of tenants and apps, and a few small
// inputs could ask for a huge output. The scale target copies some 0.3
// million nodes and 3.5 MB.
const (
	// MaxCopiedNodes is the most YAML nodes such copies may add to a run.
	MaxCopiedNodes = 32_000_000
	// MaxCopiedBytes is the most bytes of values such copies may add.
	MaxCopiedBytes = 256 << 20
)

// size is a count of YAML nodes and of the bytes of their keys and values.
type size struct{ nodes, bytes int }

func (s size) add(o size) size  { return size{s.nodes + o.nodes, s.bytes + o.bytes} }
func (s size) times(n int) size { return size{s.nodes * n, s.bytes * n} }
func (s size) over() bool       { return s.nodes > MaxCopiedNodes || s.bytes > MaxCopiedBytes }
func (s size) less(o size) bool { return s.nodes < o.nodes || s.nodes == o.nodes && s.bytes < o.bytes }
func (s size) String() string {
	return fmt.Sprintf("%s nodes, %s bytes", yamlnode.Count(s.nodes), yamlnode.Count(s.bytes))
}

// predictCopies refuses, before anything is rendered, a fleet whose copies
// go over MaxCopiedNodes or MaxCopiedBytes, naming what is copied.
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
	fromValues := values.times(clusters)
	copied := map[*api.Definition]size{}
	releases := map[*api.Definition]int{}
	var fromDefinitions size
	for _, app := range f.Apps {
		d := app.Definition
		c, ok := copied[d]
		if !ok {
			c = definitionSize(d)
			copied[d] = c
		}
		fromDefinitions = fromDefinitions.add(c)
		releases[d]++
	}
	if !fromValues.add(fromDefinitions).over() {
		return api.Problem{}, false
	}
	limits := fmt.Sprintf("at most %s YAML nodes and %d MiB", yamlnode.Count(MaxCopiedNodes), MaxCopiedBytes>>20)
	if !fromValues.less(fromDefinitions) {
		return api.Errorf(f.Config.Ref, f.Config.Origin, "spec.cluster.values",
			"each of the %d ComputePlane clusters copies these values (%s), more than the output may hold for such copies (%s); split the fleet into several runs, or fix fewer values",
			clusters, values, limits), true
	}
	var largest *api.Definition
	for d := range copied {
		if largest == nil || copied[largest].times(releases[largest]).less(copied[d].times(releases[d])) ||
			copied[d].times(releases[d]) == copied[largest].times(releases[largest]) && d.Ref.Name < largest.Ref.Name {
			largest = d
		}
	}
	return api.Errorf(largest.Ref, largest.Origin, "spec.release",
		"each of the %d releases of kind %s copies the labels and health checks of this definition (%s), more than the output may hold for such copies (%s); split the fleet into several runs, or give the definition fewer labels and health checks",
		releases[largest], largest.Kind, copied[largest], limits), true
}

// definitionSize is what a definition gives each of its releases.
func definitionSize(d *api.Definition) size {
	s := size{nodes: 2 * len(d.Labels)}
	for k, v := range d.Labels {
		s.bytes += len(k) + len(v)
	}
	for _, hc := range d.HealthCheckExprs {
		s.nodes += 12
		s.bytes += len(hc.APIVersion) + len(hc.Kind) + len(hc.Current) + len(hc.InProgress) + len(hc.Failed) + 64
	}
	return s
}

// valueSize counts the YAML nodes of a JSON-like value and the bytes of its
// keys and values.
func valueSize(v any) size {
	switch v := v.(type) {
	case map[string]any:
		s := size{nodes: 1}
		for k, x := range v {
			s = s.add(size{1, len(k)}).add(valueSize(x))
		}
		return s
	case []any:
		s := size{nodes: 1}
		for _, x := range v {
			s = s.add(valueSize(x))
		}
		return s
	case string:
		return size{1, len(v)}
	}
	return size{1, 8}
}
