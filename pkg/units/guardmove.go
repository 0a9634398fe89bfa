package units

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// The guard is never absent (issue 40), nor the fleet's own account, which
// every Kustomization of the fleet runs as. kustomize-controller applies first
// and collects garbage after, and its collector leaves alone an object whose
// kustomize.toolkit.fluxcd.io/name and namespace labels name another
// Kustomization. So an object that moves from one Kustomization to another
// is kept only if the new one applies it before the old one prunes it (or
// is deleted, and deletes what it applied). For the guard, a moment without
// it is a moment in which a tenant's request it refuses is admitted, and
// admission is not retroactive; without the account, the account's unit
// itself cannot apply it again. The layout keeps both in the account's
// unit, which no setting but spec.fleet.wiringNamespace moves
// (TestGuardNeverMoves); CheckGuardMove compares a render with the fleet
// folder an earlier render left, and refuses a render that moves one of
// them to another Kustomization unless the move is ordered:
//
//   - both Kustomizations are in one namespace and read one source, so that
//     dependsOn orders their revisions (kustomize-controller compares a
//     dependency's revision only between Kustomizations of one source);
//   - in the earlier wiring the old Kustomization waits, through its
//     dependsOn, for the new one, which exists there already: at the new
//     revision the new one applies (and relabels) the guard before the old
//     one reconciles, whichever of the two wirings the old one runs with;
//   - in the new wiring the old Kustomization still waits for the new one,
//     or it is gone and was deletionPolicy: Orphan, so deleting it leaves
//     the guard in place.
//
// The upgrade from a platform unit that held the guard, chained or star, to
// the account's unit is such a move (its parts waited for the account's
// unit, and the parts after the first are Orphan). A fleet rendered before
// the account's unit existed, a changed spec.fleet.wiringNamespace, or a
// move between the default layout (no spec.fleet) and units is not: the
// error says to annotate the live objects that move with
// kustomize.toolkit.fluxcd.io/prune: disabled first, which every collector
// and finalizer of kustomize-controller honours, and to render again with
// the consent the caller names (docs/guard.md, "When the guard would
// move").

// keptObject is an object that must never be absent while the fleet
// reconciles: one of the guard's, or of the fleet's own account, which every
// Kustomization of the fleet impersonates (without its ServiceAccount and
// rights, the account's unit could not apply them again). Namespace is ""
// for a cluster-scoped object; resource is kubectl's name of the kind.
type keptObject struct {
	kind, namespace, name, resource string
}

// file is the name of the object's file in every layout (render.Object.Path:
// <kind-lowercase>-<name>.yaml, in its namespace's folder or _cluster).
func (k keptObject) file() string { return strings.ToLower(k.kind) + "-" + k.name + ".yaml" }

func (k keptObject) String() string {
	if k.namespace == "" {
		return k.kind + " " + k.name
	}
	return k.kind + " " + k.namespace + "/" + k.name
}

// keptObjects are the guard's policy and binding (it has no parameters, so
// no other object belongs to it) and the fleet's account of cfg.
func keptObjects(cfg *api.Config) []keptObject {
	ns, sa := cfg.FleetAccount()
	return []keptObject{
		{"ValidatingAdmissionPolicy", "", wire.GuardName, "validatingadmissionpolicy"},
		{"ValidatingAdmissionPolicyBinding", "", wire.GuardName, "validatingadmissionpolicybinding"},
		{"ServiceAccount", ns, sa, "serviceaccount"},
		{"ClusterRole", "", render.FleetAccountRole, "clusterrole"},
		{"ClusterRoleBinding", "", render.FleetAccountRole, "clusterrolebinding"},
	}
}

// home is where a folder has one of the kept objects: its file and
// the Kustomization of the unit whose kustomization.yaml lists it ("" when
// none does: the default layout, which the operator's own Kustomization
// applies).
type home struct {
	file, unit string
}

// homes finds the files of the kept objects: in _cluster or a namespace's
// folder (the default layout) and anywhere below the other folders whose
// names start with "_" but the wiring's (the account's unit, the platform
// unit and their parts, as any version laid them out). Only a file of this
// function's that holds the object counts.
func (l *Layout) homes(kept []keptObject) (map[keptObject][]home, error) {
	top, err := l.tree.readDir(".")
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", l.What, err)
	}
	wanted := map[string][]keptObject{}
	for _, k := range kept {
		wanted[k.file()] = append(wanted[k.file()], k)
	}
	homes := map[keptObject][]home{}
	look := func(p string) error {
		for _, k := range wanted[path.Base(p)] {
			is, err := l.holds(p, k)
			if err != nil {
				return err
			}
			if !is {
				continue
			}
			unit, err := l.unitOf(p)
			if err != nil {
				return err
			}
			homes[k] = append(homes[k], home{file: p, unit: unit})
		}
		return nil
	}
	for _, e := range top {
		if !e.dir {
			continue
		}
		if !strings.HasPrefix(e.name, "_") {
			// A namespace's folder: only the default layout's file at its
			// top (the units keep the account's in _account).
			for _, k := range kept {
				if k.namespace == e.name {
					if err := look(path.Join(e.name, k.file())); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		wiring, err := l.isWiring(e.name)
		if err != nil {
			return nil, err
		}
		if wiring {
			continue
		}
		if err := l.walkFiles(e.name, look); err != nil {
			return nil, err
		}
	}
	return homes, nil
}

// holds reports whether the file at p holds the object k, written by this
// function. A file that is not there holds nothing.
func (l *Layout) holds(p string, k keptObject) (bool, error) {
	data, err := l.tree.readFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("failed to read %s in %s: %w", p, l.What, err)
	}
	var head struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name      string            `json:"name"`
			Namespace string            `json:"namespace"`
			Labels    map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if yaml.Unmarshal(data, &head) != nil {
		return false, nil
	}
	return head.Kind == k.kind && head.Metadata.Name == k.name && head.Metadata.Namespace == k.namespace &&
		head.Metadata.Labels[wire.ManagedByLabel] == wire.ManagedByValue, nil
}

// unitOf is the Kustomization of the unit that applies the file at p: the
// name of the nearest kustomization.yaml of this function's above it, when
// it lists the file; "" when none lists it (a kustomization.yaml of the
// user's own, which the writer leaves alone, names no unit).
func (l *Layout) unitOf(p string) (string, error) {
	for dir := path.Dir(p); ; dir = path.Dir(dir) {
		k, err := l.kustomizeFile(dir)
		if err != nil {
			return "", err
		}
		if k != nil {
			rel := strings.TrimPrefix(p, dir+"/")
			if slices.Contains(k.Resources, rel) {
				return k.MetaData.Name, nil
			}
			return "", nil
		}
		if dir == "." {
			return "", nil
		}
	}
}

// kustomizeFile reads dir's kustomization.yaml; nil when there is none, or
// when it is not this function's (no managed-by label).
func (l *Layout) kustomizeFile(dir string) (*kusttypes.Kustomization, error) {
	data, err := l.tree.readFile(path.Join(dir, KustomizationFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("failed to read %s in %s: %w", path.Join(dir, KustomizationFile), l.What, err)
	}
	var k kusttypes.Kustomization
	if yaml.Unmarshal(data, &k) != nil || k.MetaData == nil || k.MetaData.Labels[wire.ManagedByLabel] != wire.ManagedByValue {
		return nil, nil
	}
	return &k, nil
}

// isWiring reports whether the folder dir is a wiring folder: its
// kustomization.yaml is the wiring's (any spec.fleet.wiringPath, so that
// the wiring of an earlier config is found too).
func (l *Layout) isWiring(dir string) (bool, error) {
	k, err := l.kustomizeFile(dir)
	if err != nil || k == nil {
		return false, err
	}
	return k.MetaData.Name == NamePrefix+"wiring", nil
}

// kustomization is the wiring's Kustomization named name: the file
// kustomization-<name>.yaml in a folder of a wiring group. nil when no
// wiring holds it, or two hold it unalike.
func (l *Layout) kustomization(name string) (*kustomizev1.Kustomization, error) {
	if name == "" {
		return nil, nil
	}
	if ks, read := l.kustomizations[name]; read {
		return ks, nil
	}
	if !l.wiringsRead {
		top, err := l.tree.readDir(".")
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", l.What, err)
		}
		for _, e := range top {
			if !e.dir || !strings.HasPrefix(e.name, "_") {
				continue
			}
			if w, err := l.isWiring(e.name); err != nil {
				return nil, err
			} else if w {
				l.wirings = append(l.wirings, e.name)
			}
		}
		l.wiringsRead = true
		l.kustomizations = map[string]*kustomizev1.Kustomization{}
	}
	var found *kustomizev1.Kustomization
	twice := false
	for _, w := range l.wirings {
		groups, err := l.tree.readDir(w)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s in %s: %w", w, l.What, err)
		}
		for _, g := range groups {
			if !g.dir || !groupFolder.MatchString(g.name) {
				continue
			}
			p := path.Join(w, g.name, wiringFile(name))
			data, err := l.tree.readFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("failed to read %s in %s: %w", p, l.What, err)
			}
			var ks kustomizev1.Kustomization
			if err := yaml.Unmarshal(data, &ks); err != nil {
				return nil, fmt.Errorf("failed to read %s in %s: %w", p, l.What, err)
			}
			if ks.Kind != kustomizev1.KustomizationKind || ks.Name != name {
				continue
			}
			if ks.Spec.SourceRef.Namespace == "" {
				ks.Spec.SourceRef.Namespace = ks.Namespace
			}
			if found != nil && (found.Namespace != ks.Namespace || !equalSpec(found, &ks)) {
				twice = true
			}
			found = &ks
		}
	}
	if twice {
		found = nil
	}
	l.kustomizations[name] = found
	return found, nil
}

func equalSpec(a, b *kustomizev1.Kustomization) bool {
	ja, errA := yaml.Marshal(a.Spec)
	jb, errB := yaml.Marshal(b.Spec)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// waitsFor reports whether Kustomization from waits, through the dependsOn
// of the Kustomizations in its namespace, for Kustomization to.
func (l *Layout) waitsFor(from, to string) (bool, error) {
	seen := map[string]bool{}
	var walk func(name string) (bool, error)
	walk = func(name string) (bool, error) {
		if seen[name] {
			return false, nil
		}
		seen[name] = true
		ks, err := l.kustomization(name)
		if err != nil || ks == nil {
			return false, err
		}
		for _, d := range ks.Spec.DependsOn {
			if d.Namespace != "" && d.Namespace != ks.Namespace {
				continue
			}
			if d.Name == to {
				return true, nil
			}
			if ok, err := walk(d.Name); ok || err != nil {
				return ok, err
			}
		}
		return false, nil
	}
	return walk(from)
}

// GuardMove is one of the guard's objects, or of the fleet's account, that
// a render moves from one Kustomization to another without the order that
// keeps it in force.
type GuardMove struct {
	// Object names the object: its kind, namespace and name.
	Object string
	// From and To name the Kustomizations (namespace/name), or what applies
	// the object without one.
	From, To string
	// Before names the folder the object moves from (Layout.What).
	Before string
	// Why says what leaves the object unprotected.
	Why string
	// kept is the object, for the step to take.
	kept keptObject
}

// GuardMoveError refuses a render that moves the guard or the fleet's
// account out of order (CheckGuardMove).
type GuardMoveError struct {
	Moves []GuardMove
}

func (e *GuardMoveError) Error() string { return e.Message("") }

// Message is the error's text, with the consent to give once the step is
// taken (a flag) when given. The step annotates the objects that move, one
// kubectl command per name, as docs/guard.md has it.
func (e *GuardMoveError) Message(consent string) string {
	var b strings.Builder
	b.WriteString("refusing to move the guard or the fleet's account to another Kustomization: kustomize-controller could prune them before they are applied again, and while the guard is absent the API server admits what it refuses (docs/guard.md, \"When the guard would move\"):\n")
	type target struct{ namespace, name string }
	var targets []target
	resources := map[target][]string{}
	for _, m := range e.Moves {
		fmt.Fprintf(&b, "  %s: from %s (%s) to %s: %s\n", m.Object, m.From, m.Before, m.To, m.Why)
		t := target{m.kept.namespace, m.kept.name}
		if _, seen := resources[t]; !seen {
			targets = append(targets, t)
		}
		if !slices.Contains(resources[t], m.kept.resource) {
			resources[t] = append(resources[t], m.kept.resource)
		}
	}
	commands := func(value string) string {
		var out []string
		for _, t := range targets {
			ns := ""
			if t.namespace != "" {
				ns = "-n " + t.namespace + " "
			}
			out = append(out, fmt.Sprintf("  kubectl %sannotate %s %s %s%s", ns, strings.Join(resources[t], ","), t.name, pruneAnnotation, value))
		}
		return strings.Join(out, "\n")
	}
	fmt.Fprintf(&b, "Take this step first, as a cluster administrator, so that no Kustomization deletes the live objects:\n%s\n", commands("="+kustomizev1.DisabledValue))
	if consent == "" {
		consent = "consent to the move"
	}
	fmt.Fprintf(&b, "then render again with %s, and once every Kustomization has applied that revision, remove the annotation:\n%s", consent, commands("-"))
	return b.String()
}

// pruneAnnotation is the annotation kustomize-controller's garbage
// collector and finalizer skip an object for (with the value "disabled").
var pruneAnnotation = kustomizev1.GroupVersion.Group + "/prune"

// CheckGuardMove compares where after (a render of cfg) has the guard and
// the fleet's account applied with where each of before (the folder an
// earlier render left, a base revision of it; nil ones are skipped) had
// them, and returns a *GuardMoveError for every such object that would move
// to another Kustomization without the order that keeps it in force (see
// the comment at the top of this file). An object only one side has is no
// move: a first render, or a guard switched on or off, which the posture
// reports.
func CheckGuardMove(cfg *api.Config, after *Layout, before ...*Layout) error {
	kept := keptObjects(cfg)
	now, err := after.homes(kept)
	if err != nil {
		return err
	}
	var moves []GuardMove
	for _, b := range before {
		if b == nil {
			continue
		}
		was, err := b.homes(kept)
		if err != nil {
			return err
		}
		for _, k := range kept {
			for _, to := range now[k] {
				for _, from := range was[k] {
					m, err := checkMove(b, after, from, to)
					if err != nil {
						return err
					}
					if m != nil {
						m.Object, m.kept = k.String(), k
						moves = append(moves, *m)
					}
				}
			}
		}
	}
	if len(moves) == 0 {
		return nil
	}
	return &GuardMoveError{Moves: moves}
}

// checkMove returns the move of an object of the guard from its home in
// before to its home in after when it is not ordered; nil when the object
// stays with its Kustomization, or moves in order.
func checkMove(before, after *Layout, from, to home) (*GuardMove, error) {
	if from.unit == "" && to.unit == "" {
		return nil, nil
	}
	fromWas, err := before.kustomization(from.unit)
	if err != nil {
		return nil, err
	}
	toNow, err := after.kustomization(to.unit)
	if err != nil {
		return nil, err
	}
	m := &GuardMove{Before: before.What, From: unitLabel(from.unit, fromWas), To: unitLabel(to.unit, toNow)}
	if from.unit == "" || to.unit == "" {
		side := before.What
		if to.unit == "" {
			side = after.What
		}
		m.Why = "no Kustomization of the fleet's wiring applies it in " + side + " (the layout without spec.fleet), so one Kustomization prunes it and another creates it, in no order"
		return m, nil
	}
	if toNow == nil {
		// Files lists every unit's Kustomization.
		return nil, fmt.Errorf("failed to check the guard's move: %s has no Kustomization %s in its wiring", after.What, to.unit)
	}
	if fromWas == nil {
		m.Why = fmt.Sprintf("%s has no Kustomization %s in its wiring (or two unalike), so nothing orders the move", before.What, from.unit)
		return m, nil
	}
	if from.unit == to.unit && fromWas.Namespace == toNow.Namespace {
		return nil, nil
	}
	if fromWas.Namespace != toNow.Namespace {
		m.Why = fmt.Sprintf("the Kustomization moves from namespace %s to %s (spec.fleet.wiringNamespace), and dependsOn orders Kustomizations of one namespace only", fromWas.Namespace, toNow.Namespace)
		return m, nil
	}
	toWas, err := before.kustomization(to.unit)
	if err != nil {
		return nil, err
	}
	if toWas == nil {
		m.Why = fmt.Sprintf("%s is not in %s, so %s, which may reconcile the new revision with the dependsOn it has there, does not wait for it", to.unit, before.What, from.unit)
		return m, nil
	}
	if waits, err := before.waitsFor(from.unit, to.unit); err != nil {
		return nil, err
	} else if !waits {
		m.Why = fmt.Sprintf("in %s, %s does not wait for %s (dependsOn), so at the new revision it may prune the object before %s applies it", before.What, from.unit, to.unit, to.unit)
		return m, nil
	}
	if fromWas.Spec.SourceRef != toWas.Spec.SourceRef || toWas.Spec.SourceRef != toNow.Spec.SourceRef {
		m.Why = fmt.Sprintf("%s and %s do not read one source in both renders (spec.fleet.unitSource, sourceRef), and dependsOn orders the revisions of one source only", from.unit, to.unit)
		return m, nil
	}
	fromNow, err := after.kustomization(from.unit)
	if err != nil {
		return nil, err
	}
	if fromNow == nil {
		if fromWas.Spec.DeletionPolicy != kustomizev1.DeletionPolicyOrphan {
			m.Why = fmt.Sprintf("%s leaves the wiring, and deleting it deletes what it applied (its deletionPolicy is not Orphan), in no order with %s", from.unit, to.unit)
			return m, nil
		}
		return nil, nil
	}
	if waits, err := after.waitsFor(from.unit, to.unit); err != nil {
		return nil, err
	} else if !waits {
		m.Why = fmt.Sprintf("in %s, %s does not wait for %s (dependsOn), so it may prune the object before %s applies it", after.What, from.unit, to.unit, to.unit)
		return m, nil
	}
	if fromNow.Spec.SourceRef != toNow.Spec.SourceRef {
		m.Why = fmt.Sprintf("%s and %s do not read one source in both renders (spec.fleet.unitSource, sourceRef), and dependsOn orders the revisions of one source only", from.unit, to.unit)
		return m, nil
	}
	return nil, nil
}

// unitLabel names a unit's Kustomization in a message: namespace/name when
// its Kustomization was read, the name alone otherwise, and for no unit what
// applies the default layout.
func unitLabel(unit string, ks *kustomizev1.Kustomization) string {
	switch {
	case unit == "":
		return "the Kustomization that applies the whole folder"
	case ks != nil:
		return ks.Namespace + "/" + unit
	}
	return unit
}
