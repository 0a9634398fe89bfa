package cluster

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// Identities the guard is tried with, by impersonation.
var (
	tenantUser   = "alice"
	tenantGroups = []string{"tenant-acme-super-admin", "system:authenticated"}
	cozystackAPI = harness.ServiceAccount("cozy-system", "cozystack-api")
	capkManager  = harness.ServiceAccount("cozy-cluster-api", "capk-manager")
)

// testGuard: the management-plane guard the function renders refuses
// forged objects from other identities and admits the rendered objects from
// Flux's, evaluated by the real API server.
func (e *env) testGuard(t *testing.T) {
	objs := e.render(t, fleetDir(t, "direct"))
	var guard []*unstructured.Unstructured
	for _, o := range objs {
		if strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
			guard = append(guard, o)
		}
	}
	if len(guard) == 0 {
		t.Skip("the function renders no management-plane guard (ValidatingAdmissionPolicy computeplane-guard) yet")
	}
	const ns = "tenant-acme"
	e.namespaces(tenantNamespaces(objs)...)
	if err := harness.ApplyCRDs(e.ctx, e.admin, "testdata/crds/virtualmachines.kubevirt.io.yaml"); err != nil {
		t.Fatal(err)
	}
	e.applyAll(t, e.kc, guard, false)
	// RBAC lets the tenant's super-admin and cozystack-api write these
	// kinds in the tenant namespace (as Cozystack's roles do), so that what
	// refuses them below is the guard.
	role := obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "e2e-tenant-writer", map[string]any{
		"rules": []any{map[string]any{
			"apiGroups": []any{"helm.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io", "kubevirt.io"},
			"resources": []any{"helmreleases", "kustomizations", "virtualmachines"},
			"verbs":     []any{"*"},
		}},
	})
	binding := obj("rbac.authorization.k8s.io/v1", "RoleBinding", ns, "e2e-tenant-writer", map[string]any{
		"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "e2e-tenant-writer"},
		"subjects": []any{
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": tenantUser},
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": cozystackAPI},
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": capkManager},
		},
	})
	e.applyAll(t, e.admin, []*unstructured.Unstructured{role, binding}, false)

	as := map[string]*harness.Client{
		tenantUser:            harness.MustClient(t, e.mgmt, tenantUser, e.mgmt.Impersonating(tenantUser, tenantGroups...)),
		cozystackAPI:          harness.MustClient(t, e.mgmt, cozystackAPI, e.mgmt.Impersonating(cozystackAPI, "system:serviceaccounts", "system:serviceaccounts:cozy-system", "system:authenticated")),
		capkManager:           harness.MustClient(t, e.mgmt, capkManager, e.mgmt.Impersonating(capkManager, "system:serviceaccounts", "system:serviceaccounts:cozy-cluster-api", "system:authenticated")),
		kustomizeControllerSA: e.kc,
		cozystackFluxSA:       harness.MustClient(t, e.mgmt, cozystackFluxSA, e.mgmt.Config(cozystackFluxSA)),
	}
	// The policy takes a moment to reach the API server's admission chain.
	forged := obj(helmV2, "HelmRelease", ns, "jupyterhub-forged", map[string]any{
		"metadata": map[string]any{"name": "jupyterhub-forged", "namespace": ns,
			"labels": map[string]any{"apps.cozystack.io/application.kind": "JupyterHub"}},
		"spec": map[string]any{"interval": "5m",
			"chartRef": map[string]any{"kind": "ExternalArtifact", "name": "cozystack-jupyterhub-application-default-jupyterhub", "namespace": cozySystem}},
	})
	err := harness.Poll(e.ctx, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		_, _, err := as[cozystackAPI].Apply(e.ctx, forged, harness.ApplyOptions{DryRun: true})
		if err == nil {
			return false, "admitted"
		}
		return strings.Contains(err.Error(), "computeplane-guard"), err.Error()
	})
	if err != nil {
		t.Fatalf("the guard did not start refusing: %v", err)
	}

	denied := func(who string, o *unstructured.Unstructured, words ...string) {
		t.Helper()
		_, _, err := as[who].Apply(e.ctx, o, harness.ApplyOptions{DryRun: true})
		if err == nil {
			t.Errorf("%s as %s: admitted, want refused by computeplane-guard", harness.Describe(o), who)
			return
		}
		msg := err.Error()
		if !strings.Contains(msg, "computeplane-guard") {
			t.Errorf("%s as %s: refused, but not by computeplane-guard: %v", harness.Describe(o), who, err)
			return
		}
		for _, w := range words {
			if !strings.Contains(msg, w) {
				t.Errorf("%s as %s: the refusal does not say %q: %v", harness.Describe(o), who, w, err)
			}
		}
	}
	admitted := func(who string, o *unstructured.Unstructured) {
		t.Helper()
		if _, _, err := as[who].Apply(e.ctx, o, harness.ApplyOptions{DryRun: true}); err != nil {
			t.Errorf("%s as %s: refused: %v", harness.Describe(o), who, err)
		}
	}

	// G1: an app of a ComputePlane kind without the route, whoever asks.
	for _, who := range []string{cozystackAPI, tenantUser, kustomizeControllerSA} {
		denied(who, forged, "JupyterHub", "ComputePlane")
	}
	// ... while a management-plane kind is the API's to make.
	pg := forged.DeepCopy()
	pg.SetName("postgres-forged")
	pg.SetLabels(map[string]string{"apps.cozystack.io/application.kind": "Postgres"})
	admitted(cozystackAPI, pg)

	// G2: the rendered releases are Flux's to apply, nobody else's.
	var routedHR, managedHR *unstructured.Unstructured
	for _, hr := range ofKind(objs, "HelmRelease") {
		switch {
		case isCluster(hr):
		case routed(hr) && routedHR == nil:
			routedHR = hr
		case !routed(hr) && managedHR == nil && hr.GetNamespace() == ns:
			managedHR = hr
		}
	}
	for _, hr := range ofKind(objs, "HelmRelease") {
		admitted(kustomizeControllerSA, hr)
	}
	// Created under another name: an earlier subtest applied the rendered
	// one, and re-applying it unchanged changes nothing the guard judges.
	forgedRoute := routedHR.DeepCopy()
	forgedRoute.SetName(routedHR.GetName() + "-copy")
	for _, who := range []string{tenantUser, cozystackAPI, cozystackFluxSA} {
		denied(who, forgedRoute, "kubeConfig")
	}
	reroute := managedHR.DeepCopy()
	unstructured.SetNestedMap(reroute.Object, map[string]any{"secretRef": map[string]any{
		"name": "computeplane-admin-kubeconfig", "key": "super-admin.svc"}}, "spec", "kubeConfig")
	denied(tenantUser, reroute, "kubeConfig")
	ks := obj(kustomizeV1, "Kustomization", ns, "reach-the-computeplane", map[string]any{
		"spec": map[string]any{"interval": "10m", "path": "./", "prune": false,
			"sourceRef":  map[string]any{"kind": "GitRepository", "name": "fleet", "namespace": harness.FluxNamespace},
			"kubeConfig": map[string]any{"secretRef": map[string]any{"name": "computeplane-admin-kubeconfig", "key": "value"}}},
	})
	denied(tenantUser, ks, "kubeConfig")
	denied(cozystackAPI, ks, "kubeConfig")
	admitted(kustomizeControllerSA, ks)
	// The cluster chart's own addons, as Cozystack's helm-controller makes
	// them (its origin labels), and not without them or by anyone else.
	addon := obj(helmV2, "HelmRelease", ns, "computeplane-coredns", map[string]any{
		"metadata": map[string]any{"name": "computeplane-coredns", "namespace": ns, "labels": map[string]any{
			"helm.toolkit.fluxcd.io/name": "computeplane", "helm.toolkit.fluxcd.io/namespace": ns}},
		"spec": map[string]any{"interval": "5m", "releaseName": "coredns", "targetNamespace": "kube-system",
			"chartRef":   map[string]any{"kind": "ExternalArtifact", "name": ciliumArtifact, "namespace": cozySystem},
			"kubeConfig": map[string]any{"secretRef": map[string]any{"name": "computeplane-admin-kubeconfig", "key": "super-admin.svc"}}},
	})
	admitted(cozystackFluxSA, addon)
	denied(tenantUser, addon, "kubeConfig")
	unlabelled := addon.DeepCopy()
	unlabelled.SetLabels(nil)
	denied(cozystackFluxSA, unlabelled, "kubeConfig")

	// G3: the ComputePlane's worker VMs are the platform's.
	vm := obj("kubevirt.io/v1", "VirtualMachine", ns, "computeplane-md0-abcde", map[string]any{
		"metadata": map[string]any{"name": "computeplane-md0-abcde", "namespace": ns,
			"labels": map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane"}},
		"spec": map[string]any{"runStrategy": "Always"},
	})
	denied(tenantUser, vm, "VirtualMachine")
	if _, _, err := as[capkManager].Apply(e.ctx, vm, harness.ApplyOptions{}); err != nil {
		t.Fatalf("CAPK cannot create a worker VM: %v", err)
	}
	opened := vm.DeepCopy()
	opened.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "computeplane", "policy.cozystack.io/allow-to-apiserver": "true"})
	denied(tenantUser, opened, "VirtualMachine")
	denied(cozystackAPI, opened, "VirtualMachine")
	relabelled := vm.DeepCopy()
	relabelled.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "elsewhere"})
	denied(capkManager, relabelled, "cluster.x-k8s.io/cluster-name")
	if err := as[tenantUser].Delete(e.ctx, "kubevirt.io/v1", "VirtualMachine", ns, vm.GetName()); err == nil || !strings.Contains(err.Error(), "computeplane-guard") {
		t.Errorf("the tenant deleting a worker VM: %v, want refused by computeplane-guard", err)
	}
	if err := as[capkManager].Delete(e.ctx, "kubevirt.io/v1", "VirtualMachine", ns, vm.GetName()); err != nil {
		t.Errorf("CAPK deleting a worker VM: %v", err)
	}
	other := vm.DeepCopy()
	other.SetName("kubernetes-dev-md0-xyz")
	other.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "kubernetes-dev"})
	admitted(tenantUser, other)
}
