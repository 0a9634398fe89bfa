// Package poolmove refuses a render that would cost a ComputePlane its
// workers on the move from Cozystack's Combined cluster chart to the split
// one (docs/flux-wiring.md, "Moving to split worker pools").
//
// The config names the step of the move (spec.platform.poolMigration), but
// a config can name a later step than the fleet has taken. What the fleet
// has taken is in its folder: the cluster release the last render wrote,
// wherever its layout put it (a namespace's folder, a part of its unit).
// A SplitPools render is refused for a ComputePlane whose cluster release
// there was rendered for the Combined chart without Pin (its workers are
// the release's own: the split chart would delete them, or refuse to
// render, and the Combined chart without node groups would fall back to
// its default pool), or with Pin while the render does not Adopt (its pool
// releases would fail on MachineDeployments another release owns).
package poolmove

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// Step is the state of one ComputePlane's move, read from its cluster
// release.
type Step int

const (
	// Split: rendered for the split chart; the pools hold the workers.
	Split Step = iota
	// Combined: rendered for the Combined chart; the release holds them.
	Combined
	// Pinned: Combined, with the workers pinned for the move.
	Pinned
)

// clusterFile is the base name of a tenant's cluster release file in every
// layout of the fleet folder.
const clusterFile = "helmrelease-" + wire.DirectClusterRelease + ".yaml"

// maxNamed is how many ComputePlanes a refusal names.
const maxNamed = 5

// Check refuses files, the SplitPools render of cfg, when a ComputePlane's
// cluster release in the earlier render old (the fleet folder, or the
// base's) is at a step the render cannot follow. It reads only the cluster
// release files, one per ComputePlane, and only for a SplitPools render
// under delivery: Direct; a ComputePlane new to the folder is not at any
// step. The old release is found by its name wherever old holds it, so a
// layout or a unit's parts that changed with the render do not hide it.
func Check(cfg *api.Config, files []output.File, old *units.Layout) error {
	if !cfg.Platform.ClusterChart.Split() || cfg.Delivery != api.Direct || old == nil {
		return nil
	}
	rendered := map[string]bool{}
	for _, f := range files {
		if path.Base(f.Path) != clusterFile {
			continue
		}
		if _, name, err := ReadStep(f.Data); err == nil && name != "" {
			rendered[name] = true
		}
	}
	if len(rendered) == 0 {
		return nil
	}
	paths, err := old.Find(clusterFile)
	if err != nil {
		return err
	}
	adopt := cfg.Platform.PoolMigration == api.PoolMigrationAdopt
	var unpinned, pinned []string
	for _, p := range paths {
		data, ok, err := old.ReadFile(p)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		step, name, err := ReadStep(data)
		if err != nil {
			return fmt.Errorf("%s in %s: %w", p, old.What, err)
		}
		if !rendered[name] {
			continue
		}
		at := fmt.Sprintf("%s (%s)", name, p)
		switch {
		case step == Combined:
			unpinned = append(unpinned, at)
		case step == Pinned && !adopt:
			pinned = append(pinned, at)
		}
	}
	const field = "spec.platform.clusterChart: SplitPools"
	switch {
	case len(unpinned) > 0:
		return fmt.Errorf("%s: refused: the cluster release %s in %s was rendered for clusterChart: Combined without poolMigration: Pin, so its workers are its own; "+
			"rendering SplitPools now would delete them (the Combined chart, given no node groups, falls back to its default pool) or fail every upgrade (the split chart refuses unpinned MachineDeployments). "+
			"Render clusterChart: Combined with poolMigration: Pin first, let every cluster release reconcile, upgrade the platform, then render SplitPools with poolMigration: Adopt (docs/flux-wiring.md, \"Moving to split worker pools\")",
			field, named(unpinned), old.What)
	case len(pinned) > 0:
		return fmt.Errorf("%s: refused: the cluster release %s in %s pins its workers for the move (poolMigration: Pin), and the pool releases can take them over only with poolMigration: Adopt; "+
			"without it each pool release fails on the MachineDeployment the cluster release still owns. Render SplitPools with poolMigration: Adopt (docs/flux-wiring.md, \"Moving to split worker pools\")",
			field, named(pinned), old.What)
	}
	return nil
}

func named(names []string) string {
	if len(names) <= maxNamed {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:maxNamed], ", "), len(names)-maxNamed)
}

// clusterRelease is what ReadStep reads of a cluster release.
type clusterRelease struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		PostRenderers []struct {
			Kustomize *struct {
				Patches []struct {
					Patch  string `json:"patch"`
					Target *struct {
						Kind string `json:"kind"`
					} `json:"target"`
				} `json:"patches"`
			} `json:"kustomize"`
		} `json:"postRenderers"`
	} `json:"spec"`
}

// ReadStep reads the step of the move from a cluster release file (one
// object, as the fleet folder holds them) and the release's
// namespace/name; name is "" when the file holds no cluster release of the
// function's (a file of the user's at that path).
func ReadStep(data []byte) (Step, string, error) {
	var hr clusterRelease
	if err := yaml.Unmarshal(data, &hr); err != nil {
		return Split, "", err
	}
	if hr.Kind != "HelmRelease" || hr.Metadata.Name != wire.DirectClusterRelease || hr.Metadata.Labels[wire.ComputePlaneLabel] != "true" {
		return Split, "", nil
	}
	name := hr.Metadata.Namespace + "/" + hr.Metadata.Name
	if hr.Metadata.Labels[wire.ClusterChartLabel] == wire.ClusterChartSplitPools {
		return Split, name, nil
	}
	for _, pr := range hr.Spec.PostRenderers {
		if pr.Kustomize == nil {
			continue
		}
		for _, p := range pr.Kustomize.Patches {
			if p.Target != nil && p.Target.Kind == "MachineDeployment" && strings.Contains(p.Patch, "helm.sh/resource-policy: keep") {
				return Pinned, name, nil
			}
		}
	}
	return Combined, name, nil
}
