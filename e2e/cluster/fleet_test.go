package cluster

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

const (
	fleetRoot     = "computeplane-fleet"
	kustomizeName = "kustomize.toolkit.fluxcd.io/name"
)

// fleetRepo is a fleet repository: its inputs (work), and repo/fleet, the
// folder the function writes and GitRepository flux-system/fleet serves.
type fleetRepo struct {
	e        *env
	work     string
	repo     string
	revision string
	// unitOf maps each rendered object to the Kustomization of its unit.
	unitOf map[string]string
	objs   map[string]*unstructured.Unstructured
}

// publish renders the fleet folder and publishes repo/ as a new revision of
// GitRepository fleet.
func (f *fleetRepo) publish(t *testing.T) {
	t.Helper()
	f.render(t)
	f.upload(t)
}

// render renders the fleet folder into the repo and indexes it, without
// publishing it: a stage that must bootstrap before the controllers see the
// revision renders first.
func (f *fleetRepo) render(t *testing.T) {
	t.Helper()
	out := filepath.Join(f.repo, "fleet")
	harness.RenderFolder(t, f.e.bins.fn, f.work, out, "config.yaml")
	f.index(t, out)
}

// upload publishes the rendered repo as the artifact of the fleet's
// GitRepository.
func (f *fleetRepo) upload(t *testing.T) {
	t.Helper()
	files, err := harness.ReadTree(f.repo, "")
	if err != nil {
		t.Fatal(err)
	}
	tar, err := harness.Tarball(files)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.Sum(tar)
	f.revision = "main@sha1:" + hex.EncodeToString(sum[:])
	ns := f.e.mode.fleetNamespace
	repo := obj(sourceV1, "GitRepository", ns, "fleet", map[string]any{
		"spec": map[string]any{"url": "https://127.0.0.1/fleet.git", "interval": "10m", "ref": map[string]any{"branch": "main"}},
	})
	f.e.setArtifact(t, repo, f.e.artifacts.Publish("gitrepository", ns, "fleet", f.revision, tar))
}

// index maps every object of the folder to its unit's Kustomization, from
// the wiring's paths.
func (f *fleetRepo) index(t *testing.T, out string) {
	t.Helper()
	all := folderObjects(t, out)
	folderOf := artifactFolders(all)
	pathToUnit := map[string]string{}
	for _, o := range all {
		if o.GetKind() == "Kustomization" && o.GetAPIVersion() == kustomizeV1 {
			p, _, _ := unstructured.NestedString(o.Object, "spec", "path")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "sourceRef", "kind")
			name, _, _ := unstructured.NestedString(o.Object, "spec", "sourceRef", "name")
			if kind == "ExternalArtifact" {
				// spec.fleet.unitSource: ExternalArtifact: the path is inside
				// the artifact, which holds a folder of the fleet folder.
				pathToUnit[path.Join(folderOf[name], p)] = o.GetName()
				continue
			}
			pathToUnit[strings.TrimPrefix(p, "./fleet/")] = o.GetName()
		}
	}
	f.unitOf = map[string]string{}
	f.objs = map[string]*unstructured.Unstructured{}
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") || filepath.Base(p) == "kustomization.yaml" {
			return err
		}
		if strings.Contains(filepath.ToSlash(p), "/_baseline/") {
			return nil // applied inside a ComputePlane, never here
		}
		rel, _ := filepath.Rel(out, p)
		// The unit is the deepest folder a wiring Kustomization points at.
		unit := ""
		for dir := filepath.Dir(rel); dir != "." && unit == ""; dir = filepath.Dir(dir) {
			unit = pathToUnit[filepath.ToSlash(dir)]
		}
		objs, err := harness.DecodeFiles(p)
		if err != nil {
			return err
		}
		for _, o := range objs {
			f.unitOf[harness.ObjectKey(o)] = unit
			f.objs[harness.ObjectKey(o)] = o
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// artifactFolders maps each ExternalArtifact the fleet folder's
// ArtifactGenerators make to the folder of the fleet folder it holds
// (spec.fleet.unitSource: ExternalArtifact): the fleet's generator copies a
// wiring group's folder from the fleet source (./fleet), and the fleet's own
// units' folders into one artifact whose root is the fleet folder's; a
// group's generator copies a namespace's folder from the group's artifact.
func artifactFolders(objs []*unstructured.Unstructured) map[string]string {
	folderOf := map[string]string{}
	for pass := 0; pass < 2; pass++ { // the fleet's generator, then the groups'
		for _, o := range objs {
			if o.GetKind() != "ArtifactGenerator" || o.GetNamespace() == "cozy-system" {
				continue
			}
			sources, _, _ := unstructured.NestedSlice(o.Object, "spec", "sources")
			artifacts, _, _ := unstructured.NestedSlice(o.Object, "spec", "artifacts")
			if len(sources) != 1 {
				continue
			}
			src := sources[0].(map[string]any)
			fromArtifact := src["kind"] == "ExternalArtifact"
			if fromArtifact != (pass == 1) {
				continue
			}
			for _, a := range artifacts {
				art := a.(map[string]any)
				for _, c := range art["copy"].([]any) {
					// @<alias>/<folder>/** to @artifact/ or, for the
					// fleet's own units, @artifact/<the folder's name>/:
					// the artifact's root is the folder above it then.
					cp := c.(map[string]any)
					_, glob, _ := strings.Cut(cp["from"].(string), "/")
					folder := strings.TrimSuffix(glob, "/**")
					if fromArtifact {
						folder = path.Join(folderOf[src["name"].(string)], folder)
					} else {
						folder = strings.TrimPrefix(folder, "fleet/")
					}
					if dest := strings.TrimSuffix(strings.TrimPrefix(cp["to"].(string), "@artifact/"), "/"); dest != "" {
						folder = strings.TrimSuffix(strings.TrimSuffix(folder, dest), "/")
					}
					folderOf[art["name"].(string)] = folder
				}
			}
		}
	}
	return folderOf
}

// all lists the objects of the folder.
func (f *fleetRepo) all() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range f.objs {
		out = append(out, o)
	}
	return out
}

// kustomizations lists the Kustomizations of the wiring (by name).
func (f *fleetRepo) kustomizations() []string {
	var out []string
	for k, o := range f.objs {
		if o.GetKind() == "Kustomization" && o.GetAPIVersion() == kustomizeV1 && o.GetNamespace() == f.e.mode.fleetNamespace {
			out = append(out, f.objs[k].GetName())
		}
	}
	sort.Strings(out)
	return out
}

// waitReconciled waits until the root and every Kustomization of the wiring
// is Ready at the published revision, then checks that every rendered object
// is in the cluster, owned by its unit's Kustomization, and returns their
// UIDs.
func (f *fleetRepo) waitReconciled(t *testing.T) map[string]string {
	t.Helper()
	e := f.e
	atRevision := func(u *unstructured.Unstructured) (bool, string) {
		ok, seen := harness.Ready(u)
		rev, _, _ := unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
		want := f.revision
		if kind, _, _ := unstructured.NestedString(u.Object, "spec", "sourceRef", "kind"); kind == "ExternalArtifact" {
			// spec.fleet.unitSource: ExternalArtifact: the artifact's
			// revision is the digest of its content; the objects' check
			// below tells whether it holds the published revision's.
			name, _, _ := unstructured.NestedString(u.Object, "spec", "sourceRef", "name")
			ns, _, _ := unstructured.NestedString(u.Object, "spec", "sourceRef", "namespace")
			ea, err := e.admin.Get(e.ctx, sourceV1, "ExternalArtifact", ns, name)
			if err != nil || ea == nil {
				return false, fmt.Sprintf("%s, ExternalArtifact %s/%s not there yet", seen, ns, name)
			}
			want, _, _ = unstructured.NestedString(ea.Object, "status", "artifact", "revision")
		}
		return ok && want != "" && rev == want, fmt.Sprintf("%s, lastAppliedRevision %s, want %s", seen, rev, want)
	}
	check := func(u *unstructured.Unstructured) (bool, string) {
		if u == nil {
			return false, "not found"
		}
		return atRevision(u)
	}
	e.waitFor(t, e.admin, kustomizeV1, "Kustomization", e.mode.fleetNamespace, fleetRoot, 3*time.Minute, check)
	for _, name := range f.kustomizations() {
		e.waitFor(t, e.admin, kustomizeV1, "Kustomization", e.mode.fleetNamespace, name, 3*time.Minute, check)
	}
	// With artifacts, a Kustomization at its artifact's revision may still
	// be one source-watcher build behind the published revision: the
	// objects are checked until they are all there, for a bounded time.
	var uids map[string]string
	var problems []string
	err := harness.Poll(e.ctx, 2*time.Minute, 2*time.Second, func() (bool, string) {
		uids, problems = map[string]string{}, nil
		for key, o := range f.objs {
			got, err := e.admin.Get(e.ctx, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
			if err != nil || got == nil {
				problems = append(problems, fmt.Sprintf("%s: not in the cluster (%v)", key, err))
				continue
			}
			if p := f.wrongOwner(key, got); p != "" {
				problems = append(problems, p)
			}
			uids[key] = string(got.GetUID())
		}
		return len(problems) == 0, fmt.Sprintf("%d objects not applied as rendered", len(problems))
	})
	if err != nil {
		sort.Strings(problems)
		t.Fatalf("after reconciling %s:\n  %s", f.revision, strings.Join(problems, "\n  "))
	}
	return uids
}

// sameUIDs fails for every object of both maps whose UID changed: it was
// deleted and created again.
func sameUIDs(t *testing.T, step string, before, after map[string]string) {
	t.Helper()
	var changed []string
	for k, u := range before {
		if a, ok := after[k]; ok && a != u {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	if len(changed) > 0 {
		t.Errorf("%s deleted and recreated %d objects that stayed in the render:\n  %s", step, len(changed), strings.Join(changed, "\n  "))
	}
}

// setFleet changes spec.fleet settings of the config.
func (f *fleetRepo) setFleet(t *testing.T, settings map[string]any) {
	t.Helper()
	editSpec(t, filepath.Join(f.work, "config.yaml"), func(spec map[string]any) {
		fleet := spec["fleet"].(map[string]any)
		for k, v := range settings {
			fleet[k] = v
		}
	})
}

// extraApps writes n more Postgres apps of tenant-gamma (extra.yaml).
func (f *fleetRepo) extraApps(t *testing.T, n int) {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: extra%02d\n  namespace: tenant-gamma\nspec:\n  replicas: 1\n", i)
	}
	harness.WriteFile(t, filepath.Join(f.work, "extra.yaml"), []byte(b.String()))
}

// startFleet publishes the stages' fleet (tenant-gamma, -delta, -epsilon,
// extra.yaml as an input, empty until growth) with the given spec.fleet
// settings on top of the fleet's own, bootstraps it (docs/flux-wiring.md:
// the fleet's account and its RBAC by hand, then the root, which applies as
// that account too) and waits until it is reconciled. It returns the fleet
// and its objects' UIDs.
func (e *env) startFleet(t *testing.T, settings map[string]any) (*fleetRepo, map[string]string) {
	t.Helper()
	e.ensureFlux(t)
	e.ensurePlatform(t)
	f := &fleetRepo{e: e, work: e.fleetDir(t, "fleet"), repo: filepath.Join(t.TempDir(), "repo")}
	f.extraApps(t, 0)
	editSpec(t, filepath.Join(f.work, "config.yaml"), func(spec map[string]any) {
		spec["inputs"] = append(spec["inputs"].([]any), "extra.yaml")
	})
	if len(settings) > 0 {
		f.setFleet(t, settings)
	}
	for _, ns := range []string{"tenant-gamma", "tenant-delta", "tenant-epsilon"} {
		e.namespaces(ns)
		e.writeCozystackValues(t, ns)
	}
	// The tenants with a ComputePlane: their baselines apply into a
	// stand-in, and their routed units wait for that.
	for _, ns := range []string{"tenant-gamma", "tenant-delta"} {
		e.standInComputePlane(t, ns)
	}
	f.publish(t)
	e.bootstrapFleet(t, f.all())
	e.applyAll(t, e.admin, []*unstructured.Unstructured{e.fleetRoot()}, false)
	for _, name := range f.kustomizations() {
		ks := f.objs[harness.ObjectKey(obj(kustomizeV1, "Kustomization", e.mode.fleetNamespace, name, nil))]
		if sa, _, _ := unstructured.NestedString(ks.Object, "spec", "serviceAccountName"); sa != fleetAccount {
			t.Errorf("Kustomization %s/%s: serviceAccountName %q, want %q (the fleet applies as its own account)", e.mode.fleetNamespace, name, sa, fleetAccount)
		}
	}
	uids := f.waitReconciled(t)
	t.Logf("fleet reconciled: %d objects in %d Kustomizations", len(uids), len(f.kustomizations()))
	return f, uids
}

// step publishes one change of the fleet, waits until it is reconciled and
// fails for every object that stayed in the render but was deleted and
// created again: uids are the objects' UIDs before the change, and it
// returns them after.
func (f *fleetRepo) step(t *testing.T, uids map[string]string, name string, change func()) map[string]string {
	t.Helper()
	change()
	f.publish(t)
	after := f.waitReconciled(t)
	sameUIDs(t, name, uids, after)
	t.Logf("%s: %d objects in %d Kustomizations at %s", name, len(after), len(f.kustomizations()), f.revision)
	return after
}

// growAndShrink splits tenant-gamma's unit into parts by growth, merges
// them back with a larger bound, then takes the extra apps out of Git and
// waits until they are pruned. The merge comes first: apps removed in the
// commit that removes their part would be orphaned, not pruned
// (flux-wiring.md, "Shrinking").
func (f *fleetRepo) growAndShrink(t *testing.T, uids map[string]string) map[string]string {
	t.Helper()
	uids = f.step(t, uids, "split by growth", func() { f.extraApps(t, 12) })
	if !hasPart(f) {
		t.Fatalf("12 more apps did not split tenant-gamma's unit (maxObjectsPerUnit 10): Kustomizations %v", f.kustomizations())
	}
	uids = f.step(t, uids, "merge back", func() { f.setFleet(t, map[string]any{"maxObjectsPerUnit": 50}) })
	if hasPart(f) {
		t.Fatalf("maxObjectsPerUnit 50 did not merge tenant-gamma's parts: Kustomizations %v", f.kustomizations())
	}
	uids = f.step(t, uids, "remove the extra apps", func() { f.extraApps(t, 0) })
	for i := 1; i <= 12; i++ {
		f.e.waitFor(t, f.e.admin, helmV2, "HelmRelease", "tenant-gamma", fmt.Sprintf("postgres-extra%02d", i), time.Minute, harness.Gone)
	}
	return uids
}

func (e *env) testFleet(t *testing.T) {
	f, uids := e.startFleet(t, nil)
	step := func(name string, change func()) {
		t.Helper()
		uids = f.step(t, uids, name, change)
	}
	uids = f.growAndShrink(t, uids)

	// Sharding: two kustomize-controller shards take the labelled
	// Kustomizations, as Flux documents it.
	for _, shard := range []string{"shard1", "shard2"} {
		e.procs = append(e.procs, e.startKustomizeController(cleanupWith{TB: t, owner: e.t},
			"kustomize-controller-"+shard, "sharding.fluxcd.io/key in ("+shard+")"))
	}
	step("shards 1 to 2", func() { f.setFleet(t, map[string]any{"shards": 2}) })
	checkTenantShards(t, f)
	step("wiringGroups 4 to 2", func() { f.setFleet(t, map[string]any{"wiringGroups": 2}) })
	// 0 lets the fleet's size choose the count: another change of every
	// group, the one a growing fleet makes by itself.
	step("wiringGroups 2 to 0", func() { f.setFleet(t, map[string]any{"wiringGroups": 0}) })
	step("shards 2 to 1", func() { f.setFleet(t, map[string]any{"shards": 1}) })

	// The fleet's clusters install from the platform unit's chart, as each
	// tenant's installer.
	for _, ns := range []string{"tenant-gamma", "tenant-delta"} {
		if find(f.all(), "HelmRelease", ns, "computeplane") != nil {
			e.waitReady(t, e.admin, helmV2, "HelmRelease", ns, "computeplane", 3*time.Minute)
		}
	}

	// Removing tenant gamma prunes its apps and keeps its cluster and the
	// hardening that fences it.
	before := map[string]*unstructured.Unstructured{}
	for k, o := range f.objs {
		before[k] = o
	}
	tenants := filepath.Join(f.work, "tenants.yaml")
	data, _ := os.ReadFile(tenants)
	docs := strings.Split(string(data), "---\n")
	var kept []string
	for _, d := range docs {
		if !strings.Contains(d, "name: gamma\n") {
			kept = append(kept, d)
		}
	}
	harness.WriteFile(t, tenants, []byte(strings.Join(kept, "---\n")))
	apps := filepath.Join(f.work, "apps.yaml")
	data, _ = os.ReadFile(apps)
	kept = nil
	for _, d := range strings.Split(string(data), "---\n") {
		if !strings.Contains(d, "namespace: tenant-gamma") {
			kept = append(kept, d)
		}
	}
	harness.WriteFile(t, apps, []byte(strings.Join(kept, "---\n")))
	f.publish(t)
	after := f.waitReconciled(t)
	sameUIDs(t, "remove tenant gamma", uids, after)
	e.waitFor(t, e.admin, kustomizeV1, "Kustomization", e.mode.fleetNamespace, "computeplane-tenant-gamma", 2*time.Minute, harness.Gone)
	for k, o := range before {
		if o.GetNamespace() != "tenant-gamma" {
			continue
		}
		keep := o.GetAnnotations()["kustomize.toolkit.fluxcd.io/prune"] == "disabled"
		got, err := e.admin.Get(e.ctx, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case keep && got == nil:
			t.Errorf("%s (prune: disabled) was pruned with its tenant", k)
		case keep && string(got.GetUID()) != uids[k]:
			t.Errorf("%s (prune: disabled) was recreated", k)
		case !keep:
			e.waitFor(t, e.admin, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName(), time.Minute, harness.Gone)
		}
	}
	for _, want := range []string{"HelmRelease/computeplane", "ConfigMap/computeplane-admission", "CiliumNetworkPolicy/computeplane-egress"} {
		kind, name, _ := strings.Cut(want, "/")
		found := false
		for _, o := range before {
			if o.GetNamespace() == "tenant-gamma" && o.GetKind() == kind && o.GetName() == name {
				found = o.GetAnnotations()["kustomize.toolkit.fluxcd.io/prune"] == "disabled"
			}
		}
		if !found {
			t.Errorf("tenant gamma's %s is not rendered with kustomize.toolkit.fluxcd.io/prune: disabled", want)
		}
	}
	// The kept cluster is still helm-controller's to manage: a forced
	// upgrade (what a changed chart or a config drift does) runs as the
	// installer, whose account and rights must have stayed with it.
	e.forceUpgrade(t, "tenant-gamma", "computeplane")
}

// forceUpgrade asks helm-controller to upgrade a release now
// (reconcile.fluxcd.io/forceAt) and waits until it has, Ready.
func (e *env) forceUpgrade(t *testing.T, ns, name string) {
	t.Helper()
	token := time.Now().UTC().Format(time.RFC3339Nano)
	patch := obj(helmV2, "HelmRelease", ns, name, map[string]any{"metadata": map[string]any{"name": name, "namespace": ns,
		"annotations": map[string]any{"reconcile.fluxcd.io/requestedAt": token, "reconcile.fluxcd.io/forceAt": token}}})
	if _, _, err := e.admin.Apply(e.ctx, patch, harness.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, e.admin, helmV2, "HelmRelease", ns, name, 2*time.Minute, func(u *unstructured.Unstructured) (bool, string) {
		if u == nil {
			return false, "not found"
		}
		handled, _, _ := unstructured.NestedString(u.Object, "status", "lastHandledForceAt")
		ok, seen := harness.Ready(u)
		return handled == token && ok, fmt.Sprintf("lastHandledForceAt %q (want %q), %s", handled, token, seen)
	})
}

func hasPart(f *fleetRepo) bool {
	for _, k := range f.kustomizations() {
		if strings.HasPrefix(k, "computeplane-tenant-gamma.part") {
			return true
		}
	}
	return false
}

// wrongOwner says what is wrong with the Kustomization that applied an
// object of the fleet, or "": a unit's objects belong to its Kustomization,
// a unit's Kustomization to its wiring group, a group to the root.
func (f *fleetRepo) wrongOwner(key string, got *unstructured.Unstructured) string {
	owner := f.unitOf[key]
	if owner == "" {
		owner = fleetRoot
	}
	if applied := got.GetLabels()[kustomizeName]; applied != owner {
		return fmt.Sprintf("%s: applied by Kustomization %q, want %q", key, applied, owner)
	}
	return ""
}

// checkTenantShards checks the render of a sharded fleet (docs/flux-wiring.md,
// "Sharding"): every Kustomization, the tenants' in-cluster baselines
// included, carries a shard, and all Kustomizations of one namespace share
// it. That the shard controllers then reconcile them is waitReconciled's.
func checkTenantShards(t *testing.T, f *fleetRepo) {
	t.Helper()
	byNamespace := map[string]string{}
	for key, o := range f.objs {
		if o.GetKind() != "Kustomization" || o.GetAPIVersion() != kustomizeV1 {
			continue
		}
		shard := o.GetLabels()[shardKeyLabel]
		if !strings.HasPrefix(shard, "shard") {
			t.Errorf("%s: %s %q, want the shard of its tenant", key, shardKeyLabel, shard)
			continue
		}
		p, _, _ := unstructured.NestedString(o.Object, "spec", "path")
		ns, _, _ := strings.Cut(strings.TrimPrefix(p, "./fleet/"), "/")
		if strings.HasPrefix(ns, "_") {
			continue // the fleet's own: account, platform, wiring groups
		}
		if prev, ok := byNamespace[ns]; ok && prev != shard {
			t.Errorf("%s is on %s, another Kustomization of %s on %s", key, shard, ns, prev)
		}
		byNamespace[ns] = shard
	}
	t.Logf("shards by namespace: %v", byNamespace)
}
