package posture_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/testfs"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// fleetDir copies the CI example's inputs (three tenants: acme with a
// ComputePlane, JupyterHub and N8N routed, Postgres on the management
// plane; globex with a Postgres and no ComputePlane) to a new folder.
func fleetDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	testfs.CopyTree(t, "../../examples/ci/fleet", filepath.Join(dir, "fleet"))
	return dir
}

// edit applies edits to the files of dir: each replaces old with new in a
// file, or (old "") writes the file whole, or (new "-") removes it.
type edit struct{ file, old, new string }

func apply(t *testing.T, dir string, edits []edit) {
	t.Helper()
	for _, e := range edits {
		p := filepath.Join(dir, e.file)
		switch {
		case e.new == "-":
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		case e.old == "":
			if err := os.WriteFile(p, []byte(e.new), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), e.old) {
			t.Fatalf("%s does not hold %q", e.file, e.old)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), e.old, e.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// render renders the fleet in dir and lays it out as files.
func render(t *testing.T, dir string) (*pipeline.Result, []output.File) {
	t.Helper()
	r, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, "fleet", "config.yaml")})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	files, problems := units.Files(r.Config, r.Objects)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return r, files
}

// review commits the render of the example's fleet with the edits before,
// renders the fleet with the edits after instead, and reviews the change
// from the committed folder, in check mode and writing.
func review(t *testing.T, before, after []edit) *posture.Result {
	t.Helper()
	dir := fleetDir(t)
	apply(t, dir, before)
	_, files := render(t, dir)
	out := filepath.Join(dir, "rendered")
	if _, err := output.WriteDir(context.Background(), out, files, output.DirOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "fleet")); err != nil {
		t.Fatal(err)
	}
	testfs.CopyTree(t, "../../examples/ci/fleet", filepath.Join(dir, "fleet"))
	apply(t, dir, after)
	r, files := render(t, dir)
	c := posture.NewCollector()
	if _, err := output.WriteDir(context.Background(), out, files, output.DirOptions{Check: true, Read: c.Read}); err != nil {
		t.Fatal(err)
	}
	checked, err := posture.Review(r.Objects, c)
	if err != nil {
		t.Fatal(err)
	}
	// Writing reads the same.
	c = posture.NewCollector()
	if _, err := output.WriteDir(t.Context(), out, files, output.DirOptions{Read: c.Read, AllowPrune: true}); err != nil {
		t.Fatal(err)
	}
	written, err := posture.Review(r.Objects, c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(checked.Changes, written.Changes); diff != "" {
		t.Errorf("writing reviews otherwise than checking (-check +write):\n%s", diff)
	}
	return checked
}

const (
	config = "fleet/config.yaml"
	acme   = "fleet/apps/acme.yaml"
	globex = "fleet/apps/globex.yaml"
	tenant = "fleet/tenants/tenants.yaml"
	n8n    = "fleet/definitions/n8n.yaml"
)

func acmeChange(change posture.ChangeKind, subject, from, to string, weakens bool) posture.Change {
	return posture.Change{Tenant: "acme", Namespace: "tenant-acme", Change: change, Subject: subject, From: from, To: to, Weakens: weakens}
}

// because gives a change its cause.
func because(c posture.Change, cause string) posture.Change {
	c.Cause = cause
	return c
}

func fact(tenant string, kind posture.FactKind, subject, from, to, cause string) posture.Fact {
	return posture.Fact{Tenant: tenant, Namespace: "tenant-" + tenant, Fact: kind, Subject: subject, From: from, To: to, Cause: cause}
}

// n8nRoute is the definition change of N8N's placement.
func n8nRoute(from, to string, weakens bool) posture.Change {
	return posture.Change{Change: posture.ChangeDefinition, Subject: "N8N", From: from, To: to, Weakens: weakens, Cause: "ApplicationDefinition n8n"}
}

const n8nPlacement = "ApplicationDefinition n8n (placement)"

// The inputs that cause the changes of these cases.
const (
	byPodSecurity     = "spec.cluster.podSecurity"
	byExemption       = "spec.cluster.podSecurity and spec.cluster.values"
	byReachable       = "Postgres tenant-acme/notebooks (annotation computeplane.dev/reachable-from-computeplane)"
	byAncestorIngress = "spec.cluster.egress.allowAncestorIngress"
	byDelivery        = "spec.delivery"
	byNamespaces      = "spec.routing.namespaces"
)

var (
	reachableNotebooks = edit{acme, "  name: notebooks\n  namespace: tenant-acme\n", "  name: notebooks\n  namespace: tenant-acme\n  annotations:\n    computeplane.dev/reachable-from-computeplane: \"true\"\n"}
	podSecurity        = func(level string) edit {
		return edit{config, "  delivery: Direct\n", "  delivery: Direct\n  cluster:\n    podSecurity: " + level + "\n"}
	}
	knobs = func(groups string) edit {
		return edit{acme, "spec:\n  users: 20\n", "spec:\n  users: 20\n---\napiVersion: apps.cozystack.io/v1alpha1\nkind: ComputePlane\nmetadata:\n  name: computeplane\n  namespace: tenant-acme\nspec:\n  nodeGroups:\n" + groups}
	}
	platform             = edit{config, "  delivery: Direct\n", "  delivery: Platform\n"}
	allowAncestorIngress = edit{config, "  inputs:", "  cluster:\n    egress:\n      allowAncestorIngress: true\n  inputs:"}
	guardConfig          = func(spec string) edit {
		return edit{config, "  inputs:", "  guard:\n" + spec + "  inputs:"}
	}
	fluxUnits = edit{config, "  delivery: Direct\n", "  delivery: Direct\n  fleet:\n    sourceRef: {kind: GitRepository, name: fleet}\n    path: ./rendered\n"}
	// fluxArtifacts lays each namespace out below its wiring group
	// (_flux/ns-<g>-of-<n>/<namespace>/...), baselines included.
	editable   = edit{config, "  inputs:", "  routing:\n    editableThroughAPI: true\n  inputs:"}
	grantRules = func(verbs string) edit {
		return edit{config, "  inputs:", "  routing:\n    namespaces: PerApp\n    grants:\n    - definition: jupyterhub\n      clusterRole: jupyterhub-cluster\n      rules: [{apiGroups: [scheduling.k8s.io], resources: [priorityclasses], verbs: [" + verbs + "]}]\n  inputs:"}
	}
	noN8NApp      = edit{acme, "---\napiVersion: apps.cozystack.io/v1alpha1\nkind: N8N\nmetadata:\n  name: automations\n  namespace: tenant-acme\nspec: {}\n", ""}
	jupyterGrant  = edit{config, "  inputs:", "  routing:\n    namespaces: PerApp\n    grants:\n    - {definition: jupyterhub, clusterRole: view}\n  inputs:"}
	fluxArtifacts = edit{config, "  delivery: Direct\n", "  delivery: Direct\n  fleet:\n    sourceRef: {kind: GitRepository, name: fleet}\n    path: ./rendered\n    unitSource: ExternalArtifact\n"}
)

func TestReview(t *testing.T) {
	cases := []struct {
		name          string
		before, after []edit
		want          []posture.Change
		facts         []posture.Fact
	}{{
		name: "nothing changes",
	}, {
		name:  "pod security drops to baseline: the exemption of ingress-nginx goes with it",
		after: []edit{podSecurity("baseline")},
		want: []posture.Change{
			because(acmeChange(posture.ChangePodSecurity, "tenant-acme", "restricted", "baseline", true), byPodSecurity),
			because(acmeChange(posture.ChangeExemption, "cozy-ingress-nginx", "present", "absent", false), byExemption),
		},
	}, {
		name:   "pod security rises to restricted: ingress-nginx becomes exempt, which weakens that namespace",
		before: []edit{podSecurity("baseline")},
		want: []posture.Change{
			because(acmeChange(posture.ChangeExemption, "cozy-ingress-nginx", "absent", "present", true), byExemption),
			because(acmeChange(posture.ChangePodSecurity, "tenant-acme", "baseline", "restricted", false), byPodSecurity),
		},
	}, {
		name:  "privileged: no admission ConfigMap, so nothing is enforced",
		after: []edit{podSecurity("privileged")},
		want:  []posture.Change{because(acmeChange(posture.ChangePodSecurity, "tenant-acme", "restricted", "privileged", true), byPodSecurity)},
	}, {
		name:  "an app becomes reachable",
		after: []edit{reachableNotebooks},
		want:  []posture.Change{because(acmeChange(posture.ChangeExposure, "Postgres/notebooks", "denied", "reachable", true), byReachable)},
	}, {
		name:   "an app is no longer reachable",
		before: []edit{reachableNotebooks},
		want:   []posture.Change{because(acmeChange(posture.ChangeExposure, "Postgres/notebooks", "reachable", "denied", false), byReachable)},
	}, {
		name:  "a kind leaves the ComputePlane",
		after: []edit{{n8n, "  placement: ComputePlane\n", "  placement: ManagementPlane\n"}},
		want: []posture.Change{
			n8nRoute("ComputePlane", "ManagementPlane", true),
			because(acmeChange(posture.ChangePlacement, "N8N/automations", "ComputePlane", "ManagementPlane", true), n8nPlacement),
		},
		facts: []posture.Fact{fact("acme", posture.FactMoved, "N8N/automations", "ComputePlane", "ManagementPlane", n8nPlacement)},
	}, {
		name:   "a kind moves onto the ComputePlane: it leaves the dashboard",
		before: []edit{{n8n, "  placement: ComputePlane\n", "  placement: ManagementPlane\n"}},
		want: []posture.Change{
			n8nRoute("ManagementPlane", "ComputePlane", false),
			because(acmeChange(posture.ChangePlacement, "N8N/automations", "ManagementPlane", "ComputePlane", false), n8nPlacement),
		},
		facts: []posture.Fact{
			fact("acme", posture.FactDashboardLost, "N8N/automations", "listed", "unlisted", n8nPlacement),
			fact("acme", posture.FactMoved, "N8N/automations", "ManagementPlane", "ComputePlane", n8nPlacement),
		},
	}, {
		name:   "node groups added, changed, removed",
		before: []edit{knobs("    md0: {instanceType: u1.medium, minReplicas: 1, maxReplicas: 3, diskSize: 20Gi, roles: [ingress-nginx]}\n    old: {instanceType: u1.small, minReplicas: 0, maxReplicas: 1, diskSize: 20Gi}\n")},
		after:  []edit{knobs("    md0: {instanceType: u1.large, minReplicas: 2, maxReplicas: 5, diskSize: 20Gi, roles: [ingress-nginx]}\n    gpu: {instanceType: u1.xlarge, minReplicas: 0, maxReplicas: 2, diskSize: 20Gi, gpus: [{name: nvidia.com/AD102GL_L40S}]}\n")},
		want: []posture.Change{
			acmeChange(posture.ChangeNodeGroups, "gpu", "absent", "u1.xlarge 0-2 gpus=1", false),
			acmeChange(posture.ChangeNodeGroups, "md0", "u1.medium 1-3 gpus=0", "u1.large 2-5 gpus=0", false),
			acmeChange(posture.ChangeNodeGroups, "old", "u1.small 0-1 gpus=0", "absent", false),
		},
	}, {
		name: "a ComputePlane is disabled (its routed apps removed with it)",
		after: []edit{
			{tenant, "  name: acme\n  namespace: tenant-root\nspec:\n  computeplane: true\n", "  name: acme\n  namespace: tenant-root\nspec:\n  computeplane: false\n"},
			{acme, "", "apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: notebooks\n  namespace: tenant-acme\nspec:\n  replicas: 2\n"},
		},
		want: []posture.Change{because(acmeChange(posture.ChangeComputePlane, "tenant-acme", "enabled", "disabled", true), "Tenant acme (spec.computeplane)")},
		facts: []posture.Fact{
			fact("acme", posture.FactClusterKept, "tenant-acme", "present", "absent", "Tenant acme (spec.computeplane)"),
			fact("acme", posture.FactRemoved, "JupyterHub/research", "ComputePlane", "absent", "JupyterHub tenant-acme/research"),
			fact("acme", posture.FactRemoved, "N8N/automations", "ComputePlane", "absent", "N8N tenant-acme/automations"),
		},
	}, {
		name:  "a ComputePlane is enabled",
		after: []edit{{tenant, "  name: globex\n  namespace: tenant-root\nspec:\n  computeplane: false\n", "  name: globex\n  namespace: tenant-root\nspec:\n  computeplane: true\n"}},
		want:  []posture.Change{{Tenant: "globex", Namespace: "tenant-globex", Change: posture.ChangeComputePlane, Subject: "tenant-globex", From: "disabled", To: "enabled", Cause: "Tenant globex (spec.computeplane)"}},
	}, {
		name:  "a tenant is removed, another added",
		after: []edit{{globex, "", strings.ReplaceAll("apiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata:\n  name: orders\n  namespace: tenant-initech\nspec: {}\n", "\t", "")}, {tenant, "  name: globex\n", "  name: initech\n"}},
		want: []posture.Change{
			{Tenant: "globex", Namespace: "tenant-globex", Change: posture.ChangeTenant, Subject: "tenant-globex", From: "present", To: "absent"},
			{Tenant: "initech", Namespace: "tenant-initech", Change: posture.ChangeTenant, Subject: "tenant-initech", From: "absent", To: "present"},
		},
		facts: []posture.Fact{
			fact("globex", posture.FactRemoved, "Postgres/orders", "ManagementPlane", "absent", "Tenant globex"),
			fact("initech", posture.FactAdded, "Postgres/orders", "absent", "ManagementPlane", "Tenant initech"),
		},
	}, {
		name:  "delivery Platform: the cluster is the platform's, its ComputePlane runs without Pod Security, its credentials readable by the tenant",
		after: []edit{platform},
		want: []posture.Change{
			acmeChange(posture.ChangeCredentials, "tenant-acme", posture.CredentialsWithheld, posture.CredentialsReadable, true),
			because(acmeChange(posture.ChangePodSecurity, "tenant-acme", "restricted", "none", true), byDelivery),
		},
		// The Direct cluster is never pruned: until someone deletes it, it
		// runs beside the platform's.
		facts: []posture.Fact{fact("acme", posture.FactClusterKept, "tenant-acme", "present", "absent", "spec.delivery")},
	}, {
		name:   "delivery Platform: an app becomes reachable",
		before: []edit{platform},
		after:  []edit{platform, reachableNotebooks},
		want:   []posture.Change{because(acmeChange(posture.ChangeExposure, "Postgres/notebooks", "denied", "reachable", true), byReachable)},
	}, {
		name:  "ancestor ingress allowed",
		after: []edit{allowAncestorIngress},
		want:  []posture.Change{because(acmeChange(posture.ChangeEgress, "tenant-acme", "denied", "allowed", true), byAncestorIngress)},
	}, {
		name:   "ancestor ingress denied again, under Platform",
		before: []edit{platform, allowAncestorIngress},
		after:  []edit{platform},
		want:   []posture.Change{because(acmeChange(posture.ChangeEgress, "tenant-acme", "allowed", "denied", false), byAncestorIngress)},
	}, {
		name:  "the guard is turned off",
		after: []edit{guardConfig("    enabled: false\n")},
		want:  []posture.Change{{Change: posture.ChangeGuard, Subject: "computeplane-guard", From: "enabled", To: "disabled", Weakens: true, Cause: "spec.guard.enabled"}},
	}, {
		name:  "a Flux identity is added to the guard",
		after: []edit{guardConfig("    fluxIdentities: [system:serviceaccount:flux-system:computeplane-fleet, system:serviceaccount:ci:deployer]\n")},
		want:  []posture.Change{{Change: posture.ChangeGuard, Subject: "system:serviceaccount:ci:deployer", From: "absent", To: "present", Weakens: true, Role: wire.GuardFluxIdentitiesVariable, Cause: "spec.guard.fluxIdentities"}},
	}, {
		name:   "the guard is turned on again",
		before: []edit{guardConfig("    enabled: false\n")},
		want:   []posture.Change{{Change: posture.ChangeGuard, Subject: "computeplane-guard", From: "disabled", To: "enabled", Cause: "spec.guard.enabled"}},
	}, {
		name:   "the Flux unit layout (spec.fleet) reads the same",
		before: []edit{fluxUnits},
		after:  []edit{fluxUnits, podSecurity("baseline"), reachableNotebooks},
		want: []posture.Change{
			because(acmeChange(posture.ChangeExposure, "Postgres/notebooks", "denied", "reachable", true), byReachable),
			because(acmeChange(posture.ChangePodSecurity, "tenant-acme", "restricted", "baseline", true), byPodSecurity),
			because(acmeChange(posture.ChangeExemption, "cozy-ingress-nginx", "present", "absent", false), byExemption),
		},
	}, {
		name:   "a source per namespace (spec.fleet.unitSource: ExternalArtifact) reads the same",
		before: []edit{fluxArtifacts},
		after:  []edit{fluxArtifacts, podSecurity("baseline"), reachableNotebooks},
		want: []posture.Change{
			because(acmeChange(posture.ChangeExposure, "Postgres/notebooks", "denied", "reachable", true), byReachable),
			because(acmeChange(posture.ChangePodSecurity, "tenant-acme", "restricted", "baseline", true), byPodSecurity),
			because(acmeChange(posture.ChangeExemption, "cozy-ingress-nginx", "present", "absent", false), byExemption),
		},
	}, {
		name:   "switching to a source per namespace changes no posture",
		before: []edit{fluxUnits},
		after:  []edit{fluxArtifacts},
	}, {
		// The committed baselines lie below the wiring groups: their grant
		// must count for tenant-acme, or JupyterHub's rights would change.
		name:   "switching back from a source per namespace changes no posture, grants included",
		before: []edit{fluxArtifacts, jupyterGrant},
		after:  []edit{fluxUnits, jupyterGrant},
	}, {
		name:  "routed releases become editable through Cozystack's API",
		after: []edit{editable},
		want:  []posture.Change{because(acmeChange(posture.ChangeRouting, "tenant-acme", "fleet", "api", true), "spec.routing.editableThroughAPI")},
	}, {
		name:   "routed releases editable only through the fleet again: they leave the dashboard",
		before: []edit{editable},
		want:   []posture.Change{because(acmeChange(posture.ChangeRouting, "tenant-acme", "api", "fleet", false), "spec.routing.editableThroughAPI")},
		facts: []posture.Fact{
			fact("acme", posture.FactDashboardLost, "JupyterHub/research", "listed", "unlisted", "spec.routing.editableThroughAPI"),
			fact("acme", posture.FactDashboardLost, "N8N/automations", "listed", "unlisted", "spec.routing.editableThroughAPI"),
		},
	}, {
		// The flat folder carries the baseline as a HelmRelease's values.
		name:  "a grant, read from the baseline release",
		after: []edit{jupyterGrant},
		want: []posture.Change{
			because(acmeChange(posture.ChangeRights, "JupyterHub/research", "namespace-admin", "namespace-admin + ClusterRole view", true), "spec.routing.grants"),
			because(acmeChange(posture.ChangeNamespaces, "tenant-acme", "Shared", "PerApp", false), byNamespaces),
		},
	}, {
		name:   "a granted ClusterRole allows more",
		before: []edit{grantRules("get")},
		after:  []edit{grantRules("get, create")},
		want: []posture.Change{because(acmeChange(posture.ChangeRouting, "ClusterRole jupyterhub-cluster",
			"scheduling.k8s.io/priorityclasses:get", "scheduling.k8s.io/priorityclasses:create scheduling.k8s.io/priorityclasses:get", true), "spec.routing.grants")},
	}, {
		name:   "a granted ClusterRole allows less, under the Flux unit layout",
		before: []edit{fluxUnits, grantRules("get, create")},
		after:  []edit{fluxUnits, grantRules("get")},
		want: []posture.Change{because(acmeChange(posture.ChangeRouting, "ClusterRole jupyterhub-cluster",
			"scheduling.k8s.io/priorityclasses:create scheduling.k8s.io/priorityclasses:get", "scheduling.k8s.io/priorityclasses:get", false), "spec.routing.grants")},
	}, {
		name:   "a definition leaves the ComputePlane with no app of its kind",
		before: []edit{noN8NApp},
		after:  []edit{noN8NApp, {n8n, "  placement: ComputePlane\n", "  placement: ManagementPlane\n"}},
		want:   []posture.Change{n8nRoute("ComputePlane", "ManagementPlane", true)},
	}, {
		name:  "a routed definition's chart changes",
		after: []edit{{n8n, "      name: cozystack-n8n-application-default-n8n\n", "      name: n8n-fork\n"}},
		want: []posture.Change{{Change: posture.ChangeDefinition, Subject: "N8N", Weakens: true, Cause: "ApplicationDefinition n8n",
			From: "ExternalArtifact cozy-system/cozystack-n8n-application-default-n8n", To: "ExternalArtifact cozy-system/n8n-fork"}},
	}, {
		name:   "several at once, weakening first",
		before: []edit{reachableNotebooks},
		after: []edit{podSecurity("privileged"), {n8n, "  placement: ComputePlane\n", "  placement: ManagementPlane\n"},
			{tenant, "  name: globex\n  namespace: tenant-root\nspec:\n  computeplane: false\n", "  name: globex\n  namespace: tenant-root\nspec:\n  computeplane: true\n"}},
		want: []posture.Change{
			n8nRoute("ComputePlane", "ManagementPlane", true),
			because(acmeChange(posture.ChangePlacement, "N8N/automations", "ComputePlane", "ManagementPlane", true), n8nPlacement),
			because(acmeChange(posture.ChangePodSecurity, "tenant-acme", "restricted", "privileged", true), byPodSecurity),
			because(acmeChange(posture.ChangeExposure, "Postgres/notebooks", "reachable", "denied", false), byReachable),
			{Tenant: "globex", Namespace: "tenant-globex", Change: posture.ChangeComputePlane, Subject: "tenant-globex", From: "disabled", To: "enabled", Cause: "Tenant globex (spec.computeplane)"},
		},
		facts: []posture.Fact{fact("acme", posture.FactMoved, "N8N/automations", "ComputePlane", "ManagementPlane", n8nPlacement)},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := review(t, tc.before, tc.after)
			if diff := cmp.Diff(tc.want, res.Changes); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.facts, res.Facts); diff != "" {
				t.Errorf("lifecycle facts (-want +got):\n%s", diff)
			}
			if len(res.Problems) > 0 {
				t.Errorf("problems: %v", res.Problems)
			}
		})
	}
}

// TestGuardBreakGlassStated: the review of a guard turned on says what
// stays open to cluster administrators (docs/guard.md, "Break-glass"), so
// that the reviewer of the change that adds the guard reads it.
func TestGuardBreakGlassStated(t *testing.T) {
	on := posture.Change{Change: posture.ChangeGuard, Subject: wire.GuardName, From: posture.Disabled, To: posture.Enabled}
	if why := posture.Why(on); !strings.Contains(why, "break-glass") || !strings.Contains(why, "system:masters") {
		t.Errorf("Why(the guard turned on) = %q; want it to state the break-glass of system:masters", why)
	}
}
