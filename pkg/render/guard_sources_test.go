package render_test

import (
	"fmt"
	"testing"

	"k8s.io/apiserver/pkg/admission"
)

// The fleet's sources are the fleet's (rule G5, issue 40): whoever writes the
// fleet's GitRepository, a generator of the wiring, an ExternalArtifact a
// unit reads (or its status: the URL and digest kustomize-controller
// fetches) or the cluster chart's generator and artifact chooses what the
// fleet's account applies. Only the fleet, Flux's source controllers and
// cluster administrators may.

// Source writers of the cases (stock Flux's accounts and Cozystack's one).
const (
	sourceController = "system:serviceaccount:flux-system:source-controller"
	sourceWatcher    = "system:serviceaccount:flux-system:source-watcher"
	fluxHelm         = "system:serviceaccount:flux-system:helm-controller"
)

func TestGuardFleetSources(t *testing.T) {
	for _, version := range []string{"1.33", "1.36"} {
		t.Run("kubernetes-"+version, func(t *testing.T) {
			spec := `{platform: {kubernetesVersion: "` + version + `"}, fleet: {sourceRef: {kind: GitRepository, name: fleet}, path: fleet, unitSource: ExternalArtifact}}`
			testGuardFleetSources(t, spec)
		})
	}
}

func testGuardFleetSources(t *testing.T, spec string) {
	out := renderGuardFleet(t, spec)
	policy, _ := guardObjects(t, out)
	g := compileGuard(t, policy)
	const says = "is a source the fleet's account applies from"

	source := func(apiVersion, kind, namespace, name, specText string) string {
		return fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: %s, namespace: %s}\nspec: %s\n", apiVersion, kind, name, namespace, specText)
	}
	withStatus := func(obj, url string) string {
		return obj + "status: {artifact: {path: x.tar.gz, url: " + url + ", revision: latest@sha256:0, digest: sha256:0, lastUpdateTime: \"2026-01-01T00:00:00Z\"}}\n"
	}
	gitRepo := func(namespace, name, url string) string {
		return source("source.toolkit.fluxcd.io/v1", "GitRepository", namespace, name, "{url: "+url+", interval: 1m, ref: {branch: main}}")
	}
	ociRepo := func(namespace, name, url string) string {
		return source("source.toolkit.fluxcd.io/v1", "OCIRepository", namespace, name, "{url: "+url+", interval: 1h, ref: {tag: v1}}")
	}
	artifact := func(namespace, name string) string {
		return source("source.toolkit.fluxcd.io/v1", "ExternalArtifact", namespace, name, "{sourceRef: {apiVersion: source.extensions.fluxcd.io/v1beta1, kind: ArtifactGenerator, name: g}}")
	}
	generator := func(namespace, name, from string) string {
		return source("source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator", namespace, name,
			"{sources: [{alias: fleet, kind: GitRepository, name: fleet, namespace: flux-system}], outputArtifacts: [{name: out, copy: [{from: '@fleet/"+from+"/**', to: '@artifact/'}]}]}")
	}

	type write struct {
		name     string
		old, new string // old "" for a create
		status   bool
	}
	fleetRepo := gitRepo("flux-system", "fleet", "https://git.example/fleet")
	nsArtifact := artifact("flux-system", "computeplane-wiring-ns-00-of-04-tenant-acme")
	platformArtifact := artifact("flux-system", "computeplane-platform")
	chartArtifact := artifact("cozy-system", "cozystack-computeplane-application-kubevirt-kubernetes")
	fleetWrites := []write{
		{name: "the fleet's GitRepository, repointed", old: fleetRepo, new: gitRepo("flux-system", "fleet", "https://evil.example/fleet")},
		{name: "the fleet's GitRepository, created", new: fleetRepo},
		{name: "the fleet's GitRepository's artifact", old: fleetRepo, new: withStatus(fleetRepo, "http://evil.example/fleet.tar.gz"), status: true},
		{name: "the wiring's generator, changed", old: generator("flux-system", "computeplane-wiring", "fleet/_flux"), new: generator("flux-system", "computeplane-wiring", "evil")},
		{name: "a group's generator, created", new: generator("flux-system", "computeplane-wiring-ns-00-of-04", "fleet/_flux/ns-00-of-04")},
		{name: "a generator of another layout's name, created", new: generator("flux-system", "computeplane-wiring-ns-07-of-16", "evil")},
		{name: "a namespace's ExternalArtifact, created", new: nsArtifact},
		{name: "a namespace's ExternalArtifact's artifact", old: nsArtifact, new: withStatus(nsArtifact, "http://evil.example/a.tar.gz"), status: true},
		{name: "the fleet's units' ExternalArtifact's artifact", old: platformArtifact, new: withStatus(platformArtifact, "http://evil.example/p.tar.gz"), status: true},
		{name: "the cluster chart's generator, changed", old: generator("cozy-system", "computeplane-application", "apps/kubernetes"), new: generator("cozy-system", "computeplane-application", "evil")},
		{name: "the cluster chart's ExternalArtifact's artifact", old: chartArtifact, new: withStatus(chartArtifact, "http://evil.example/c.tar.gz"), status: true},
		{name: "the baseline chart's OCIRepository, repointed", old: ociRepo("flux-system", "computeplane-baseline", "oci://ghcr.io/computeplane-dev/charts/computeplane-baseline"), new: ociRepo("flux-system", "computeplane-baseline", "oci://evil.example/baseline")},
	}
	request := func(w write, user string, groups []string) guardRequest {
		r := guardRequest{op: admission.Create, user: user, groups: groups, object: w.new}
		if w.old != "" {
			r.op, r.oldObject = admission.Update, w.old
		}
		if w.status {
			r.subresource = "status"
		}
		return r
	}
	for _, w := range fleetWrites {
		for _, u := range []struct {
			user   string
			groups []string
		}{
			{tenantUser, tenantGroups}, {cozystackAPI, nil}, {installer, nil}, {fluxHelm, nil}, {fluxKustomize + "x", nil},
			{"system:serviceaccount:flux-system:default", []string{"system:serviceaccounts", "system:serviceaccounts:flux-system"}},
		} {
			checkAdmission(t, g, w.name+", by "+u.user, request(w, u.user, u.groups), says)
		}
		for _, u := range []struct {
			user   string
			groups []string
		}{
			{fleetAccount, nil}, {sourceController, nil}, {sourceWatcher, nil}, {cozyFlux, nil}, {fluxKustomize, nil},
			{admin, []string{"system:masters", "system:authenticated"}},
		} {
			checkAdmission(t, g, w.name+", by "+u.user, request(w, u.user, u.groups), "")
		}
	}

	// Controls: sources that are not the fleet's, written by a tenant.
	tenantRepo := gitRepo("tenant-acme", "fleet", "https://git.example/mine")
	for _, w := range []write{
		{name: "a tenant's GitRepository named like the fleet's", new: tenantRepo},
		{name: "a tenant's GitRepository's artifact", old: tenantRepo, new: withStatus(tenantRepo, "http://git.example/mine.tar.gz"), status: true},
		{name: "a tenant's ExternalArtifact named like a unit's", new: artifact("tenant-acme", "computeplane-platform")},
		{name: "a tenant's generator", new: generator("tenant-acme", "computeplane-wiring", "mine")},
		{name: "an OCIRepository named like the fleet's GitRepository", new: ociRepo("flux-system", "fleet", "oci://ghcr.io/x/y")},
		{name: "another source in the wiring namespace", new: gitRepo("flux-system", "platform-extras", "https://git.example/extras")},
		{name: "another generator in the platform's namespace", new: generator("cozy-system", "cozystack-packages", "packages")},
	} {
		checkAdmission(t, g, w.name+", by a tenant user", request(w, tenantUser, tenantGroups), "")
	}

	// The rendered sources, applied by the fleet, pass the match condition
	// untouched; written by a tenant user, they are refused.
	rendered := 0
	for _, o := range out {
		if o.Kind != "ArtifactGenerator" && o.Kind != "OCIRepository" {
			continue
		}
		rendered++
		text := string(objectJSON(t, o))
		r := guardRequest{op: admission.Update, user: fleetAccount, object: text, oldObject: text}
		if g.toRules(t, r) {
			t.Errorf("%s %s/%s applied by the fleet: the match condition passes it to the rules", o.Kind, o.Namespace, o.Name)
		}
		checkAdmission(t, g, o.Kind+" "+o.Namespace+"/"+o.Name+" applied by the fleet", r, "")
		checkAdmission(t, g, o.Kind+" "+o.Namespace+"/"+o.Name+" created by a tenant user", guardRequest{op: admission.Create, user: tenantUser, groups: tenantGroups, object: text}, says)
	}
	if rendered == 0 {
		t.Fatal("the output holds no source")
	}
}
