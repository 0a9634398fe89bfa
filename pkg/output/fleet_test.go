package output_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/output"
)

// places is a layout that writes <folder>/<file>.yaml only.
func places(p string) bool { return strings.Count(p, "/") == 1 }

// TestFleetFilesKeepToTheirFleet: every file written names its fleet in
// its first line; a file of another fleet is never pruned, and where a
// file of this fleet goes the write is refused naming it; a managed file
// without an identity (an earlier version's) is adopted in the layout's
// places and left alone elsewhere.
func TestFleetFilesKeepToTheirFleet(t *testing.T) {
	dir := t.TempDir()
	opts := output.DirOptions{Fleet: "../prod/config.yaml", Places: places}
	files := fleetFiles("acme")
	if _, err := output.WriteDir(context.Background(), dir, files, opts); err != nil {
		t.Fatal(err)
	}
	for p, content := range readTree(t, dir) {
		if fleet, ok := output.FleetOf([]byte(content)); !ok || fleet != opts.Fleet {
			t.Errorf("%s names fleet %q, want %q", p, fleet, opts.Fleet)
		}
	}
	other := func(data []byte) string { return output.FleetHeader("../staging/config.yaml") + string(data) }
	writeTree(t, dir, map[string]string{
		// Another fleet's, in a place of the layout and outside.
		"tenant-globex/helmrelease-computeplane.yaml": other(managed("HelmRelease", "tenant-globex", "computeplane")),
		"copy/tenant-globex/helmrelease-a.yaml":       other(managed("HelmRelease", "tenant-globex", "a")),
		// An earlier version's, in a place and outside.
		"tenant-old/helmrelease-computeplane.yaml": string(managed("HelmRelease", "tenant-old", "computeplane")),
		"copy/tenant-old/helmrelease-a.yaml":       string(managed("HelmRelease", "tenant-old", "a")),
	})
	changes, err := output.WriteDir(context.Background(), dir, files, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"removed tenant-old/helmrelease-computeplane.yaml"}, summarize(changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	got := readTree(t, dir)
	for _, p := range []string{"tenant-globex/helmrelease-computeplane.yaml", "copy/tenant-globex/helmrelease-a.yaml", "copy/tenant-old/helmrelease-a.yaml"} {
		if _, ok := got[p]; !ok {
			t.Errorf("%s, not this fleet's, was removed", p)
		}
	}

	// Where a file of this fleet goes, another fleet's file is refused.
	clash := append(slices.Clone(files), file("tenant-globex/helmrelease-computeplane.yaml", managed("HelmRelease", "tenant-globex", "computeplane")))
	for _, check := range []bool{false, true} {
		opts.Check = check
		_, err := output.WriteDir(context.Background(), dir, clash, opts)
		if err == nil || !strings.Contains(err.Error(), "tenant-globex/helmrelease-computeplane.yaml: written by another fleet (# computeplane.dev/fleet: ../staging/config.yaml)") {
			t.Errorf("check=%v: a file of this fleet over another fleet's: %v", check, err)
		}
	}

	// An earlier version's file where this fleet writes one is adopted:
	// rewritten with the identity.
	opts.Check = false
	adopted := "tenant-acme/helmrelease-computeplane.yaml"
	writeTree(t, dir, map[string]string{adopted: string(managed("HelmRelease", "tenant-acme", "computeplane"))})
	changes, err = output.WriteDir(context.Background(), dir, files, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"changed " + adopted}, summarize(changes)); diff != "" {
		t.Errorf("adoption (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(readTree(t, dir)[adopted], output.FleetHeader(opts.Fleet)) {
		t.Errorf("%s was not stamped", adopted)
	}

	// A fleet whose config is gone (moved away) is adopted the same way.
	opts.Gone = func(fleet string) bool { return fleet == "../moved/config.yaml" }
	writeTree(t, dir, map[string]string{
		adopted:                           output.FleetHeader("../moved/config.yaml") + string(managed("HelmRelease", "tenant-acme", "computeplane")),
		"tenant-moved/helmrelease-a.yaml": output.FleetHeader("../moved/config.yaml") + string(managed("HelmRelease", "tenant-moved", "a")),
	})
	changes, err = output.WriteDir(context.Background(), dir, files, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"changed " + adopted, "removed tenant-moved/helmrelease-a.yaml"}, summarize(changes)); diff != "" {
		t.Errorf("adopting a moved fleet's files (-want +got):\n%s", diff)
	}
}

// TestPruneNeedsConsent: removing more than half of the fleet's files,
// and more than a handful, is refused without AllowPrune, naming them; a
// check reports it without asking.
func TestPruneNeedsConsent(t *testing.T) {
	var many []string
	for i := range 12 {
		many = append(many, fmt.Sprintf("t%02d", i))
	}
	for _, tc := range []struct {
		name          string
		before, after []string
		refused       bool
	}{
		{"most of a large fleet", many, many[:2], true},
		{"half of it", many, many[:6], false},
		{"most of a small fleet", many[:4], many[:1], false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := output.DirOptions{Fleet: "f", Places: places}
			if _, err := output.WriteDir(context.Background(), dir, fleetFiles(tc.before...), opts); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			check := opts
			check.Check = true
			if _, err := output.WriteDir(context.Background(), dir, fleetFiles(tc.after...), check); err != nil {
				t.Errorf("check: %v", err)
			}
			_, err := output.WriteDir(context.Background(), dir, fleetFiles(tc.after...), opts)
			var prune *output.PruneError
			if !tc.refused {
				if err != nil {
					t.Fatalf("write: %v", err)
				}
				return
			}
			if !errors.As(err, &prune) || !strings.Contains(err.Error(), "tenant-t11/helmrelease-computeplane.yaml") {
				t.Fatalf("write: %v, want a *PruneError naming the files", err)
			}
			if diff := cmp.Diff(before, snapshot(t, dir)); diff != "" {
				t.Errorf("a refused prune changed the folder (-before +after):\n%s", diff)
			}
			opts.AllowPrune = true
			if _, err := output.WriteDir(context.Background(), dir, fleetFiles(tc.after...), opts); err != nil {
				t.Errorf("with AllowPrune: %v", err)
			}
		})
	}
}

// TestPruneCountsMovesApart: a write that moves every file of the fleet
// to another path (a change of layout), its objects all still rendered,
// needs no consent; one that moves most of them and drops most objects on
// the way is refused, naming only the files whose objects are gone.
func TestPruneCountsMovesApart(t *testing.T) {
	var many []string
	for i := range 12 {
		many = append(many, fmt.Sprintf("t%02d", i))
	}
	moved := func(files []output.File) []output.File {
		out := make([]output.File, len(files))
		for i, f := range files {
			out[i] = output.File{Path: "_units/" + f.Path, Data: f.Data}
		}
		return out
	}
	layout := func(p string) bool { return places(p) || strings.HasPrefix(p, "_units/") }
	opts := output.DirOptions{Fleet: "f", Places: layout}

	dir := t.TempDir()
	if _, err := output.WriteDir(context.Background(), dir, fleetFiles(many...), opts); err != nil {
		t.Fatal(err)
	}
	changes, err := output.WriteDir(context.Background(), dir, moved(fleetFiles(many...)), opts)
	if err != nil {
		t.Fatalf("a move of every file was refused: %v", err)
	}
	if n := len(changes.Paths(output.Removed)); n != 1+2*len(many) {
		t.Errorf("%d files removed, want every one of the %d moved", n, 1+2*len(many))
	}

	dir = t.TempDir()
	if _, err := output.WriteDir(context.Background(), dir, fleetFiles(many...), opts); err != nil {
		t.Fatal(err)
	}
	_, err = output.WriteDir(context.Background(), dir, moved(fleetFiles(many[:2]...)), opts)
	var prune *output.PruneError
	if !errors.As(err, &prune) {
		t.Fatalf("moving 2 tenants and dropping 10: %v, want a *PruneError", err)
	}
	if len(prune.Removed) != 20 || slices.Contains(prune.Removed, "tenant-t00/helmrelease-computeplane.yaml") || !slices.Contains(prune.Removed, "tenant-t11/helmrelease-computeplane.yaml") {
		t.Errorf("the refusal names %v, want the 20 files of the dropped tenants only", prune.Removed)
	}
}

// TestCompareWithFilesInMemory: Compare is WriteDir's check against a
// folder held in memory (a Git revision's), with the same rules for what is
// the fleet's, and shows the reader both sides of what changes.
func TestCompareWithFilesInMemory(t *testing.T) {
	opts := output.DirOptions{Fleet: "f", Places: places}
	dir := t.TempDir()
	if _, err := output.WriteDir(context.Background(), dir, fleetFiles("acme", "globex"), opts); err != nil {
		t.Fatal(err)
	}
	var old []output.File
	for p, content := range readTree(t, dir) {
		old = append(old, file(p, []byte(content)))
	}
	old = append(old,
		file("README.yaml", []byte("not: ours\n")),
		file("tenant-x/helmrelease-y.yaml", []byte(output.FleetHeader("g")+string(managed("HelmRelease", "tenant-x", "y")))),
		file(".git/x.yaml", managed("HelmRelease", "tenant-x", "y")))
	files := fleetFiles("acme", "initech")
	files[1].Data = managed("HelmRelease", "tenant-acme", "computeplane", "  suspend: true\n")
	var mu sync.Mutex
	read := map[string]int{}
	opts.Read = func(p string, oldSide bool, docs []*yaml.Node) {
		mu.Lock()
		defer mu.Unlock()
		read[fmt.Sprintf("%s old=%v", p, oldSide)] += len(docs)
	}
	changes, err := output.Compare(old, files, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"changed tenant-acme/helmrelease-computeplane.yaml",
		"removed tenant-globex/helmrelease-computeplane.yaml",
		"removed tenant-globex/helmrelease-jupyterhub-lab.yaml",
		"added tenant-initech/helmrelease-computeplane.yaml",
		"added tenant-initech/helmrelease-jupyterhub-lab.yaml",
	}
	if diff := cmp.Diff(want, summarize(changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	wantRead := map[string]int{
		"tenant-acme/helmrelease-computeplane.yaml old=true":       1,
		"tenant-acme/helmrelease-computeplane.yaml old=false":      1,
		"tenant-globex/helmrelease-computeplane.yaml old=true":     1,
		"tenant-globex/helmrelease-jupyterhub-lab.yaml old=true":   1,
		"tenant-initech/helmrelease-computeplane.yaml old=false":   1,
		"tenant-initech/helmrelease-jupyterhub-lab.yaml old=false": 1,
	}
	if diff := cmp.Diff(wantRead, read); diff != "" {
		t.Errorf("documents read (-want +got):\n%s", diff)
	}
	// What the folder on disk says is what the files in memory say.
	check := opts
	check.Check, check.Read = true, nil
	onDisk, err := output.WriteDir(context.Background(), filepath.Join(dir), files, check)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(summarize(onDisk), summarize(changes)); diff != "" {
		t.Errorf("Compare and WriteDir's check differ (-disk +memory):\n%s", diff)
	}
}
