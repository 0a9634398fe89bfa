package model

import (
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

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

// checkCopies refuses, before anything is rendered, a fleet whose copies
// go over MaxCopiedNodes or MaxCopiedBytes, naming what is copied.
func (f *Fleet) checkCopies() api.Problems {
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
		return nil
	}
	limits := fmt.Sprintf("at most %s YAML nodes and %d MiB", yamlnode.Count(MaxCopiedNodes), MaxCopiedBytes>>20)
	if !fromValues.less(fromDefinitions) {
		return api.Problems{api.Errorf(f.Config.Ref, f.Config.Origin, "spec.cluster.values",
			"each of the %d ComputePlane clusters copies these values (%s), more than the output may hold for such copies (%s); split the fleet into several runs, or fix fewer values",
			clusters, values, limits)}
	}
	var largest *api.Definition
	for d := range copied {
		if largest == nil || copied[largest].times(releases[largest]).less(copied[d].times(releases[d])) ||
			copied[d].times(releases[d]) == copied[largest].times(releases[largest]) && d.Ref.Name < largest.Ref.Name {
			largest = d
		}
	}
	return api.Problems{api.Errorf(largest.Ref, largest.Origin, "spec.release",
		"each of the %d releases of kind %s copies the labels and health checks of this definition (%s), more than the output may hold for such copies (%s); split the fleet into several runs, or give the definition fewer labels and health checks",
		releases[largest], largest.Kind, copied[largest], limits)}
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
