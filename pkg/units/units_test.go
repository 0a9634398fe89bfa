package units_test

import (
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// TestUnitsHoldEveryObjectOnce builds every unit folder with kustomize, the
// way kustomize-controller builds it, and checks that together they hold
// exactly the rendered objects, each once and unchanged, and that no unit
// is over the bound.
func TestUnitsHoldEveryObjectOnce(t *testing.T) {
	const limit = 40
	cfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = limit; fc.WiringGroups = 4 })
	objs := sampleFleet(30, 3*limit+7)
	files, err := units.Files(cfg, objs)
	if err != nil {
		t.Fatal(err)
	}
	fs := writeFS(t, files)

	want := map[string]map[string]any{}
	for _, o := range objs {
		want[idOf(o.APIVersion, o.Kind, o.Namespace, o.Name)] = asMap(t, o)
	}
	got := map[string]string{} // object id -> unit folder
	units := 0
	for _, dir := range kustomizeDirs(files) {
		if dir == "_flux" || strings.HasPrefix(dir, "_flux/") {
			continue
		}
		units++
		m := build(t, fs, path.Join("/fleet", dir))
		if m.Size() > limit {
			t.Errorf("unit %s holds %d objects, more than %d", dir, m.Size(), limit)
		}
		for _, r := range m.Resources() {
			id := idOf(r.GetApiVersion(), r.GetKind(), r.GetNamespace(), r.GetName())
			if prev, dup := got[id]; dup {
				t.Errorf("%s is in both %s and %s", id, prev, dir)
			}
			got[id] = dir
			m, err := r.Map()
			if err != nil {
				t.Fatal(err)
			}
			w, ok := want[id]
			if !ok {
				t.Errorf("unit %s builds %s, which was not rendered", dir, id)
				continue
			}
			if diff := cmp.Diff(w, normalise(t, m)); diff != "" {
				t.Errorf("unit %s changes %s (-rendered +built):\n%s", dir, id, diff)
			}
		}
	}
	for id := range want {
		if _, ok := got[id]; !ok {
			t.Errorf("%s is in no unit", id)
		}
	}
	if big := got[idOf("helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-big", "redis-cache0000")]; !strings.HasPrefix(big, "tenant-big") {
		t.Errorf("tenant-big's release is in %s", big)
	}
	// 1 platform + 30 tenants + default + tenant-big in at least 4 parts.
	if units < 1+30+1+4 {
		t.Errorf("built %d units, want at least %d", units, 36)
	}
}

// TestWiringBuildsAndValidates builds the wiring folders with kustomize and
// checks every Kustomization against Flux's CustomResourceDefinition: one per
// unit, each pointing at its unit's folder, and one per wiring group.
func TestWiringBuildsAndValidates(t *testing.T) {
	crds := crdtest.LoadShared(t)
	cfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = 40; fc.WiringGroups = 4; fc.Shards = 3 })
	objs := sampleFleet(30, 150)
	plan, err := units.NewPlan(cfg, objs)
	if err != nil {
		t.Fatal(err)
	}
	files, ferr := plan.Files()
	if ferr != nil {
		t.Fatal(ferr)
	}
	fs := writeFS(t, files)

	root := build(t, fs, "/fleet/_flux")
	if root.Size() != len(plan.Groups) {
		t.Errorf("the wiring root builds %d objects, want %d groups", root.Size(), len(plan.Groups))
	}
	paths := map[string]string{} // Kustomization name -> spec.path
	var all []map[string]any
	for _, r := range root.Resources() {
		m, _ := r.Map()
		all = append(all, normalise(t, m))
	}
	for _, g := range plan.Groups {
		for _, r := range build(t, fs, "/fleet/"+g.Folder).Resources() {
			m, _ := r.Map()
			all = append(all, normalise(t, m))
		}
	}
	for _, m := range all {
		if vs := crds.Validate(m); len(vs) > 0 {
			t.Errorf("%v does not validate: %v", m["metadata"], vs)
		}
		md := m["metadata"].(map[string]any)
		labels := md["labels"].(map[string]any)
		if labels["app.kubernetes.io/managed-by"] != "computeplane-fn" {
			t.Errorf("%s: no managed-by label", md["name"])
		}
		if s, _ := labels[units.ShardLabel].(string); !slices.Contains([]string{"shard1", "shard2", "shard3"}, s) {
			t.Errorf("%s: sharding label %q", md["name"], s)
		}
		spec := m["spec"].(map[string]any)
		paths[md["name"].(string)] = spec["path"].(string)
		if spec["prune"] != true {
			t.Errorf("%s: prune is not true", md["name"])
		}
	}
	for _, u := range plan.Units {
		if got, want := paths[u.Name], "./fleet/"+u.Folder; got != want {
			t.Errorf("Kustomization %s: path %q, want %q", u.Name, got, want)
		}
	}
	if len(paths) != len(plan.Units)+len(plan.Groups) {
		t.Errorf("%d Kustomizations, want %d units + %d groups", len(paths), len(plan.Units), len(plan.Groups))
	}
}

// TestWiringOrder checks the ordering the docs promise: the platform unit
// waits for its objects, every other unit depends on it and does not wait,
// and each part of a split unit depends on the next and orphans on deletion.
func TestWiringOrder(t *testing.T) {
	cfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = 20 })
	plan, err := units.NewPlan(cfg, sampleFleet(5, 70))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*units.Unit{}
	for _, u := range plan.Units {
		byName[u.Name] = u
	}
	for _, u := range plan.Units {
		ks := plan.UnitKustomization(u)
		if ks.Spec.Wait != (u.Platform || u.Account) {
			t.Errorf("%s: wait %v", u.Name, ks.Spec.Wait)
		}
		var deps []string
		for _, d := range ks.Spec.DependsOn {
			deps = append(deps, d.Name)
			if byName[d.Name] == nil {
				t.Errorf("%s depends on %s, which is no unit", u.Name, d.Name)
			}
		}
		var want []string
		switch {
		case u.Account:
		case u.Platform:
			want = append(want, units.AccountUnitName)
		default:
			want = append(want, units.PlatformUnitName)
		}
		if u.Part+1 < u.Parts {
			want = append(want, fmt.Sprintf("%s.part%d", strings.TrimSuffix(u.Name, fmt.Sprintf(".part%d", u.Part)), u.Part+1))
		}
		if diff := cmp.Diff(want, deps); diff != "" {
			t.Errorf("%s: dependsOn (-want +got):\n%s", u.Name, diff)
		}
		if got, want := ks.Spec.DeletionPolicy, map[bool]string{true: "Orphan", false: ""}[u.Part > 0]; got != want {
			t.Errorf("%s: deletionPolicy %q, want %q", u.Name, got, want)
		}
	}
	for _, g := range plan.Groups {
		if ks := plan.GroupKustomization(g); ks.Spec.DeletionPolicy != "Orphan" || !ks.Spec.Prune {
			t.Errorf("group %s: deletionPolicy %q prune %v", g.Name, ks.Spec.DeletionPolicy, ks.Spec.Prune)
		}
	}
	if u := byName["computeplane-tenant-big.part1"]; u == nil || u.Folder != "tenant-big/part1" {
		t.Errorf("tenant-big's second part: %+v", u)
	}
}

// TestAccountUnitFirst checks that the fleet's account has a unit of its
// own, applied before everything else: the platform unit depends on it, and
// without a platform unit every unit does. (kustomize-controller applies a
// unit's ClusterRoles and ClusterRoleBindings in one stage, so the fleet's
// bind on a new tenant's installer role must land before the binding.)
func TestAccountUnitFirst(t *testing.T) {
	plan, err := units.NewPlan(fleetConfig(nil), sampleFleet(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	first := plan.Units[0]
	if first.Name != units.AccountUnitName || first.Folder != "_account" || !first.Account || len(first.Objects) != 3 {
		t.Fatalf("first unit %s in %s, %d objects, want %s in _account with the account's 3", first.Name, first.Folder, len(first.Objects), units.AccountUnitName)
	}
	for _, f := range first.Files {
		if !slices.Contains([]string{"flux-system/serviceaccount-computeplane-fleet.yaml",
			"_cluster/clusterrole-computeplane-fleet.yaml", "_cluster/clusterrolebinding-computeplane-fleet.yaml"}, f) {
			t.Errorf("account unit file %s", f)
		}
	}
	var noPlatform []render.Object
	for _, o := range sampleFleet(2, 0) {
		if o.Account || !o.Platform && o.Namespace != "" && o.Namespace != render.PlatformNamespace {
			noPlatform = append(noPlatform, o)
		}
	}
	plan, err = units.NewPlan(fleetConfig(nil), noPlatform)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range plan.Units[1:] {
		if !slices.Equal(u.DependsOn, []string{units.AccountUnitName}) {
			t.Errorf("without a platform unit, %s depends on %v, want [%s]", u.Name, u.DependsOn, units.AccountUnitName)
		}
	}
}

// TestAddingATenantMovesNothing is a property test over many random fleets:
// adding a tenant keeps every existing object in its unit folder and every
// existing unit in its shard and its wiring group, and adds only its own
// unit.
func TestAddingATenantMovesNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for run := range 100 {
		shards := 1 + rng.IntN(12)
		groups := 1 + rng.IntN(40)
		cfg := fleetConfig(func(fc *api.FleetConfig) { fc.Shards = shards; fc.WiringGroups = groups })
		var objs []render.Object
		seen := map[int]bool{}
		for range 1 + rng.IntN(300) {
			t := rng.IntN(1_000_000)
			if !seen[t] {
				seen[t] = true
				objs = append(objs, helmRelease(fmt.Sprintf("tenant-t%d", t), "computeplane"))
			}
		}
		before, err := units.NewPlan(cfg, objs)
		if err != nil {
			t.Fatal(err)
		}
		added := fmt.Sprintf("tenant-new%d", run)
		after, err := units.NewPlan(cfg, append(slices.Clone(objs), helmRelease(added, "computeplane")))
		if err != nil {
			t.Fatal(err)
		}
		now := map[string]*units.Unit{}
		for _, u := range after.Units {
			now[u.Name] = u
		}
		for _, u := range before.Units {
			v := now[u.Name]
			if v == nil {
				t.Fatalf("run %d: unit %s is gone after adding %s", run, u.Name, added)
			}
			if v.Shard != u.Shard || v.Group != u.Group || v.Folder != u.Folder {
				t.Fatalf("run %d: adding %s moved %s from shard %d group %d to shard %d group %d", run, added, u.Name, u.Shard, u.Group, v.Shard, v.Group)
			}
			delete(now, u.Name)
		}
		if len(now) != 1 || now["computeplane-"+added] == nil {
			t.Fatalf("run %d: adding %s added units %v", run, added, now)
		}
		if shards > 1 {
			for _, u := range after.Units {
				if u.Shard < 1 || u.Shard > shards {
					t.Fatalf("run %d: %s in shard %d of %d", run, u.Name, u.Shard, shards)
				}
			}
		}
	}
}

// TestShardsSpread checks that units spread over the shards and that
// growing the shard count moves units only into the new shards.
func TestShardsSpread(t *testing.T) {
	var objs []render.Object
	for i := range 2000 {
		objs = append(objs, helmRelease(fmt.Sprintf("tenant-t%d", i), "computeplane"))
	}
	plan := func(shards int) map[string]int {
		p, err := units.NewPlan(fleetConfig(func(fc *api.FleetConfig) { fc.Shards = shards }), objs)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int{}
		for _, u := range p.Units {
			out[u.Name] = u.Shard
		}
		return out
	}
	four, five := plan(4), plan(5)
	count := map[int]int{}
	moved := 0
	for name, s := range four {
		count[s]++
		if five[name] != s {
			moved++
			if five[name] != 5 {
				t.Errorf("%s moved from shard %d to %d, not to the new shard", name, s, five[name])
			}
		}
	}
	for s := 1; s <= 4; s++ {
		if count[s] < 400 || count[s] > 600 {
			t.Errorf("shard %d holds %d of 2000 units", s, count[s])
		}
	}
	if moved < 250 || moved > 550 {
		t.Errorf("going from 4 to 5 shards moved %d of 2000 units, want about 400", moved)
	}
	for _, s := range plan(1) {
		if s != 0 {
			t.Fatalf("one shard: shard %d, want no label", s)
		}
	}
}

// TestSplitIsDeterministicAndBounded: the parts of a unit do not depend on
// the input order, never exceed the bound, and when objects are added an
// existing object either stays in its part or moves to a part that did not
// exist before (the one direction the wiring's dependsOn chain makes safe).
func TestSplitIsDeterministicAndBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for run := range 60 {
		limit := 10 + rng.IntN(60)
		n := 1 + rng.IntN(8*limit)
		cfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = limit })
		var objs []render.Object
		for i := range n {
			objs = append(objs, helmRelease("tenant-big", fmt.Sprintf("app%d-%d", i, rng.IntN(1000))))
		}
		partsOf := func(objs []render.Object) (map[string]int, int) {
			p, err := units.NewPlan(cfg, objs)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]int{}
			parts := 0
			for _, u := range p.Units {
				if len(u.Objects) > limit {
					t.Fatalf("run %d: part %s holds %d objects, over %d", run, u.Name, len(u.Objects), limit)
				}
				parts = u.Parts
				for _, o := range u.Objects {
					out[o.Name] = u.Part
				}
			}
			return out, parts
		}
		first, k := partsOf(objs)
		shuffled := slices.Clone(objs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if again, _ := partsOf(shuffled); !cmp.Equal(first, again) {
			t.Fatalf("run %d: the parts depend on the input order", run)
		}
		if want := (n + limit - 1) / limit; k < want {
			t.Fatalf("run %d: %d objects in %d parts at %d per part", run, n, k, limit)
		}
		grown := slices.Clone(objs)
		for i := range 1 + rng.IntN(3*limit) {
			grown = append(grown, helmRelease("tenant-big", fmt.Sprintf("new%d", i)))
		}
		after, k2 := partsOf(grown)
		for name, p := range first {
			if q := after[name]; q != p && q < k {
				t.Fatalf("run %d: %s moved from part %d to part %d, which existed before (%d parts, now %d)", run, name, p, q, k, k2)
			}
		}
	}
}

// TestSplitKeepsMostObjects checks what the consistent hash buys: growing a
// split unit moves few of its objects.
func TestSplitKeepsMostObjects(t *testing.T) {
	cfg := fleetConfig(nil)
	var objs []render.Object
	for i := range 2000 {
		objs = append(objs, helmRelease("tenant-big", fmt.Sprintf("app%d", i)))
	}
	partOf := func(objs []render.Object) map[string]string {
		p, err := units.NewPlan(cfg, objs)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, u := range p.Units {
			for _, o := range u.Objects {
				out[o.Name] = u.Name
			}
		}
		return out
	}
	before := partOf(objs)
	for i := range 800 {
		objs = append(objs, helmRelease("tenant-big", fmt.Sprintf("more%d", i)))
	}
	after := partOf(objs)
	moved := 0
	for name, u := range before {
		if after[name] != u {
			moved++
		}
	}
	// Going from k to k' parts moves about (k'-k)/k' of the objects; cutting
	// in sorted order would move most of them.
	if moved == 0 || moved > 2000/3 {
		t.Errorf("adding 800 objects to 2000 moved %d of them", moved)
	}
	t.Logf("adding 800 objects to 2000 moved %d", moved)
}

// TestLayoutProblems covers the refusals a user can meet.
func TestLayoutProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  *api.Config
		objs []render.Object
		want string
	}{
		{
			name: "wiring group over the bound",
			cfg:  fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = 10; fc.WiringGroups = 1 }),
			objs: sampleFleet(20, 0),
			want: "raise spec.fleet.wiringGroups to at least 4",
		},
		{
			name: "namespace named like the platform unit",
			cfg:  fleetConfig(nil),
			objs: []render.Object{
				object("v1", "ConfigMap", "platform", "x", false, ""),
				object("v1", "ConfigMap", "", "x", false, ""),
			},
			want: "would both be reconciled by Kustomization computeplane-platform",
		},
		{
			name: "two objects, one file",
			cfg:  fleetConfig(nil),
			objs: []render.Object{
				object("example.com/v1", "Widget", "tenant-a", "x", false, ""),
				object("other.example.com/v1", "Widget", "tenant-a", "x", false, ""),
			},
			// Only the render names what is laid out: a bug, not the user's.
			want: api.BugMessage,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := units.Files(tc.cfg, tc.objs)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// TestLongNamespaceNames: a Kustomization name stays a valid label value.
func TestLongNamespaceNames(t *testing.T) {
	ns := "tenant-" + strings.Repeat("a", 56) // 63 characters
	cfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = 10 })
	var objs []render.Object
	for i := range 25 {
		objs = append(objs, helmRelease(ns, fmt.Sprintf("app%d", i)))
	}
	p, err := units.NewPlan(cfg, objs)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, u := range p.Units {
		if len(u.Name) > 63 || seen[u.Name] {
			t.Errorf("name %q (%d characters, seen before: %v)", u.Name, len(u.Name), seen[u.Name])
		}
		seen[u.Name] = true
		for _, d := range u.DependsOn {
			if len(d) > 63 {
				t.Errorf("%s depends on %q", u.Name, d)
			}
		}
	}
	if len(p.Units) < 3 {
		t.Errorf("%d parts for 25 objects at 10 each", len(p.Units))
	}
}

// TestLayoutIsReproducible: the same objects in any order give the same
// bytes.
func TestLayoutIsReproducible(t *testing.T) {
	cfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = 15; fc.Shards = 2; fc.WiringGroups = 3 })
	objs := sampleFleet(12, 40)
	a, err := units.Files(cfg, objs)
	if err != nil {
		t.Fatal(err)
	}
	rev := slices.Clone(objs)
	slices.Reverse(rev)
	b, err := units.Files(cfg, rev)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("the layout depends on the input order:\n%s", diff)
	}
	for _, f := range a {
		var m map[string]any
		if err := sigsyaml.Unmarshal(f.Data, &m); err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		md, _ := m["metadata"].(map[string]any)
		labels, _ := md["labels"].(map[string]any)
		if labels["app.kubernetes.io/managed-by"] != "computeplane-fn" {
			t.Errorf("%s does not carry the managed-by label", f.Path)
		}
	}
}
