package model

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// Names of what routed apps get inside their ComputePlane (the in-cluster
// baseline, package render's baseline.go).
const (
	// SharedAppsAccount is the ServiceAccount routed apps install as, in the
	// tenant's namespace of the ComputePlane, with shared namespaces and no
	// grant.
	SharedAppsAccount = wire.SharedAppsAccount
	// PerAppAccountPrefix starts the account of an app with per-app
	// namespaces: computeplane-app-<release>.
	PerAppAccountPrefix = wire.PerAppAccountPrefix
	// NamespaceAdminRole is the ClusterRole every app account is bound to
	// in the namespace its app installs into: Kubernetes' own admin role.
	NamespaceAdminRole = "admin"
	// MaxNamespaceName is the longest name of a namespace (a DNS label).
	MaxNamespaceName = 63
)

// BaselinePath is the folder of a tenant's baseline, relative to the fleet
// folder: <namespace>/_baseline (wire.BaselineFolder). The namespace's unit
// never lists it, so its objects are never applied to the management
// cluster; only the baseline Kustomization (wire.BaselineKustomization)
// applies them, inside the ComputePlane.
func BaselinePath(namespace string) string { return namespace + "/" + wire.BaselineFolder }

// AppNamespace is the namespace of the ComputePlane a routed app installs
// into: the tenant's namespace, or with spec.routing.namespaces: PerApp
// the app's own, <namespace>-<release> when that fits in 63 characters, and
// otherwise its first 54 characters (without a trailing '-') followed by '-'
// and 8 hex digits of the FNV-1a hash of <namespace>-<release>. Routed apps
// of one cluster are all in one tenant namespace, with distinct releases,
// so the names differ unless two hashes collide (CheckAppNamespaces).
func (f *Fleet) AppNamespace(app *App) string {
	if !f.Config.Routing.PerApp() {
		return app.Namespace
	}
	return PerAppNamespace(app.Namespace, app.Release)
}

// PerAppNamespace is the per-app namespace of release in namespace (see
// AppNamespace).
func PerAppNamespace(namespace, release string) string {
	name := namespace + "-" + release
	if len(name) <= MaxNamespaceName {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	head := strings.TrimRight(name[:MaxNamespaceName-9], "-")
	return fmt.Sprintf("%s-%08x", head, h.Sum32())
}

// AppAccount is the ServiceAccount, in the tenant's namespace of the
// ComputePlane, that helm-controller impersonates there for a routed app
// (spec.serviceAccountName; helm-controller puts it in the namespace of the
// HelmRelease): with per-app namespaces computeplane-app-<release>; with
// shared ones computeplane-apps. Grants need per-app namespaces (an admin
// of a shared namespace could act as a granted account there), so a
// granted account is always an app's own.
func (f *Fleet) AppAccount(app *App) string {
	if f.Config.Routing.PerApp() {
		return PerAppAccountPrefix + app.Release
	}
	return SharedAppsAccount
}

// checkRouting refuses grants of an ApplicationDefinition placed on the
// management plane, and two routed apps of one tenant that would share a
// per-app namespace.
func (f *Fleet) checkRouting() api.Problems {
	var problems api.Problems
	cfg := f.Config
	byName := map[string]*api.Definition{}
	for _, d := range f.Definitions {
		byName[d.Ref.Name] = d
	}
	for i, g := range cfg.Routing.Grants {
		d, ok := byName[g.Definition]
		field := fmt.Sprintf("spec.routing.grants[%d].definition", i)
		// A grant of a definition that is not among this run's inputs
		// grants nothing here (a fleet may be rendered in several runs
		// with one config, and a run on its own output has no inputs).
		switch {
		case !ok:
		case d.Placement != api.PlacementComputePlane:
			problems = append(problems, api.Errorf(cfg.Ref, cfg.Origin, field,
				"ApplicationDefinition %q (kind %s) is placed on the management plane, where its apps install with Flux's own rights; a grant only applies inside a ComputePlane", g.Definition, d.Kind))
		}
	}
	if !cfg.Routing.PerApp() {
		return problems
	}
	seen := map[string]*App{}
	for _, app := range f.Apps {
		if app.Placement != api.PlacementComputePlane {
			continue
		}
		ns := f.AppNamespace(app)
		key := app.Namespace + "/" + ns
		if prev, dup := seen[key]; dup {
			problems = append(problems, api.Errorf(app.Ref, app.Origin, "metadata.name",
				"release %q would install into namespace %q of the ComputePlane like release %q (their per-app names were cut to 63 characters and their hashes collide); rename one app", app.Release, ns, prev.Release))
			continue
		}
		seen[key] = app
	}
	return problems
}
