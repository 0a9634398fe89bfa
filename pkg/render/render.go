package render

import (
	"github.com/computeplane-dev/computeplane-fn/internal/parallel"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

// Outputs renders every generated object of a checked fleet, unordered:
// the source, each tenant's cluster with its hardening, the guard and every
// app's release (package order then adds what passes through and sorts).
//
// The check stage (package fleet) has refused every mistake of the user's,
// so an error here is a bug of this function, never the input's. The
// releases of apps are only planned, and rendered over their definition's
// shared parts when a writer reaches them (see Body), and the objects of
// each tenant's cluster are held as text from the moment they are
// rendered, so that fleets of any size fit.
func Outputs(f *model.Fleet) ([]Object, error) {
	out := make([]Object, 0, len(f.Apps)+len(f.Tenants)+1)
	add := func(objs []Object, err error) error {
		out = append(out, objs...)
		return err
	}
	if f.Config.Delivery == api.Platform {
		// The module provisions the cluster; the egress policy of its VMs
		// is still this function's.
		for _, t := range f.SortedTenants() {
			if !t.ComputePlane {
				continue
			}
			if err := add(heldAsText(RenderPlatformComputePlane(f, t))); err != nil {
				return nil, err
			}
		}
	}
	var installers []string
	if f.Config.Delivery == api.Direct {
		for _, t := range f.SortedTenants() {
			if t.ComputePlane {
				installers = append(installers, t.Namespace)
			}
		}
		if err := add(RenderInstallerRole(f)); err != nil {
			return nil, err
		}
	}
	if err := add(RenderFleetAccount(f, installers)); err != nil {
		return nil, err
	}
	if f.Config.Delivery == api.Direct {
		if f.Config.Source.Generate {
			if err := add(one(RenderSource(f))); err != nil {
				return nil, err
			}
		}
		var tenants []*model.Tenant
		for _, t := range f.SortedTenants() {
			if t.ComputePlane {
				tenants = append(tenants, t)
			}
		}
		// Tenants are rendered on all cores, and collected in their
		// order; each is held as text from then on: a few KB instead of
		// hundreds of nodes per tenant.
		err := parallel.Ordered(len(tenants), parallel.Workers(),
			func(i int) ([]Object, error) { return heldAsText(RenderComputePlane(f, tenants[i])) },
			func(_ int, objs []Object) error { return add(objs, nil) })
		if err != nil {
			return nil, err
		}
	}
	if f.Config.Guard.Enabled {
		if err := add(RenderGuard(f)); err != nil {
			return nil, err
		}
	}
	if f.Config.Fleet == nil && hasComputePlane(f) {
		if err := add(RenderBaselineSource(f)); err != nil {
			return nil, err
		}
	}
	if err := add(RenderShardLabelPolicy(f)); err != nil {
		return nil, err
	}
	releases := newReleases(f)
	for _, app := range f.Apps {
		out = append(out, releases.render(app))
	}
	return out, nil
}

// one is the single object of a renderer as a list.
func one(o Object, err error) ([]Object, error) {
	if err != nil {
		return nil, err
	}
	return []Object{o}, nil
}

// heldAsText holds each of objs as the text it is written as.
func heldAsText(objs []Object, err error) ([]Object, error) {
	if err != nil {
		return nil, err
	}
	var scratch []byte
	for i := range objs {
		if err := objs[i].holdAsText(&scratch); err != nil {
			return nil, err
		}
	}
	return objs, nil
}

// RenderPlatformComputePlane builds what one tenant's ComputePlane needs
// from this function under delivery: Platform, where the platform's module
// provisions the cluster: the egress policy of its VMs and the in-cluster
// baseline (renderBaseline).
func RenderPlatformComputePlane(f *model.Fleet, t *model.Tenant) ([]Object, error) {
	egress, err := RenderEgress(f, t)
	if err != nil {
		return nil, err
	}
	baseline, err := renderBaseline(f, t)
	if err != nil {
		return nil, err
	}
	return []Object{egress, baseline}, nil
}

// RenderComputePlane builds everything one tenant's ComputePlane needs under
// delivery: Direct: the cluster HelmRelease (and on the SplitPools line its
// worker pools' releases, RenderPoolReleases), its installer (RenderInstaller)
// and the hardening around it, the Pod Security ConfigMap its API server
// loads (not under podSecurity: privileged), the egress policy of its VMs
// and the in-cluster baseline (renderBaseline).
func RenderComputePlane(f *model.Fleet, t *model.Tenant) ([]Object, error) {
	cluster, err := RenderClusterRelease(f, t)
	if err != nil {
		return nil, err
	}
	out := []Object{cluster}
	if f.Cluster.Split() {
		pools, err := RenderPoolReleases(f, t)
		if err != nil {
			return nil, err
		}
		out = append(out, pools...)
		if f.Cluster.AdoptsWorkers() {
			adoptions, err := RenderPoolAdoptions(f, t)
			if err != nil {
				return nil, err
			}
			out = append(out, adoptions...)
		}
	}
	installer, err := RenderInstaller(f, t)
	if err != nil {
		return nil, err
	}
	out = append(out, installer...)
	if a := f.Cluster.Admission(); a != nil {
		cm, err := RenderAdmission(a, t)
		if err != nil {
			return nil, err
		}
		out = append(out, cm)
	}
	platform, err := RenderPlatformComputePlane(f, t)
	if err != nil {
		return nil, err
	}
	return append(out, platform...), nil
}

// renderBaseline builds a tenant's in-cluster baseline as its mode
// delivers it: a Kustomization of the fleet folder's files with spec.fleet,
// a release of the baseline chart in the stream without it.
func renderBaseline(f *model.Fleet, t *model.Tenant) (Object, error) {
	if f.Config.Fleet != nil {
		return RenderBaseline(f, t)
	}
	return RenderBaselineRelease(f, t)
}

// hasComputePlane reports whether any tenant of the fleet has one.
func hasComputePlane(f *model.Fleet) bool {
	for _, t := range f.Tenants {
		if t.ComputePlane {
			return true
		}
	}
	return false
}
