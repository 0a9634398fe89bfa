package units_test

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// guardFleet is a small fleet with the guard, laid out by cfg (the default
// layout without spec.fleet).
func guardFleet(t *testing.T, cfg *api.Config, guard bool) []units.File {
	t.Helper()
	objs := sampleFleet(4, 0)
	if guard {
		objs = append(objs, guardObjects()...)
	}
	for i := range 12 {
		objs = append(objs, object("rbac.authorization.k8s.io/v1", "ClusterRole", "", fmt.Sprintf("computeplane-installer-tenant-t%d", i), true, "rules: []\n"))
	}
	files, problems := units.Files(cfg, objs)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return files
}

// handUnit is a unit of a fleet folder of an earlier form, written by hand:
// its Kustomization and which of the guard's objects its folder holds.
type handUnit struct {
	name, folder string
	dependsOn    []string
	orphan       bool
	namespace    string // "" for flux-system
	sourceKind   string // "" for GitRepository
	policy       bool
	binding      bool
}

// handFleet writes the units as the function wrote them: each folder's
// kustomization.yaml named after its Kustomization and listing the guard's
// files, and the Kustomizations in one wiring group of _flux.
func handFleet(us ...handUnit) []units.File {
	const managed = "  labels:\n    app.kubernetes.io/managed-by: computeplane-fn\n"
	var files []units.File
	var wiring []string
	for _, u := range us {
		var resources []string
		if u.policy {
			resources = append(resources, "_cluster/validatingadmissionpolicy-computeplane-guard.yaml")
		}
		if u.binding {
			resources = append(resources, "_cluster/validatingadmissionpolicybinding-computeplane-guard.yaml")
		}
		list := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata:\n" + managed + "  name: " + u.name + "\nresources:\n"
		for _, r := range resources {
			kind := "ValidatingAdmissionPolicy"
			if strings.Contains(r, "binding") {
				kind = "ValidatingAdmissionPolicyBinding"
			}
			list += "- " + r + "\n"
			files = append(files, units.File{Path: path.Join(u.folder, r),
				Data: []byte("apiVersion: admissionregistration.k8s.io/v1\nkind: " + kind + "\nmetadata:\n" + managed + "  name: computeplane-guard\n")})
		}
		if len(resources) == 0 {
			list += "[]\n"
		}
		files = append(files, units.File{Path: path.Join(u.folder, "kustomization.yaml"), Data: []byte(list)})
		ns := cmpOr(u.namespace, "flux-system")
		ks := "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n" + managed + "  name: " + u.name + "\n  namespace: " + ns + "\nspec:\n"
		if u.orphan {
			ks += "  deletionPolicy: Orphan\n"
		}
		if len(u.dependsOn) > 0 {
			ks += "  dependsOn:\n"
			for _, d := range u.dependsOn {
				ks += "  - name: " + d + "\n"
			}
		}
		ks += "  interval: 10m0s\n  path: ./fleet/" + u.folder + "\n  prune: true\n  sourceRef:\n    kind: " + cmpOr(u.sourceKind, "GitRepository") + "\n    name: fleet\n    namespace: flux-system\n"
		files = append(files, units.File{Path: "_flux/0-of-1/kustomization-" + u.name + ".yaml", Data: []byte(ks)})
		wiring = append(wiring, "- kustomization-"+u.name+".yaml")
	}
	files = append(files,
		units.File{Path: "_flux/0-of-1/kustomization.yaml", Data: []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata:\n" + managed + "  name: computeplane-wiring-0-of-1\nresources:\n" + strings.Join(wiring, "\n") + "\n")},
		units.File{Path: "_flux/kustomization.yaml", Data: []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata:\n" + managed + "  name: computeplane-wiring\nresources:\n- kustomization-computeplane-wiring-0-of-1.yaml\n")})
	return files
}

// accountConfig is the config whose fleet's account the check looks for:
// the default one.
func accountConfig() *api.Config {
	return fleetConfig(func(fc *api.FleetConfig) { fc.ServiceAccountName = api.DefaultFleetServiceAccount })
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// moves checks after against before and returns the moves refused, nil
// for none.
func moves(t *testing.T, before, after []units.File) []units.GuardMove {
	t.Helper()
	err := units.CheckGuardMove(accountConfig(), units.FilesLayout(after, "the render"), units.FilesLayout(before, "rendered"))
	var move *units.GuardMoveError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &move):
		return move.Moves
	}
	t.Fatal(err)
	return nil
}

// TestGuardMoveOrdered: a render that moves the guard is refused unless the
// Kustomization it leaves waits for the one it goes to, in both wirings,
// at one source, in one namespace, or is deleted with deletionPolicy:
// Orphan (issue 40). The earlier forms are written by hand as those
// versions wrote them; the render is this version's, the guard in the
// account's unit.
func TestGuardMoveOrdered(t *testing.T) {
	render := guardFleet(t, fleetConfig(nil), true)
	account := handUnit{name: "computeplane-fleet-account", folder: "_account"}
	cases := []struct {
		name   string
		before []units.File
		// why is a part of the reason given for each object, "" when the
		// render is not refused.
		why string
		// account: the fleet's account moves too, not only the guard.
		account bool
	}{{
		name:   "the same layout",
		before: render,
	}, {
		name: "the chain of platform parts, each waiting for the account's unit",
		before: handFleet(account,
			handUnit{name: "computeplane-platform", folder: "_platform", dependsOn: []string{"computeplane-fleet-account", "computeplane-platform-part1"}, binding: true},
			handUnit{name: "computeplane-platform-part1", folder: "_platform/part1", dependsOn: []string{"computeplane-fleet-account"}, orphan: true, policy: true}),
	}, {
		name: "the star of platform parts",
		before: handFleet(account,
			handUnit{name: "computeplane-platform", folder: "_platform", dependsOn: []string{"computeplane-fleet-account"}, binding: true, policy: true},
			handUnit{name: "computeplane-platform.part1", folder: "_platform/part1", dependsOn: []string{"computeplane-platform"}, orphan: true}),
	}, {
		name: "a part that waits through the chain",
		before: handFleet(account,
			handUnit{name: "computeplane-platform", folder: "_platform", dependsOn: []string{"computeplane-platform-part1"}},
			handUnit{name: "computeplane-platform-part1", folder: "_platform/part1", dependsOn: []string{"computeplane-platform-part2"}, orphan: true, binding: true},
			handUnit{name: "computeplane-platform-part2", folder: "_platform/part2", dependsOn: []string{"computeplane-fleet-account"}, orphan: true, policy: true}),
	}, {
		name: "before the account's unit",
		before: handFleet(
			handUnit{name: "computeplane-platform", folder: "_platform", binding: true, policy: true}),
		why: "computeplane-fleet-account is not in rendered",
	}, {
		name: "a platform unit that does not wait for the account's",
		before: handFleet(account,
			handUnit{name: "computeplane-platform", folder: "_platform", binding: true, policy: true}),
		why: "computeplane-platform does not wait for computeplane-fleet-account",
	}, {
		name: "a part that leaves the wiring and deletes what it applied",
		before: handFleet(account,
			handUnit{name: "computeplane-platform", folder: "_platform", dependsOn: []string{"computeplane-fleet-account"}},
			handUnit{name: "computeplane-platform-part1", folder: "_platform/part1", dependsOn: []string{"computeplane-fleet-account"}, binding: true, policy: true}),
		why: "computeplane-platform-part1 leaves the wiring",
	}, {
		name: "a unit of another source",
		before: handFleet(account,
			handUnit{name: "computeplane-platform", folder: "_platform", dependsOn: []string{"computeplane-fleet-account"}, sourceKind: "OCIRepository", binding: true, policy: true}),
		why: "do not read one source in both renders",
	}, {
		name:   "the account's unit in another namespace",
		before: handFleet(handUnit{name: "computeplane-fleet-account", folder: "_account", namespace: "cozy-fluxcd", binding: true, policy: true}),
		why:    "from namespace cozy-fluxcd to flux-system",
	}, {
		name:    "the layout without spec.fleet",
		before:  guardFleet(t, &api.Config{}, true),
		why:     "no Kustomization of the fleet's wiring applies it in rendered",
		account: true,
	}, {
		name:   "no guard before",
		before: guardFleet(t, fleetConfig(nil), false),
	}, {
		name: "no fleet folder before",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := moves(t, c.before, render)
			if c.why == "" {
				if got != nil {
					t.Fatalf("refused: %+v", got)
				}
				return
			}
			var objects []string
			for _, m := range got {
				objects = append(objects, m.Object)
				if !strings.Contains(m.Why, c.why) {
					t.Errorf("%s: refused because %q, want %q in it", m.Object, m.Why, c.why)
				}
				if !strings.HasSuffix(m.To, "/computeplane-fleet-account") {
					t.Errorf("%s: to %q, want the account's unit", m.Object, m.To)
				}
			}
			want := []string{"ValidatingAdmissionPolicy computeplane-guard", "ValidatingAdmissionPolicyBinding computeplane-guard"}
			if c.account {
				want = append(want, "ServiceAccount flux-system/computeplane-fleet", "ClusterRole computeplane-fleet", "ClusterRoleBinding computeplane-fleet")
			}
			if !slices.Equal(objects, want) {
				t.Errorf("refused the moves of %v, want %v", objects, want)
			}
		})
	}
}

// TestGuardMoveOtherDirections: the refusal holds whichever render is the
// earlier: leaving spec.fleet, changing spec.fleet.wiringNamespace; another
// wiring folder, fleet path or source moves nothing (the account's unit
// keeps its Kustomization), but a move in order is refused when the units'
// source changes with it (dependsOn would not order the revisions); a
// render without the guard (spec.guard.enabled: false) moves nothing, and a
// kustomization.yaml of the user's own (no managed-by label) beside the
// default layout names no unit.
func TestGuardMoveOtherDirections(t *testing.T) {
	units0 := guardFleet(t, fleetConfig(nil), true)
	flat := guardFleet(t, &api.Config{}, true)
	cozy := guardFleet(t, fleetConfig(func(fc *api.FleetConfig) { fc.WiringNamespace = "cozy-fluxcd" }), true)
	own := append(slices.Clone(flat), units.File{Path: "kustomization.yaml",
		Data: []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nmetadata: {name: mine}\nresources:\n- _cluster/validatingadmissionpolicy-computeplane-guard.yaml\n")})
	for _, c := range []struct {
		name          string
		before, after []units.File
		refused       bool
	}{
		{"units to the layout without spec.fleet", units0, flat, true},
		{"the layout without spec.fleet, twice", flat, flat, false},
		{"a kustomization.yaml of the user's own", own, flat, false},
		{"to another wiring namespace", units0, cozy, true},
		{"to another wiring folder", units0, guardFleet(t, fleetConfig(func(fc *api.FleetConfig) { fc.WiringPath = "_wiring" }), true), false},
		{"to another fleet path and source", units0, guardFleet(t, fleetConfig(func(fc *api.FleetConfig) {
			fc.Path, fc.SourceRef.Kind = "elsewhere", "OCIRepository"
		}), true), false},
		{"the guard switched off", units0, guardFleet(t, fleetConfig(nil), false), false},
		{"the chain of platform parts to the account's unit, and to artifacts at once", handFleet(
			handUnit{name: "computeplane-fleet-account", folder: "_account"},
			handUnit{name: "computeplane-platform", folder: "_platform", dependsOn: []string{"computeplane-fleet-account"}, binding: true, policy: true}),
			guardFleet(t, fleetConfig(func(fc *api.FleetConfig) { fc.UnitSource = api.UnitSourceExternalArtifact }), true), true},
	} {
		if got := moves(t, c.before, c.after); (got != nil) != c.refused {
			t.Errorf("%s: refused %+v, want refused %v", c.name, got, c.refused)
		}
	}
}

// TestGuardMoveNoneBetweenLayouts: no change of spec.fleet but the wiring
// namespace moves the guard, so none is refused: from one layout to every
// other of TestGuardNeverMoves's, both ways.
func TestGuardMoveNoneBetweenLayouts(t *testing.T) {
	var layouts [][]units.File
	var names []string
	for _, max := range []int{10, 40, 500} {
		for _, source := range []string{api.UnitSourceFleet, api.UnitSourceExternalArtifact} {
			for _, groups := range []int{0, 13} {
				for _, shards := range []int{1, 3} {
					names = append(names, fmt.Sprintf("maxObjectsPerUnit %d, unitSource %s, wiringGroups %d, shards %d", max, source, groups, shards))
					layouts = append(layouts, guardFleet(t, fleetConfig(func(fc *api.FleetConfig) {
						fc.MaxObjectsPerUnit, fc.UnitSource, fc.WiringGroups, fc.Shards = max, source, groups, shards
					}), true))
				}
			}
		}
	}
	for i := range layouts {
		for _, j := range []int{0, len(layouts) - 1 - i} {
			if got := moves(t, layouts[i], layouts[j]); got != nil {
				t.Errorf("from %s to %s: refused %+v", names[i], names[j], got)
			}
		}
	}
}

// TestGuardMoveFromDisk: the fleet folder on disk reads as its files do,
// through an os.Root; a folder that does not exist is no earlier render.
func TestGuardMoveFromDisk(t *testing.T) {
	dir := t.TempDir()
	before := handFleet(handUnit{name: "computeplane-platform", folder: "_platform", binding: true, policy: true})
	for _, f := range before {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, append([]byte("# computeplane.dev/fleet: ../config.yaml\n"), f.Data...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	disk, err := units.OpenLayout(dir, "rendered")
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	err = units.CheckGuardMove(accountConfig(), units.FilesLayout(guardFleet(t, fleetConfig(nil), true), "the render"), disk)
	var move *units.GuardMoveError
	if !errors.As(err, &move) || len(move.Moves) != 2 {
		t.Fatalf("got %v, want both objects' moves refused", err)
	}
	msg := move.Message("--allow-guard-move")
	for _, want := range []string{
		"ValidatingAdmissionPolicy computeplane-guard: from flux-system/computeplane-platform (rendered) to flux-system/computeplane-fleet-account",
		"kubectl annotate validatingadmissionpolicy,validatingadmissionpolicybinding computeplane-guard kustomize.toolkit.fluxcd.io/prune=disabled",
		"render again with --allow-guard-move",
		"kustomize.toolkit.fluxcd.io/prune-",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	missing, err := units.OpenLayout(filepath.Join(dir, "nothing"), "nothing")
	if missing != nil || err != nil {
		t.Errorf("a missing folder: %v, %v; want no layout and no error", missing, err)
	}
	if err := units.CheckGuardMove(accountConfig(), units.FilesLayout(guardFleet(t, fleetConfig(nil), true), "the render"), missing); err != nil {
		t.Errorf("no earlier render: %v", err)
	}
}
