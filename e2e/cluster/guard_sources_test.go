package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// The fleet's sources are the fleet's (rule G5, issue 40), on the real API
// server: a generator or an ExternalArtifact of the wiring's names in the
// fleet's namespace, or its artifact (status), and the cluster chart's
// generator in cozy-system, written by the tenant's user or cozystack-api
// (each granted the kinds there, so that what refuses them is the guard),
// are refused; Cozystack's Flux (source-controller and source-watcher run
// as it), an administrator, and the tenant's own sources are admitted.
func (e *env) sourceGuardCases() []guardCase {
	fleetNS := e.mode.fleetNamespace
	generator := func(ns, name, from string) map[string]any {
		return map[string]any{"spec": map[string]any{
			"sources": []any{map[string]any{"alias": "fleet", "kind": "GitRepository", "name": "fleet", "namespace": fleetNS}},
			"artifacts": []any{map[string]any{"name": name + "-out",
				"copy": []any{map[string]any{"from": "@fleet/" + from + "/**", "to": "@artifact/"}}}},
		}}
	}
	artifactSpec := map[string]any{"spec": map[string]any{"sourceRef": map[string]any{
		"apiVersion": "source.extensions.fluxcd.io/v1beta1", "kind": "ArtifactGenerator", "name": "computeplane-wiring", "namespace": fleetNS}}}
	gen := func(ns, name, from string) *unstructured.Unstructured {
		return obj("source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator", ns, name, generator(ns, name, from))
	}
	artifact := func(ns, name string) *unstructured.Unstructured {
		return obj(sourceV1, "ExternalArtifact", ns, name, artifactSpec)
	}
	// An artifact's status as source-watcher writes it, pointing elsewhere.
	withArtifact := func(o *unstructured.Unstructured, url string) *unstructured.Unstructured {
		art := harness.Artifact{Path: "x.tar.gz", URL: url, Revision: "latest@sha256:0", Digest: "sha256:0", Size: 1}
		st := obj(o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName(), map[string]any{"status": art.Status(o)})
		return st
	}
	wiringGen := gen(fleetNS, "computeplane-wiring-ns-99-of-99", "fleet/_flux/ns-99-of-99")
	nsArtifact := artifact(fleetNS, "computeplane-wiring-ns-99-of-99-tenant-acme")
	chartGen := gen(cozySystem, "computeplane-application", "apps/kubernetes")
	return []guardCase{
		{name: "G5/a generator of the wiring's, tenant", as: tenantUser, obj: wiringGen, refused: true, says: sayG5Sources},
		{name: "G5/a generator of the wiring's, cozystack-api", as: cozystackAPI, obj: wiringGen, refused: true, says: sayG5Sources},
		{name: "G5/a namespace's ExternalArtifact, tenant", as: tenantUser, obj: nsArtifact, refused: true, says: sayG5Sources},
		{name: "G5/the cluster chart's generator, cozystack-api", as: cozystackAPI, obj: chartGen, refused: true, says: sayG5Sources},
		{name: "G5/a generator of the wiring's, Cozystack's Flux", as: cozystackFluxSA, obj: wiringGen},
		{name: "G5/a namespace's ExternalArtifact, an administrator", as: asAdmin, obj: nsArtifact},
		// Made for real by an administrator, then its artifact rewritten.
		{name: "G5/a namespace's ExternalArtifact, made by an administrator", as: asAdmin, op: "create", obj: nsArtifact},
		{name: "G5/its artifact, tenant", as: tenantUser, op: "status", obj: withArtifact(nsArtifact, "http://evil.example/a.tar.gz"), refused: true, says: sayG5Sources},
		{name: "G5/its artifact, cozystack-api", as: cozystackAPI, op: "status", obj: withArtifact(nsArtifact, "http://evil.example/a.tar.gz"), refused: true, says: sayG5Sources},
		{name: "G5/its artifact, Cozystack's Flux", as: cozystackFluxSA, op: "status", obj: withArtifact(nsArtifact, "http://127.0.0.1/a.tar.gz")},
		// The tenant's own sources.
		{name: "G5/the tenant's own generator", as: tenantUser, obj: gen(guardNS, "computeplane-wiring", "mine")},
		{name: "G5/the tenant's own ExternalArtifact", as: tenantUser, obj: artifact(guardNS, "computeplane-platform")},
		{name: "G5/another generator in the fleet's namespace, tenant", as: tenantUser, obj: gen(fleetNS, "extras", "extras")},
	}
}
