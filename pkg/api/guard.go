package api

import (
	"slices"
	"strings"
	"unicode"
)

// GuardConfig is spec.guard: the management-plane guard, a
// ValidatingAdmissionPolicy the function renders once per fleet (docs/guard.md,
// package render's guard.go, docs/guard.md).
type GuardConfig struct {
	// Enabled renders the guard; true unless the config says false.
	Enabled bool `json:"enabled"`
	// FluxIdentities are the user names that apply the fleet repository:
	// the fleet's own account by default (Config.FleetIdentity), which
	// every Kustomization the function renders impersonates. They may set
	// any spec.kubeConfig and name a ComputePlane's credentials (rule G2),
	// and give a release or Kustomization the fleet's or a cluster
	// installer's account. Sorted, without duplicates.
	FluxIdentities Identities `json:"fluxIdentities"`
	// HelmIdentities are the platform's helm-controller: they may set a
	// spec.kubeConfig that names none of a ComputePlane's credentials
	// (Cozystack's own tenant Kubernetes apps have addon releases that
	// reach their cluster so), and under delivery: Platform they install
	// the module's cluster, whose addons name its credentials. Sorted,
	// without duplicates.
	HelmIdentities Identities `json:"helmIdentities"`
	// PlatformIdentities are the user names of the platform's controllers
	// that own a ComputePlane's worker VMs on the management cluster: the
	// only ones that may create, change or delete them, or make a VM of
	// their disks (rule G3), or ask for a token of the fleet's or an
	// installer's account. Sorted, without duplicates.
	PlatformIdentities Identities `json:"platformIdentities"`
	// SourceIdentities are Flux's source controllers: with the fleet
	// (FluxIdentities) and cluster administrators, the only ones that may
	// create or change the fleet's own sources and their status (rule
	// G5): spec.fleet.sourceRef, the generators and artifacts of the
	// wiring, the cluster chart's generator and artifact. Sorted, without
	// duplicates.
	SourceIdentities Identities `json:"sourceIdentities"`
}

// Identities are Kubernetes user names, as the API server puts them in
// request.userInfo.username.
type Identities []string

// identitiesWords say what a list of identities holds, in messages.
const identitiesWords = "a list of user names"

// DefaultHelmIdentities is guard.helmIdentities when the config sets none:
// Cozystack's Flux, whose kustomize-, helm- and source-controller (and the
// helm-controller shards flux-shard-operator clones) share one service
// account (internal/fluxinstall/manifests/fluxcd.yaml at Cozystack 3c780acd),
// and the helm-controller of `flux install` (flux-system), which installs
// the module's cluster under delivery: Platform on a stock Flux.
func DefaultHelmIdentities() []string {
	return []string{"system:serviceaccount:cozy-fluxcd:flux", "system:serviceaccount:flux-system:helm-controller"}
}

// DefaultPlatformIdentities is guard.platformIdentities when the config
// sets none: the service accounts of what creates, changes and deletes a
// ComputePlane's worker VMs in Cozystack (read at Cozystack 3c780acd),
// sorted. docs/guard.md says where each comes from:
//
//   - cozy-cluster-api:capk-manager: Cluster API's KubeVirt provider (CAPK,
//     packages/system/capi-providers-infraprovider, installed by the
//     cluster-api operator into cozy-cluster-api) creates, updates and
//     deletes the worker VMs and sets their cluster.x-k8s.io/cluster-name.
//   - cozy-kubevirt:kubevirt-controller: KubeVirt's virt-controller
//     (packages/system/kubevirt, KubeVirt CR in cozy-kubevirt) keeps the VMs'
//     finalizers and applies volume hotplug to their spec.
//   - cozy-kubevirt:kubevirt-apiserver: KubeVirt's virt-api patches a VM for
//     the start, stop and restart subresources (Cozystack grants them to
//     tenants as power controls; they change only the run strategy).
//   - kube-system:namespace-controller and kube-system:generic-garbage-collector:
//     Kubernetes deletes a deleted tenant's VMs and finishes deletions.
//
// Cluster API's core controller (capi-manager) is left out: its role has no
// access to kubevirt.io objects. Cozystack's Flux (cozy-fluxcd:flux) is left
// out since it installs every tenant's charts: were it a platform identity,
// any chart could forge a worker.
func DefaultPlatformIdentities() []string {
	return []string{
		"system:serviceaccount:cozy-cluster-api:capk-manager",
		"system:serviceaccount:cozy-kubevirt:kubevirt-apiserver",
		"system:serviceaccount:cozy-kubevirt:kubevirt-controller",
		"system:serviceaccount:kube-system:generic-garbage-collector",
		"system:serviceaccount:kube-system:namespace-controller",
	}
}

// DefaultSourceIdentities is guard.sourceIdentities when the config sets
// none, sorted: Cozystack's Flux, whose controllers share one account
// (source-controller and source-watcher write the sources' status), and
// on `flux install` source-controller, source-watcher and kustomize-controller,
// which applies the GitRepository of `flux bootstrap` (its own
// flux-system Kustomization impersonates no account).
func DefaultSourceIdentities() []string {
	return []string{
		"system:serviceaccount:cozy-fluxcd:flux",
		"system:serviceaccount:flux-system:kustomize-controller",
		"system:serviceaccount:flux-system:source-controller",
		"system:serviceaccount:flux-system:source-watcher",
	}
}

// newGuardConfig returns spec.guard when the config leaves it out: the
// guard on, with the default identities. An explicit value overrides each.
func newGuardConfig() GuardConfig {
	// fluxIdentities defaults to the fleet's account, which depends on
	// spec.fleet: Config.Default sets it.
	return GuardConfig{Enabled: true, HelmIdentities: DefaultHelmIdentities(), PlatformIdentities: DefaultPlatformIdentities(),
		SourceIdentities: DefaultSourceIdentities()}
}

// validate checks spec.guard, then sorts the identities and drops
// duplicates, as the policy writes them; written is [Config]'s.
func (g *GuardConfig) validate(d *decoder, written map[string]bool) {
	for _, f := range []struct {
		key, why string
		ids      Identities
	}{
		{"fluxIdentities", "Flux itself could not apply the routed releases", g.FluxIdentities},
		{"helmIdentities", "", g.HelmIdentities}, // may be empty: a platform without charts that reach other clusters
		{"platformIdentities", "the platform's controllers could not scale, repair or delete a ComputePlane's VMs", g.PlatformIdentities},
		{"sourceIdentities", "Flux could not write the fleet's sources' artifacts", g.SourceIdentities},
	} {
		field := "spec.guard." + f.key
		switch value, set := written["guard."+f.key]; {
		case set && !value:
			d.fail(field, "must be %s; leave it out for the defaults", identitiesWords)
		case len(f.ids) == 0 && f.why != "":
			d.fail(field, "must name at least one user: with none, %s", f.why)
		}
		if _, set := written["guard."+f.key]; !set {
			continue // a default: the fleet's account is checked in spec.fleet
		}
		for i, s := range f.ids {
			if s == "" {
				d.fail(field+"["+itoa(i)+"]", "must not be empty")
			} else if msg := identityProblem(s); msg != "" {
				d.fail(field+"["+itoa(i)+"]", "%q %s", clip(s), msg)
			}
		}
	}
	for _, ids := range []*Identities{&g.FluxIdentities, &g.HelmIdentities, &g.PlatformIdentities, &g.SourceIdentities} {
		slices.Sort(*ids)
		*ids = slices.Compact(*ids)
	}
}

// serviceAccountPrefix starts the user name of every service account.
const serviceAccountPrefix = "system:serviceaccount:"

// identityProblem says why s cannot be the user name of a request, or "".
// The guard compares user names only, so a group or a misspelt service
// account would silently match nobody.
func identityProblem(s string) string {
	if strings.TrimSpace(s) != s || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) }) {
		return "holds leading or trailing spaces or control characters; no user name does"
	}
	if strings.HasPrefix(s, "system:serviceaccounts:") || s == "system:serviceaccounts" || s == "system:authenticated" || s == "system:masters" {
		return "is a group, not a user name; the guard matches request.userInfo.username only (a service account is system:serviceaccount:<namespace>:<name>)"
	}
	if rest, ok := strings.CutPrefix(s, serviceAccountPrefix); ok {
		ns, name, ok := strings.Cut(rest, ":")
		if !ok || !ValidDNSLabel(ns) || !validDNSSubdomain(name) {
			return "is not a service account's user name: system:serviceaccount:<namespace>:<name>"
		}
	}
	return ""
}
