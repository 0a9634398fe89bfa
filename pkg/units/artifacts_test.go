package units_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// artifactFleet is sampleFleet with an in-cluster baseline for some of its
// tenants, as render.RenderBaseline makes it: a Kustomization reading
// <namespace>/_baseline of the fleet source, carrying the objects it
// applies inside the ComputePlane.
func artifactFleet(tenants, big int) []render.Object {
	objs := sampleFleet(tenants, big)
	for t := 0; t < tenants; t += 3 {
		ns := fmt.Sprintf("tenant-t%d", t)
		ks := object("kustomize.toolkit.fluxcd.io/v1", "Kustomization", ns, "computeplane-baseline", false, `spec:
  interval: 10m0s
  kubeConfig: {secretRef: {name: computeplane-admin-kubeconfig, key: super-admin.svc}}
  path: ./fleet/`+ns+`/_baseline
  prune: true
  sourceRef: {kind: GitRepository, name: fleet, namespace: flux-system}
`)
		ks.InCluster = []render.Object{
			object("v1", "Namespace", "", ns, false, ""),
			object("v1", "ServiceAccount", ns, "computeplane-apps", false, ""),
		}
		objs = append(objs, ks)
	}
	return objs
}

func artifactConfig(tune func(*api.FleetConfig)) *api.Config {
	return fleetConfig(func(fc *api.FleetConfig) {
		fc.UnitSource = api.UnitSourceExternalArtifact
		if tune != nil {
			tune(fc)
		}
	})
}

// TestArtifactsCarryEveryUnit plays source-watcher and kustomize-controller
// over a fleet laid out with spec.fleet.unitSource: ExternalArtifact: the
// root builds the wiring folder of the fleet source; source-watcher cuts
// that source by the generators the root applies (the fleet's into one
// artifact per group, each group's into one per namespace); every
// Kustomization then builds its path in the source it names. Together the
// units must hold every rendered object once and unchanged, every
// Kustomization and generator must validate against its CRD, a namespace's
// artifact must hold that namespace's folder only, and only the fleet's own
// units may read the artifact of the fleet's own units, and no unit the
// whole fleet source (only the root does).
func TestArtifactsCarryEveryUnit(t *testing.T) {
	const limit = 40
	cfg := artifactConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = limit; fc.Shards = 2 })
	objs := artifactFleet(30, 3*limit+7)
	files, problems := units.Files(cfg, objs)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	built := cutAndBuild(t, cfg, files)
	want := map[string]map[string]any{}
	inCluster := map[string][]string{} // baseline namespace -> ids of its objects
	for _, o := range objs {
		want[idOf(o.APIVersion, o.Kind, o.Namespace, o.Name)] = retargeted(t, o, built)
		for _, in := range o.InCluster {
			inCluster[o.Namespace] = append(inCluster[o.Namespace], idOf(in.APIVersion, in.Kind, in.Namespace, in.Name))
		}
	}
	if diff := cmp.Diff(want, built.objects); diff != "" {
		t.Errorf("the units built from their sources differ from the render (-rendered +built):\n%s", diff)
	}
	for ns, ids := range inCluster {
		slices.Sort(ids)
		if diff := cmp.Diff(ids, built.baselines[ns]); diff != "" {
			t.Errorf("baseline of %s builds (-want +got):\n%s", ns, diff)
		}
	}
	if len(built.baselines) != len(inCluster) {
		t.Errorf("%d baselines built, want %d", len(built.baselines), len(inCluster))
	}
	for unit, src := range built.sources {
		fleetOwn := unit == units.AccountUnitName || strings.HasPrefix(unit, units.PlatformUnitName)
		if fleetOwn != (src == "ExternalArtifact/"+units.FleetUnitsArtifactName) || src == "GitRepository/fleet" {
			t.Errorf("Kustomization %s reads %s", unit, src)
		}
	}
	if big := built.unitOf[idOf("helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-big", "redis-cache0000")]; !strings.HasPrefix(big, "computeplane-tenant-big") {
		t.Errorf("tenant-big's release is applied by %s", big)
	}
}

// retargeted is what a unit should build for o: o itself, and for a
// baseline Kustomization o pointed at its namespace's artifact.
func retargeted(t *testing.T, o render.Object, b *builtFleet) map[string]any {
	t.Helper()
	m := asMap(t, o)
	if len(o.InCluster) == 0 {
		return m
	}
	spec := m["spec"].(map[string]any)
	spec["path"] = "./_baseline"
	spec["sourceRef"] = map[string]any{"kind": "ExternalArtifact", "name": b.artifactOf[o.Namespace], "namespace": "flux-system"}
	return m
}

// TestArtifactRulesIgnoreMembership adds a tenant to a fleet laid out with
// a source per namespace: the fleet's generator (the upper level) must not
// change by a byte, one group's generator must gain exactly the new
// namespace's artifact, and every other generator and every other
// namespace's folder must stay as they were. This is what keeps
// source-watcher from rebuilding a group's artifact with stale rules; and
// since nothing in _account/ or _platform/ changes, the artifact of the
// fleet's own units keeps its revision, so they do not reconcile either.
func TestArtifactRulesIgnoreMembership(t *testing.T) {
	cfg := artifactConfig(nil)
	before, problems := units.Files(cfg, artifactFleet(40, 0))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	newcomer := []render.Object{object("helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-newcomer", "computeplane", false, "spec: {interval: 5m}\n")}
	after, problems := units.Files(cfg, append(artifactFleet(40, 0), newcomer...))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	old, cur := byPath(before), byPath(after)
	var changed, added, removed []string
	for p, data := range cur {
		switch prev, ok := old[p]; {
		case !ok:
			added = append(added, p)
		case prev != data:
			changed = append(changed, p)
		}
	}
	for p := range old {
		if _, ok := cur[p]; !ok {
			removed = append(removed, p)
		}
	}
	slices.Sort(changed)
	slices.Sort(added)
	if len(removed) > 0 {
		t.Errorf("adding a tenant removes %v", removed)
	}
	// The newcomer's group: its kustomization.yaml lists one more
	// Kustomization, its generator makes one more artifact.
	var group string
	for _, p := range added {
		if path.Base(p) == "kustomization-computeplane-tenant-newcomer.yaml" {
			group = path.Dir(p)
		}
	}
	if group == "" {
		t.Fatalf("no Kustomization for the newcomer among the added files %v", added)
	}
	label := path.Base(group)
	wantChanged := []string{group + "/kustomization.yaml", "_flux/artifactgenerator-computeplane-wiring-" + label + ".yaml"}
	slices.Sort(wantChanged)
	if diff := cmp.Diff(wantChanged, changed); diff != "" {
		t.Errorf("changed files (-want +got):\n%s", diff)
	}
	for _, p := range added {
		if !strings.HasPrefix(p, group+"/tenant-newcomer/") && p != group+"/kustomization-computeplane-tenant-newcomer.yaml" {
			t.Errorf("adding a tenant adds %s", p)
		}
	}
	var gen struct {
		Spec struct {
			Artifacts []struct{ Name string } `json:"artifacts"`
		} `json:"spec"`
	}
	unmarshal(t, cur["_flux/artifactgenerator-computeplane-wiring-"+label+".yaml"], &gen)
	var names []string
	for _, a := range gen.Spec.Artifacts {
		names = append(names, a.Name)
	}
	if !slices.Contains(names, "computeplane-wiring-"+label+"-tenant-newcomer") {
		t.Errorf("group %s's generator makes %v, not the newcomer's artifact", label, names)
	}
}

// TestArtifactsWithinSourceWatcherBounds refuses a group whose generator
// would make more artifacts than source-watcher's CRD allows (1000), with
// the field to change.
func TestArtifactsWithinSourceWatcherBounds(t *testing.T) {
	cfg := artifactConfig(func(fc *api.FleetConfig) { fc.WiringGroups = 1; fc.MaxObjectsPerUnit = 5000 })
	var objs []render.Object
	for i := range units.MaxArtifactsPerGenerator + 1 {
		objs = append(objs, object("v1", "ConfigMap", fmt.Sprintf("tenant-n%04d", i), "c", false, "data: {a: b}\n"))
	}
	_, problems := units.Files(cfg, objs)
	if len(problems) != 1 || problems[0].Field != "spec.fleet.wiringGroups" ||
		!strings.Contains(problems[0].Message, "wiring group computeplane-wiring-ns-0-of-1 would hold 1001 namespaces, one ExternalArtifact each, more than the 1000 artifacts source-watcher allows") {
		t.Fatalf("problems: %v", problems)
	}
	// The same fleet reading the fleet source is fine.
	cfg.Fleet.UnitSource = api.UnitSourceFleet
	if _, problems := units.Files(cfg, objs); len(problems) > 0 {
		t.Fatal(problems)
	}
}

// builtFleet is what cutAndBuild saw.
type builtFleet struct {
	// objects are every object the unit Kustomizations build, by idOf.
	objects map[string]map[string]any
	// unitOf is the Kustomization that builds each object.
	unitOf map[string]string
	// sources are the source (Kind/name) of each unit Kustomization.
	sources map[string]string
	// artifactOf is the ExternalArtifact of each namespace.
	artifactOf map[string]string
	// baselines are the sorted ids each baseline Kustomization builds, by
	// its namespace.
	baselines map[string][]string
}

// cutAndBuild plays source-watcher and kustomize-controller over the files
// of a fleet folder laid out with a source per namespace (see
// TestArtifactsCarryEveryUnit), checking every Kustomization and
// ArtifactGenerator against its CRD.
func cutAndBuild(t *testing.T, cfg *api.Config, files []units.File) *builtFleet {
	t.Helper()
	crds := crdtest.LoadShared(t)
	fc := cfg.Fleet
	// The fleet source: its root holds the fleet folder at fc.Path.
	sources := map[string]map[string][]byte{"GitRepository/" + fc.SourceRef.Name: {}}
	for _, f := range files {
		sources["GitRepository/"+fc.SourceRef.Name][path.Join(fc.Path, f.Path)] = f.Data
	}
	validate := func(m map[string]any) {
		t.Helper()
		if vs := crds.Validate(m); len(vs) > 0 {
			t.Errorf("%s %v does not validate: %v", m["kind"], m["metadata"], vs)
		}
	}
	var groups []map[string]any
	var generators []map[string]any
	for _, r := range build(t, inMemory(t, sources["GitRepository/"+fc.SourceRef.Name]), path.Join("/src", fc.Path, fc.WiringPath)).Resources() {
		m, _ := r.Map()
		m = normalise(t, m)
		validate(m)
		switch m["kind"] {
		case "ArtifactGenerator":
			generators = append(generators, m)
		case "Kustomization":
			groups = append(groups, m)
		default:
			t.Errorf("the root builds a %s", m["kind"])
		}
	}
	// source-watcher: the fleet's generator first, whose artifacts the
	// groups' generators read.
	slices.SortFunc(generators, func(a, b map[string]any) int {
		return strings.Compare(a["metadata"].(map[string]any)["name"].(string), b["metadata"].(map[string]any)["name"].(string))
	})
	if len(generators) == 0 || generators[0]["metadata"].(map[string]any)["name"] != units.FleetGeneratorName {
		t.Fatalf("the root applies no ArtifactGenerator %s", units.FleetGeneratorName)
	}
	b := &builtFleet{objects: map[string]map[string]any{}, unitOf: map[string]string{}, sources: map[string]string{},
		artifactOf: map[string]string{}, baselines: map[string][]string{}}
	for _, gen := range generators {
		var ag struct {
			Spec struct {
				Sources   []struct{ Alias, Kind, Name string }
				Artifacts []struct {
					Name string
					Copy []struct{ From, To string }
				}
			}
		}
		remarshal(t, gen, &ag)
		if len(ag.Spec.Sources) != 1 {
			t.Fatalf("generator %v has %d sources", gen["metadata"], len(ag.Spec.Sources))
		}
		src := ag.Spec.Sources[0]
		from, ok := sources[src.Kind+"/"+src.Name]
		if !ok {
			t.Fatalf("generator %v reads %s/%s, which nothing made before it", gen["metadata"], src.Kind, src.Name)
		}
		for _, a := range ag.Spec.Artifacts {
			out := map[string][]byte{}
			for _, c := range a.Copy {
				// source-watcher's copy of a folder's contents:
				// @alias/dir/** to @artifact/ or to @artifact/dest/.
				glob, ok := strings.CutPrefix(c.From, "@"+src.Alias+"/")
				dir, recursive := strings.CutSuffix(glob, "/**")
				dest, into := strings.CutPrefix(c.To, "@artifact/")
				if !ok || !recursive || !into || (dest != "" && !strings.HasSuffix(dest, "/")) {
					t.Fatalf("artifact %s: copy %s to %s is not a folder's copy", a.Name, c.From, c.To)
				}
				matched := false
				for p, data := range from {
					if rel, ok := strings.CutPrefix(p, dir+"/"); ok {
						out[dest+rel] = data
						matched = true
					}
				}
				if !matched {
					t.Errorf("artifact %s: %s matches no file", a.Name, c.From)
				}
				if src.Kind == "ExternalArtifact" {
					b.artifactOf[dir] = a.Name
				}
			}
			sources["ExternalArtifact/"+a.Name] = out
		}
	}
	// kustomize-controller: each group, then each unit it applies.
	read := func(m map[string]any) (filesys.FileSystem, string, string) {
		t.Helper()
		spec := m["spec"].(map[string]any)
		ref := spec["sourceRef"].(map[string]any)
		key := ref["kind"].(string) + "/" + ref["name"].(string)
		src, ok := sources[key]
		if !ok {
			t.Fatalf("Kustomization %v reads %s, which is no source", m["metadata"], key)
		}
		return inMemory(t, src), path.Join("/src", spec["path"].(string)), key
	}
	for _, g := range groups {
		fs, dir, _ := read(g)
		for _, r := range build(t, fs, dir).Resources() {
			unit, _ := r.Map()
			unit = normalise(t, unit)
			validate(unit)
			name := unit["metadata"].(map[string]any)["name"].(string)
			ufs, udir, key := read(unit)
			b.sources[name] = key
			for _, o := range build(t, ufs, udir).Resources() {
				m, _ := o.Map()
				m = normalise(t, m)
				id := idOf(o.GetApiVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
				if prev, dup := b.unitOf[id]; dup {
					t.Errorf("%s is applied by both %s and %s", id, prev, name)
				}
				b.unitOf[id], b.objects[id] = name, m
				spec, _ := m["spec"].(map[string]any)
				if _, remote := spec["kubeConfig"]; o.GetKind() == "Kustomization" && remote {
					validate(m)
					bfs, bdir, _ := read(m)
					var ids []string
					for _, in := range build(t, bfs, bdir).Resources() {
						ids = append(ids, idOf(in.GetApiVersion(), in.GetKind(), in.GetNamespace(), in.GetName()))
					}
					slices.Sort(ids)
					b.baselines[o.GetNamespace()] = ids
				}
			}
		}
	}
	return b
}

// inMemory puts the files of a source in an in-memory file system under /src.
func inMemory(t *testing.T, files map[string][]byte) filesys.FileSystem {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for p, data := range files {
		if err := fs.WriteFile(path.Join("/src", p), data); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

func byPath(files []units.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		out[f.Path] = string(f.Data)
	}
	return out
}

func unmarshal(t *testing.T, data string, into any) {
	t.Helper()
	if err := sigsyaml.Unmarshal([]byte(data), into); err != nil {
		t.Fatal(err)
	}
}

func remarshal(t *testing.T, m map[string]any, into any) {
	t.Helper()
	data, err := sigsyaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	unmarshal(t, string(data), into)
}

// TestSwitchingUnitSourceReplacesTheGroups: a fleet switched between the
// fleet source and a source per namespace keeps every unit's Kustomization
// (the same names: nothing is deleted) and gets wiring groups of other
// names, so that no unit moves between two groups that both stay (a group
// reconciled first would prune the units it lost, and their objects with
// them; docs/flux-wiring.md, "When the count changes").
func TestSwitchingUnitSourceReplacesTheGroups(t *testing.T) {
	objs := artifactFleet(40, 0)
	shared, problems := units.NewPlan(fleetConfig(nil), objs)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	own, problems := units.NewPlan(artifactConfig(nil), objs)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	names := func(p *units.Plan) (unitNames, groupNames []string) {
		for _, u := range p.Units {
			unitNames = append(unitNames, u.Name)
		}
		for _, g := range p.Groups {
			groupNames = append(groupNames, g.Name)
		}
		return unitNames, groupNames
	}
	u1, g1 := names(shared)
	u2, g2 := names(own)
	if diff := cmp.Diff(u1, u2); diff != "" {
		t.Errorf("the units' Kustomizations differ between the modes (-FleetSource +ExternalArtifact):\n%s", diff)
	}
	if len(g1) != len(g2) {
		t.Errorf("%d groups with the fleet source, %d with a source per namespace", len(g1), len(g2))
	}
	for _, g := range g2 {
		if slices.Contains(g1, g) {
			t.Errorf("wiring group %s exists in both modes", g)
		}
	}
}
