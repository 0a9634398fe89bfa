package units

import (
	"errors"
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// File is one file of the fleet folder, the fleet-folder writer's own type.
type File = output.File

// Files renders the plan: for each unit its objects, one file each, and a
// kustomization.yaml listing them; the wiring folder with one Kustomization
// per wiring group and a kustomization.yaml listing them; and for each group
// a folder with the Kustomizations of its units and a kustomization.yaml
// listing them; with a source per namespace, the ArtifactGenerators in the
// wiring folder too (artifacts.go). Every kustomization.yaml and every
// Kustomization (and generator) carries the
// label app.kubernetes.io/managed-by: computeplane-fn, like the objects, so
// that the folder writer recognises all of them as its own. The files are
// sorted by path.
func (p *Plan) Files() ([]File, error) {
	perUnit, err := p.unitFiles()
	if err != nil {
		return nil, err
	}
	var out []File
	for _, fs := range perUnit {
		out = append(out, fs...)
	}

	wiring := p.Fleet.WiringPath
	groupFiles := make([]string, 0, len(p.Groups))
	for _, g := range p.Groups {
		unitFiles := make([]string, 0, len(g.Units))
		for _, u := range g.Units {
			unitFiles = append(unitFiles, wiringFile(u.Name))
		}
		files, err := hookFiles(g.Folder, unitFiles, p.GroupKustomization(g), wiring, "wiring group "+g.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
		groupFiles = append(groupFiles, wiringFile(g.Name))
	}
	if p.Fleet.ArtifactPerNamespace() {
		gens, err := p.generatorFiles()
		if err != nil {
			return nil, err
		}
		out = append(out, gens...)
		names := make([]string, 0, len(gens)+len(groupFiles))
		for _, g := range gens {
			names = append(names, path.Base(g.Path))
		}
		groupFiles = append(names, groupFiles...)
	}
	f, err := kustomizeFile(wiring, NamePrefix+"wiring", groupFiles)
	if err != nil {
		return nil, err
	}
	out = append(out, f)

	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(out); i++ {
		if out[i-1].Path == out[i].Path {
			return nil, fmt.Errorf("failed to lay out the fleet: two files at %s", out[i].Path)
		}
	}
	return out, nil
}

// wiringFile is the file of a Kustomization in the wiring, named like every
// other object's file: <kind-lowercase>-<name>.yaml.
func wiringFile(name string) string { return "kustomization-" + name + ".yaml" }

// unitFiles encodes, for every unit, its objects, its kustomization.yaml and
// its Kustomization in the wiring, on all processors: encoding is most of a
// layout's time, and each file depends on its unit only, so the result is
// the same however the work is spread.
func (p *Plan) unitFiles() ([][]File, error) {
	out := make([][]File, len(p.Units))
	errs := make([]error, len(p.Units))
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ui := range next {
				out[ui], errs[ui] = p.filesOfUnit(p.Units[ui])
			}
		}()
	}
	for ui := range p.Units {
		next <- ui
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *Plan) filesOfUnit(u *Unit) ([]File, error) {
	files := make([]File, 0, len(u.Objects)+2)
	for i, o := range u.Objects {
		data, err := p.encodeObject(u, o)
		if err != nil {
			return nil, fmt.Errorf("failed to encode %s %s/%s for unit %s: %w", o.Kind, o.Namespace, o.Name, u.Name, err)
		}
		files = append(files, File{Path: path.Join(u.Folder, u.Files[i]), Data: data})
	}
	hook, err := hookFiles(u.Folder, u.Files, p.UnitKustomization(u), p.Groups[u.Group].Folder, "unit "+u.Name)
	if err != nil {
		return nil, err
	}
	files = append(files, hook...)
	for _, o := range u.Objects {
		if len(o.InCluster) == 0 {
			continue
		}
		folder := model.BaselinePath(o.Namespace)
		if u.Artifact != "" {
			folder = path.Join(u.ArtifactFolder, wire.BaselineFolder)
		}
		baseline, err := inClusterFiles(o, folder)
		if err != nil {
			return nil, err
		}
		files = append(files, baseline...)
	}
	return files, nil
}

// encodeObject encodes an object of unit u. A tenant's baseline
// Kustomization reads the namespace's artifact when the unit does: render
// gives it the fleet source, since only the layout knows the artifact.
func (p *Plan) encodeObject(u *Unit, o render.Object) ([]byte, error) {
	if u.Artifact != "" && len(o.InCluster) > 0 {
		var err error
		if o, err = render.RetargetBaseline(o, p.artifactSource(u.Artifact), artifactPath(u.ArtifactFolder, path.Join(u.ArtifactFolder, wire.BaselineFolder))); err != nil {
			return nil, err
		}
	}
	return output.EncodeOne(o)
}

// inClusterFiles are the files of the objects a Kustomization with a
// kubeConfig applies inside a ComputePlane (render.Object.InCluster): one
// per object under folder (<namespace>/_baseline, below the wiring group's
// folder when the namespace has an artifact of its own), at the object's
// own path there (<namespace>/<kind>-<name>.yaml, _cluster/ for
// cluster-scoped ones), and a kustomization.yaml listing them. No unit's
// kustomization.yaml lists that folder, so only the baseline Kustomization
// applies them, and only inside its cluster.
func inClusterFiles(o render.Object, folder string) ([]File, error) {
	files := make([]File, 0, len(o.InCluster)+1)
	resources := make([]string, 0, len(o.InCluster))
	for _, in := range o.InCluster {
		data, err := output.EncodeOne(in)
		if err != nil {
			return nil, fmt.Errorf("failed to encode %s %s/%s of %s %s/%s: %w", in.Kind, in.Namespace, in.Name, o.Kind, o.Namespace, o.Name, err)
		}
		files = append(files, File{Path: path.Join(folder, in.Path()), Data: data})
		resources = append(resources, in.Path())
	}
	list, err := kustomizeFile(folder, o.Name, resources)
	if err != nil {
		return nil, err
	}
	return append(files, list), nil
}

// hookFiles returns the two files that hook a folder into Flux: its
// kustomization.yaml, listing resources, and the Flux Kustomization ks that
// reconciles it, in wiringFolder, named by wiringFile after ks. what names
// the folder in errors.
func hookFiles(folder string, resources []string, ks *kustomizev1.Kustomization, wiringFolder, what string) ([]File, error) {
	list, err := kustomizeFile(folder, ks.Name, resources)
	if err != nil {
		return nil, err
	}
	data, err := encode(ks)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the Kustomization of %s: %w", what, err)
	}
	return []File{list, {Path: path.Join(wiringFolder, wiringFile(ks.Name)), Data: data}}, nil
}

// UnitKustomization is the Flux Kustomization that reconciles a unit:
// prune: true, so that what leaves Git leaves the cluster (the cluster
// HelmRelease opts out with its prune: disabled annotation); wait: true for
// the platform unit only, since every other unit depends on it; dependsOn
// the platform unit and the unit's next part, and a unit of routed
// releases on its tenant's baseline Kustomization (in the tenant
// namespace); deletionPolicy: Orphan on the parts after the first
// (docs/flux-wiring.md says why). It reads the fleet source, or with
// spec.fleet.unitSource: ExternalArtifact a namespace's unit reads the
// namespace's artifact (Unit.Artifact).
func (p *Plan) UnitKustomization(u *Unit) *kustomizev1.Kustomization {
	ks := p.kustomization(u.Name, u.Folder, u.Shard)
	if u.Artifact != "" {
		ks.Spec.SourceRef = p.artifactSource(u.Artifact)
		ks.Spec.Path = artifactPath(u.ArtifactFolder, u.Folder)
	}
	ks.Spec.Wait = u.Platform || u.Account
	for _, d := range u.DependsOn {
		dep := kustomizev1.DependencyReference{Name: d}
		if u.Namespace != "" && u.Artifact != "" && p.fleetUnits[d] {
			dep.ReadyExpr = platformReadyExpr
		}
		ks.Spec.DependsOn = append(ks.Spec.DependsOn, dep)
	}
	if u.Baseline != "" {
		ks.Spec.DependsOn = append(ks.Spec.DependsOn, kustomizev1.DependencyReference{Name: wire.BaselineKustomization, Namespace: u.Baseline})
	}
	if u.Orphan {
		ks.Spec.DeletionPolicy = kustomizev1.DeletionPolicyOrphan
	}
	return ks
}

// GroupKustomization is the Flux Kustomization that applies the unit
// Kustomizations of a wiring group. It prunes, so that a unit removed from
// Git is deleted (and its own objects pruned in turn), and orphans on
// deletion, so that deleting a group (or the root above it) never deletes
// the fleet. With a source per namespace it reads its group's artifact.
func (p *Plan) GroupKustomization(g *Group) *kustomizev1.Kustomization {
	ks := p.kustomization(g.Name, g.Folder, g.Shard)
	if g.Artifact != "" {
		ks.Spec.SourceRef = p.artifactSource(g.Artifact)
		ks.Spec.Path = artifactPath(g.Folder, g.Folder)
	}
	ks.Spec.DeletionPolicy = kustomizev1.DeletionPolicyOrphan
	return ks
}

func (p *Plan) kustomization(name, folder string, shard int) *kustomizev1.Kustomization {
	fc := p.Fleet
	labels := map[string]string{wire.ManagedByLabel: wire.ManagedByValue}
	if shard > 0 {
		labels[ShardLabel] = ShardValue(shard)
	}
	return &kustomizev1.Kustomization{
		TypeMeta: metav1.TypeMeta{APIVersion: kustomizev1.GroupVersion.String(), Kind: kustomizev1.KustomizationKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: fc.WiringNamespace,
			Labels:    labels,
		},
		Spec: kustomizev1.KustomizationSpec{
			Interval: metav1.Duration{Duration: fc.Interval},
			SourceRef: kustomizev1.CrossNamespaceSourceReference{
				Kind:      fc.SourceRef.Kind,
				Name:      fc.SourceRef.Name,
				Namespace: fc.SourceRef.Namespace,
			},
			Path:  fc.FluxPath(folder),
			Prune: true,
			// The fleet applies as its own account, which kustomize-controller
			// impersonates: the guard tells it from everything else that
			// shares the controllers' account (on Cozystack, all of Flux).
			ServiceAccountName: fc.ServiceAccountName,
		},
	}
}

// kustomizeFile is the kustomization.yaml of a folder, listing its files in
// the given order. kustomize reads metadata there and ignores it, so the
// managed-by label marks the file without changing what it builds.
func kustomizeFile(folder, name string, resources []string) (File, error) {
	k := kusttypes.Kustomization{
		TypeMeta: kusttypes.TypeMeta{APIVersion: kusttypes.KustomizationVersion, Kind: kusttypes.KustomizationKind},
		MetaData: &kusttypes.ObjectMeta{
			Name:   name,
			Labels: map[string]string{wire.ManagedByLabel: wire.ManagedByValue},
		},
		Resources: resources,
	}
	if k.Resources == nil {
		// An empty group or part still builds: to nothing.
		k.Resources = []string{}
	}
	data, err := encode(&k)
	if err != nil {
		return File{}, fmt.Errorf("failed to encode %s: %w", path.Join(folder, KustomizationFile), err)
	}
	return File{Path: path.Join(folder, KustomizationFile), Data: data}, nil
}

// encode writes a typed object as YAML with sorted keys, without the empty
// status and creationTimestamp typed objects marshal, in the style of the
// rest of the output (and of kustomize and the API server).
func encode(obj any) ([]byte, error) {
	n, err := render.TypedNode(obj)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(n)
}
