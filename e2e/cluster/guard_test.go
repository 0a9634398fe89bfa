package cluster

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// Identities the guard is tried with, by impersonation (the fleet's own
// account and the mode's kustomize-controller are the env's).
var (
	tenantUser   = "alice"
	tenantGroups = []string{"tenant-acme-super-admin", "system:authenticated"}
	cozystackAPI = harness.ServiceAccount("cozy-system", "cozystack-api")
	capkManager  = harness.ServiceAccount("cozy-cluster-api", "capk-manager")
	// replicaSets is kube-controller-manager's replicaset controller: it
	// creates the pods of whatever Deployment a tenant writes.
	replicaSets = harness.ServiceAccount("kube-system", "replicaset-controller")
	installer   = harness.ServiceAccount(guardNS, installerAccount)
	// virtController is KubeVirt's virt-controller, a platform identity: it
	// makes the VMIs of VMs, the VMs of pools and restores.
	virtController = harness.ServiceAccount("cozy-kubevirt", "kubevirt-controller")
)

const (
	guardNS          = "tenant-acme"
	installerAccount = "computeplane-installer"
	guardPolicy      = "computeplane-guard"
	// The identities of a guard case that the env decides.
	asFleet     = "the fleet"
	asKustomize = "kustomize-controller"
	asAdmin     = "system:masters"
)

// The charts of testdata/definitions.yaml, as the guard compares them.
var (
	jupyterhubChart = map[string]any{"kind": "ExternalArtifact", "name": "cozystack-jupyterhub-application-default-jupyterhub", "namespace": cozySystem}
	postgresChart   = map[string]any{"kind": "ExternalArtifact", "name": "cozystack-postgres-application-default-postgres", "namespace": cozySystem}
)

// guardCase is one request to the management API server and what the
// guard must answer.
type guardCase struct {
	name string
	as   string
	// op is how obj is sent: "" is a dry-run server-side apply (a CREATE,
	// or an UPDATE of an object that exists), "status" the same of its
	// status subresource, "create" applies it for
	// real, "delete" deletes it, "unfinalize" removes its finalizers (a
	// merge patch), "token" asks a token of the ServiceAccount obj
	// (dry-run).
	op  string
	obj *unstructured.Unstructured
	// refused: computeplane-guard must refuse, saying these words too;
	// otherwise the request must be admitted.
	refused bool
	says    []string
}

// What each rule's refusal says (its messageExpression, in part).
var (
	sayG1            = []string{"on the tenant's ComputePlane"}
	sayG2            = []string{"may set or change spec.kubeConfig"}
	sayG2Installer   = []string{"installs the tenant's ComputePlane, and what it makes must reach that cluster"}
	sayG3Credentials = []string{"would hand its guest a credential of the tenant's ComputePlane"}
	sayG3Copies      = []string{"copies, restores or clones a worker or a disk of the tenant's ComputePlane"}
	sayG3Owner       = []string{"is a worker of the tenant's ComputePlane"}
	sayG3Label       = []string{"cannot be added, changed or removed"}
	sayG3Disks       = []string{"a worker's disks hold"}
	sayG3Patches     = []string{"carries a JSON patch the guard cannot read"}
	sayG5Sources     = []string{"is a source the fleet's account applies from"}
	sayG4Account     = []string{"spec.serviceAccountName"}
	sayG4Credentials = []string{"no token of it is issued"}
	sayG4Binding     = []string{"installer's account or role"}
)

// testGuard: the management-plane guard the function renders, applied by
// the fleet's account and evaluated by the real API server, refuses every
// attack of issue 18 (and more of the same kinds) and admits what the
// fleet, the cluster's installer, Cozystack's Flux and the platform really
// send.
func (e *env) testGuard(t *testing.T) {
	objs := e.render(t, e.fleetDir(t, "direct"))
	var guard []*unstructured.Unstructured
	for _, o := range objs {
		if strings.HasPrefix(o.GetKind(), "ValidatingAdmissionPolicy") {
			guard = append(guard, o)
		}
	}
	if len(guard) == 0 {
		t.Skip("the function renders no management-plane guard (ValidatingAdmissionPolicy computeplane-guard) yet")
	}
	e.namespaces(tenantNamespaces(objs)...)
	if err := harness.ApplyCRDs(e.ctx, e.admin, guardCRDs...); err != nil {
		t.Fatal(err)
	}
	// The fleet applies the render (the guard first): its account, the
	// installer's account and RBAC, the releases.
	e.bootstrapFleet(t, objs)
	e.applyGuardFirst(t, objs)
	e.grantAttackers(t)
	as := e.guardClients(t)

	// The policy takes a moment to reach the API server's admission chain:
	// wait until a refusal that only this render's guard makes.
	probe := pwnRelease(guardNS, "guard-probe")
	err := harness.Poll(e.ctx, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		_, _, err := as[cozystackFluxSA].Apply(e.ctx, probe, harness.ApplyOptions{DryRun: true})
		if err == nil {
			return false, "admitted"
		}
		return strings.Contains(err.Error(), guardPolicy), err.Error()
	})
	if err != nil {
		t.Fatalf("the guard did not start refusing: %v", err)
	}
	e.waitMutatingPolicy(t, objs)

	// Every object of the render, from the fleet: the fleet's own requests
	// pass, RBAC and guard.
	for _, o := range objs {
		if _, _, err := e.fleet.Apply(e.ctx, o, harness.ApplyOptions{DryRun: true}); err != nil {
			t.Errorf("the fleet's own %s: %v", harness.Describe(o), err)
		}
	}

	for _, c := range e.guardCases(t, objs) {
		t.Run(c.name, func(t *testing.T) {
			who, ok := as[c.as]
			if !ok {
				t.Fatalf("no client for %q", c.as)
			}
			var err error
			switch c.op {
			case "":
				_, _, err = who.Apply(e.ctx, c.obj, harness.ApplyOptions{DryRun: true})
			case "create":
				_, _, err = who.Apply(e.ctx, c.obj, harness.ApplyOptions{})
			case "delete":
				err = who.Delete(e.ctx, c.obj.GetAPIVersion(), c.obj.GetKind(), c.obj.GetNamespace(), c.obj.GetName())
			case "unfinalize":
				_, err = who.MergePatch(e.ctx, c.obj.GetAPIVersion(), c.obj.GetKind(), c.obj.GetNamespace(), c.obj.GetName(),
					[]byte(`{"metadata":{"finalizers":null}}`))
			case "status":
				_, _, err = who.Apply(e.ctx, c.obj, harness.ApplyOptions{DryRun: true, Subresource: "status"})
			case "token":
				req := obj("authentication.k8s.io/v1", "TokenRequest", c.obj.GetNamespace(), c.obj.GetName(), map[string]any{
					"spec": map[string]any{"audiences": []any{"https://kubernetes.default.svc"}}})
				_, err = who.CreateSubresource(e.ctx, "v1", "ServiceAccount", c.obj.GetNamespace(), c.obj.GetName(), "token", req, true)
			default:
				t.Fatalf("unknown op %q", c.op)
			}
			what := harness.Describe(c.obj)
			if c.op != "" {
				what = c.op + " " + what
			}
			if !c.refused {
				if err != nil {
					t.Errorf("%s as %s: refused, want admitted: %v", what, who.Identity, err)
				}
				return
			}
			if err == nil {
				t.Errorf("%s as %s: admitted, want refused by %s", what, who.Identity, guardPolicy)
				return
			}
			msg := err.Error()
			if !strings.Contains(msg, "ValidatingAdmissionPolicy '"+guardPolicy+"'") {
				t.Errorf("%s as %s: refused, but not by %s: %v", what, who.Identity, guardPolicy, err)
				return
			}
			for _, w := range c.says {
				if !strings.Contains(msg, w) {
					t.Errorf("%s as %s: the refusal does not say %q: %v", what, who.Identity, w, err)
				}
			}
		})
	}
}

// grantAttackers gives the identities that attack what RBAC gives them on
// a Cozystack cluster (or more), so that what refuses them is the guard:
// the tenant's super-admin, cozystack-api, CAPK and the replicaset
// controller write these kinds in the tenant namespace (bind included, or
// the API server's escalation check would refuse a binding first);
// Cozystack's Flux is cluster-admin (in the FluxInstall layout it stands
// for a Cozystack Flux beside the fleet's).
func (e *env) grantAttackers(t *testing.T) {
	t.Helper()
	role := obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "e2e-tenant-writer", map[string]any{
		"rules": []any{
			map[string]any{
				"apiGroups": []any{"helm.toolkit.fluxcd.io", "kustomize.toolkit.fluxcd.io", "kubevirt.io", "cdi.kubevirt.io", "snapshot.storage.k8s.io",
					"pool.kubevirt.io", "snapshot.kubevirt.io", "clone.kubevirt.io", "export.kubevirt.io", "backup.kubevirt.io"},
				"resources": []any{"helmreleases", "kustomizations", "virtualmachines", "datavolumes", "datasources", "volumesnapshots",
					"virtualmachineinstances", "virtualmachineinstancereplicasets", "virtualmachinepools", "virtualmachinesnapshots",
					"virtualmachinesnapshotcontents", "virtualmachinerestores", "virtualmachineclones", "virtualmachineexports",
					"virtualmachinebackups", "virtualmachinebackuptrackers"},
				"verbs": []any{"*"},
			},
			map[string]any{
				"apiGroups": []any{""},
				"resources": []any{"pods", "secrets", "serviceaccounts", "serviceaccounts/token", "persistentvolumeclaims"},
				"verbs":     []any{"*"},
			},
			map[string]any{
				"apiGroups": []any{"rbac.authorization.k8s.io"},
				"resources": []any{"rolebindings", "roles", "clusterroles"},
				"verbs":     []any{"*"},
			},
		},
	})
	// Flux's sources, in the namespaces of the fleet's (G5): the tenant's
	// and cozystack-api, so that what refuses them there is the guard.
	sources := obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "e2e-source-writer", map[string]any{
		"rules": []any{map[string]any{
			"apiGroups": []any{"source.toolkit.fluxcd.io", "source.extensions.fluxcd.io"},
			"resources": []any{"gitrepositories", "gitrepositories/status", "externalartifacts", "externalartifacts/status",
				"artifactgenerators", "artifactgenerators/status"},
			"verbs": []any{"*"},
		}},
	})
	grants := []*unstructured.Unstructured{sources}
	e.namespaces(e.mode.fleetNamespace, cozySystem)
	for _, ns := range []string{guardNS, e.mode.fleetNamespace, cozySystem} {
		grants = append(grants, obj("rbac.authorization.k8s.io/v1", "RoleBinding", ns, "e2e-source-writer", map[string]any{
			"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "e2e-source-writer"},
			"subjects": []any{
				map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": tenantUser},
				map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": cozystackAPI},
			},
		}))
	}
	e.applyAll(t, e.admin, grants, false)
	var subjects []any
	for _, u := range []string{tenantUser, cozystackAPI, capkManager, replicaSets, virtController} {
		subjects = append(subjects, map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u})
	}
	binding := obj("rbac.authorization.k8s.io/v1", "RoleBinding", guardNS, "e2e-tenant-writer", map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "e2e-tenant-writer"},
		"subjects": subjects,
	})
	// No controller-manager runs: the account pods get by default.
	def := obj("v1", "ServiceAccount", guardNS, "default", nil)
	e.applyAll(t, e.admin, []*unstructured.Unstructured{role, binding, def}, false)
	if err := harness.GrantClusterAdmin(e.ctx, e.admin, cozystackFluxSA); err != nil {
		t.Fatal(err)
	}
}

// guardClients are the identities of the cases: service accounts by
// impersonation of their user name (the API server adds their groups).
func (e *env) guardClients(t *testing.T) map[string]*harness.Client {
	t.Helper()
	as := map[string]*harness.Client{
		asFleet:     e.fleet,
		asKustomize: e.kc,
		asAdmin:     e.admin,
		tenantUser:  harness.MustClient(t, e.mgmt, tenantUser, e.mgmt.Impersonating(tenantUser, tenantGroups...)),
	}
	for _, sa := range []string{cozystackAPI, capkManager, replicaSets, installer, cozystackFluxSA, virtController} {
		as[sa] = harness.MustClient(t, e.mgmt, sa, e.mgmt.Impersonating(sa))
	}
	return as
}

// helmRelease is a HelmRelease of ns with spec fields over a plain one (a
// chart of the platform's, no kubeConfig).
func helmRelease(ns, name string, labels map[string]any, spec map[string]any) *unstructured.Unstructured {
	s := map[string]any{"interval": "5m", "chartRef": postgresChart}
	for k, v := range spec {
		s[k] = v
	}
	meta := map[string]any{"name": name, "namespace": ns}
	if labels != nil {
		meta["labels"] = labels
	}
	return obj(helmV2, "HelmRelease", ns, name, map[string]any{"metadata": meta, "spec": s})
}

// kustomization is a Kustomization of ns over the fleet's source.
func (e *env) kustomization(ns, name string, labels map[string]any, spec map[string]any) *unstructured.Unstructured {
	s := map[string]any{"interval": "10m", "path": "./", "prune": false,
		"sourceRef": map[string]any{"kind": "GitRepository", "name": "fleet", "namespace": e.mode.fleetNamespace}}
	for k, v := range spec {
		s[k] = v
	}
	meta := map[string]any{"name": name, "namespace": ns}
	if labels != nil {
		meta["labels"] = labels
	}
	return obj(kustomizeV1, "Kustomization", ns, name, map[string]any{"metadata": meta, "spec": s})
}

func secretRef(name, key string) map[string]any {
	return map[string]any{"secretRef": map[string]any{"name": name, "key": key}}
}

// route is the kubeConfig of a release routed to the tenant's ComputePlane.
var route = secretRef("computeplane-admin-kubeconfig", "super-admin.svc")

// originLabels are helm-controller's labels on what it applies for the
// cluster's release.
var originLabels = map[string]any{"helm.toolkit.fluxcd.io/name": "computeplane", "helm.toolkit.fluxcd.io/namespace": guardNS}

// pwnRelease is issue 18's finding 2: a HelmRelease with helm-controller's
// origin labels of the cluster's release, its Secret, and a chart of the
// creator's choosing.
func pwnRelease(ns, name string) *unstructured.Unstructured {
	return helmRelease(ns, name, originLabels, map[string]any{"kubeConfig": route})
}

func labelled(kind string) map[string]any {
	return map[string]any{"apps.cozystack.io/application.kind": kind}
}

// vm is a KubeVirt VirtualMachine; template labels, volumes and
// dataVolumeTemplates as given.
func vm(ns, name string, labels, templateLabels map[string]any, volumes, dvTemplates []any) *unstructured.Unstructured {
	meta := map[string]any{"name": name, "namespace": ns}
	if labels != nil {
		meta["labels"] = labels
	}
	tmpl := map[string]any{"spec": map[string]any{"domain": map[string]any{"devices": map[string]any{}}}}
	if templateLabels != nil {
		tmpl["metadata"] = map[string]any{"labels": templateLabels}
	}
	if volumes != nil {
		tmpl["spec"].(map[string]any)["volumes"] = volumes
	}
	spec := map[string]any{"runStrategy": "Always", "template": tmpl}
	if dvTemplates != nil {
		spec["dataVolumeTemplates"] = dvTemplates
	}
	return obj("kubevirt.io/v1", "VirtualMachine", ns, name, map[string]any{"metadata": meta, "spec": spec})
}

// workerDisk is the system disk of a worker of the ComputePlane, as CAPK
// names it (its DataVolume and the PVC CDI makes for it).
const workerDisk = "computeplane-md0-x7k2p-disk-system"

func pvcVolume(claim string) []any {
	return []any{map[string]any{"name": "system", "persistentVolumeClaim": map[string]any{"claimName": claim}}}
}

func podOf(ns, name string, spec map[string]any) *unstructured.Unstructured {
	s := map[string]any{"containers": []any{map[string]any{"name": "main", "image": "registry.k8s.io/pause:3.10"}}}
	for k, v := range spec {
		s[k] = v
	}
	return obj("v1", "Pod", ns, name, map[string]any{"spec": s})
}

// roleBinding binds ClusterRole edit to subject.
func roleBinding(kind, ns, name string, subject map[string]any) *unstructured.Unstructured {
	return roleBindingTo(kind, ns, name, "edit", subject)
}

func roleBindingTo(kind, ns, name, clusterRole string, subject map[string]any) *unstructured.Unstructured {
	return obj("rbac.authorization.k8s.io/v1", kind, ns, name, map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": clusterRole},
		"subjects": []any{subject},
	})
}

func pvc(name string, dataSource map[string]any) *unstructured.Unstructured {
	return obj("v1", "PersistentVolumeClaim", guardNS, name, map[string]any{"spec": map[string]any{
		"accessModes": []any{"ReadWriteOnce"},
		"resources":   map[string]any{"requests": map[string]any{"storage": "1Gi"}},
		"dataSource":  dataSource,
	}})
}

func saSubject(ns, name string) map[string]any {
	return map[string]any{"kind": "ServiceAccount", "name": name, "namespace": ns}
}

// guardCases is the table: issue 18's attacks, more of the same kinds, and
// what must keep passing. In order: the worker VM cases create, change and
// delete one worker.
func (e *env) guardCases(t *testing.T, objs []*unstructured.Unstructured) []guardCase {
	t.Helper()
	fleetNS := e.mode.fleetNamespace
	var routedHR, managedHR *unstructured.Unstructured
	for _, hr := range ofKind(objs, "HelmRelease") {
		switch {
		case isCluster(hr):
		case routed(hr) && routedHR == nil:
			routedHR = hr
		case !routed(hr) && managedHR == nil && hr.GetNamespace() == guardNS:
			managedHR = hr
		}
	}
	if routedHR == nil || managedHR == nil {
		t.Fatalf("the Direct render has no routed or no management release in %s", guardNS)
	}
	// Created under another name: the rendered one exists, and re-applying
	// it unchanged changes nothing the guard judges.
	routedCopy := routedHR.DeepCopy()
	routedCopy.SetName(routedHR.GetName() + "-copy")
	rerouted := managedHR.DeepCopy()
	rerouted.SetName(managedHR.GetName() + "-rerouted")
	unstructured.SetNestedMap(rerouted.Object, route, "spec", "kubeConfig")

	forgedJupyter := helmRelease(guardNS, "jupyterhub-forged", labelled("JupyterHub"), map[string]any{"chartRef": jupyterhubChart})
	unlabelledJupyter := helmRelease(guardNS, "jupyterhub-unlabelled", nil, map[string]any{"chartRef": jupyterhubChart})
	lowerJupyter := helmRelease(guardNS, "jupyterhub-lower", labelled("jupyterhub"), map[string]any{"chartRef": jupyterhubChart})
	upperJupyter := helmRelease(guardNS, "jupyterhub-upper", map[string]any{"computeplane.dev/application.kind": "JUPYTERHUB"}, map[string]any{"chartRef": postgresChart})
	localRef := map[string]any{"kind": "ExternalArtifact", "name": jupyterhubChart["name"]}
	platformJupyter := helmRelease(cozySystem, "jupyterhub-local-ref", nil, map[string]any{"chartRef": localRef})

	// Another addon of the chart than the stand-in's computeplane-cilium:
	// the cases create both (dry-run), as the installer's first install
	// does.
	addon := helmRelease(guardNS, "computeplane-coredns", nil, map[string]any{
		"releaseName": "coredns", "targetNamespace": "kube-system", "storageNamespace": "kube-system",
		"chartRef": map[string]any{"kind": "ExternalArtifact", "name": ciliumArtifact, "namespace": cozySystem}, "kubeConfig": route})
	ciliumAddon := helmRelease(guardNS, "computeplane-cilium", nil, map[string]any{
		"releaseName": "cilium", "targetNamespace": "cozy-cilium", "storageNamespace": "cozy-cilium",
		"chartRef": map[string]any{"kind": "ExternalArtifact", "name": ciliumArtifact, "namespace": cozySystem}, "kubeConfig": route})
	cozyAddon := helmRelease(guardNS, "kubernetes-foo-cilium", nil, map[string]any{
		"releaseName": "cilium", "targetNamespace": "cozy-cilium", "storageNamespace": "cozy-cilium",
		"chartRef":   map[string]any{"kind": "ExternalArtifact", "name": ciliumArtifact, "namespace": cozySystem},
		"kubeConfig": secretRef("kubernetes-foo-admin-kubeconfig", "super-admin.svc")})

	valuesFrom := func(name, secret, key string) *unstructured.Unstructured {
		return helmRelease(guardNS, name, nil, map[string]any{"valuesFrom": []any{
			map[string]any{"kind": "Secret", "name": secret, "valuesKey": key, "targetPath": "kubeconfig"}}})
	}
	substitute := func(name, secret string) *unstructured.Unstructured {
		return e.kustomization(guardNS, name, nil, map[string]any{"postBuild": map[string]any{
			"substituteFrom": []any{map[string]any{"kind": "Secret", "name": secret}}}})
	}
	withSA := func(o *unstructured.Unstructured, sa string) *unstructured.Unstructured {
		o = o.DeepCopy()
		unstructured.SetNestedField(o.Object, sa, "spec", "serviceAccountName")
		return o
	}

	worker := vm(guardNS, "computeplane-md0-abcde", map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane"},
		map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane", "kubevirt.io/vm": "computeplane-md0-abcde"},
		[]any{map[string]any{"name": "system", "dataVolume": map[string]any{"name": workerDisk}}}, nil)
	opened := worker.DeepCopy()
	opened.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "computeplane", "policy.cozystack.io/allow-to-apiserver": "true"})
	relabelled := worker.DeepCopy()
	relabelled.SetLabels(map[string]string{"cluster.x-k8s.io/cluster-name": "elsewhere"})
	otherCluster := vm(guardNS, "kubernetes-dev-md0-xyz", map[string]any{"cluster.x-k8s.io/cluster-name": "kubernetes-dev"},
		map[string]any{"cluster.x-k8s.io/cluster-name": "kubernetes-dev"}, pvcVolume("kubernetes-dev-md0-xyz-disk-system"), nil)

	installerSA := obj("v1", "ServiceAccount", guardNS, installerAccount, nil)
	fleetSA := obj("v1", "ServiceAccount", fleetNS, fleetAccount, nil)
	saToken := func(ns, name, sa string) *unstructured.Unstructured {
		return obj("v1", "Secret", ns, name, map[string]any{
			"metadata": map[string]any{"name": name, "namespace": ns, "annotations": map[string]any{"kubernetes.io/service-account.name": sa}},
			"type":     "kubernetes.io/service-account-token"})
	}

	cases := []guardCase{
		// G1: an app of a ComputePlane kind runs on the ComputePlane, known
		// by its labels or by its chart.
		{name: "G1/JupyterHub labelled, no route, cozystack-api", as: cozystackAPI, obj: forgedJupyter, refused: true, says: append([]string{"JupyterHub apps run"}, sayG1...)},
		{name: "G1/JupyterHub labelled, no route, tenant", as: tenantUser, obj: forgedJupyter, refused: true, says: sayG1},
		{name: "G1/JupyterHub labelled, no route, the fleet", as: asFleet, obj: forgedJupyter, refused: true, says: sayG1},
		{name: "G1/JupyterHub's chartRef without kind labels", as: tenantUser, obj: unlabelledJupyter, refused: true, says: sayG1},
		{name: "G1/JupyterHub's chartRef without kind labels, cozystack-api", as: cozystackAPI, obj: unlabelledJupyter, refused: true, says: sayG1},
		{name: "G1/kind label in lower case", as: cozystackAPI, obj: lowerJupyter, refused: true, says: sayG1},
		{name: "G1/computeplane.dev kind label in upper case, another chart", as: tenantUser, obj: upperJupyter, refused: true, says: sayG1},
		{name: "G1/JupyterHub's chartRef, namespace defaulting to the release's", as: asKustomize, obj: platformJupyter, refused: true, says: sayG1},
		{name: "G1/Postgres from cozystack-api", as: cozystackAPI, obj: helmRelease(guardNS, "postgres-forged", labelled("Postgres"), nil)},

		// G2: who may name a ComputePlane's credentials.
		{name: "G2/pwn: origin labels, the cluster's Secret, any chart, Cozystack's Flux", as: cozystackFluxSA, obj: pwnRelease(guardNS, "pwn"), refused: true, says: sayG2},
		{name: "G2/pwn as a Kustomization, Cozystack's Flux", as: cozystackFluxSA, obj: e.kustomization(guardNS, "pwn", originLabels, map[string]any{"kubeConfig": route}), refused: true, says: sayG2},
		{name: "G2/pwn, tenant", as: tenantUser, obj: pwnRelease(guardNS, "pwn"), refused: true, says: sayG2},
		{name: "G2/kubeConfig computeplane-kubeconfig (value), Cozystack's Flux", as: cozystackFluxSA, obj: helmRelease(guardNS, "admin-conf", nil, map[string]any{"kubeConfig": secretRef("computeplane-kubeconfig", "value")}), refused: true, says: sayG2},
		{name: "G2/Kustomization kubeConfig computeplane-kubeconfig, Cozystack's Flux", as: cozystackFluxSA, obj: e.kustomization(guardNS, "admin-conf", nil, map[string]any{"kubeConfig": secretRef("computeplane-kubeconfig", "value")}), refused: true, says: sayG2},
		{name: "G2/kubeConfig computeplane-ca, Cozystack's Flux", as: cozystackFluxSA, obj: helmRelease(guardNS, "ca", nil, map[string]any{"kubeConfig": secretRef("computeplane-ca", "ca.crt")}), refused: true, says: sayG2},
		{name: "G2/routed release copy, tenant", as: tenantUser, obj: routedCopy, refused: true, says: sayG2},
		{name: "G2/routed release copy, cozystack-api", as: cozystackAPI, obj: routedCopy, refused: true, says: sayG2},
		{name: "G2/routed release copy, Cozystack's Flux", as: cozystackFluxSA, obj: routedCopy, refused: true, says: sayG2},
		{name: "G2/routed release copy, kustomize-controller (not the fleet)", as: asKustomize, obj: routedCopy, refused: true, says: sayG2},
		{name: "G2/routed release copy, the fleet", as: asFleet, obj: routedCopy},
		{name: "G2/management release given the route, tenant", as: tenantUser, obj: rerouted, refused: true, says: sayG2},
		{name: "G2/Kustomization with the route, tenant", as: tenantUser, obj: e.kustomization(guardNS, "reach", nil, map[string]any{"kubeConfig": route}), refused: true, says: sayG2},
		{name: "G2/Kustomization with the route, cozystack-api", as: cozystackAPI, obj: e.kustomization(guardNS, "reach", nil, map[string]any{"kubeConfig": route}), refused: true, says: sayG2},
		{name: "G2/Kustomization with the route, the fleet", as: asFleet, obj: e.kustomization(guardNS, "reach", nil, map[string]any{"kubeConfig": route})},
		{name: "G2/valuesFrom the admin kubeconfig, tenant", as: tenantUser, obj: valuesFrom("steal-values", "computeplane-admin-kubeconfig", "super-admin.svc"), refused: true, says: sayG2},
		{name: "G2/valuesFrom the admin kubeconfig, Cozystack's Flux", as: cozystackFluxSA, obj: valuesFrom("steal-values", "computeplane-admin-kubeconfig", "super-admin.svc"), refused: true, says: sayG2},
		{name: "G2/valuesFrom computeplane-kubeconfig, tenant", as: tenantUser, obj: valuesFrom("steal-conf", "computeplane-kubeconfig", "value"), refused: true, says: sayG2},
		{name: "G2/valuesFrom a worker's bootstrap data, tenant", as: tenantUser, obj: valuesFrom("steal-machine", "computeplane-md0-x7k2p-abcde-bootstrap-data", "value"), refused: true, says: sayG2},
		{name: "G2/substituteFrom the talosconfig, Cozystack's Flux", as: cozystackFluxSA, obj: substitute("steal-talos", "computeplane-talosconfig"), refused: true, says: sayG2},
		{name: "G2/kubeConfig the controller-manager's, Cozystack's Flux", as: cozystackFluxSA, obj: helmRelease(guardNS, "cm-conf", nil, map[string]any{"kubeConfig": secretRef("computeplane-controller-manager-kubeconfig", "controller-manager.conf")}), refused: true, says: sayG2},
		{name: "G2/valuesFrom cozystack-values, tenant", as: tenantUser, obj: valuesFrom("plain-values", "cozystack-values", "values.yaml")},
		{name: "G2/substituteFrom the admin kubeconfig, tenant", as: tenantUser, obj: substitute("steal-subst", "computeplane-admin-kubeconfig"), refused: true, says: sayG2},
		{name: "G2/substituteFrom computeplane-ca, tenant", as: tenantUser, obj: substitute("steal-ca", "computeplane-ca"), refused: true, says: sayG2},
		{name: "G2/the installer's own addon", as: installer, obj: addon},
		{name: "G2/the installer's own cilium addon", as: installer, obj: ciliumAddon},
		{name: "G2/the installer's release without kubeConfig", as: installer, obj: helmRelease(guardNS, "installer-local", nil, nil), refused: true, says: sayG2Installer},
		{name: "G2/the installer's release reading its credentials, without kubeConfig", as: installer, obj: valuesFrom("installer-values", "computeplane-admin-kubeconfig", "super-admin.svc"), refused: true, says: sayG2Installer},
		{name: "G2/the installer's addon, Cozystack's Flux", as: cozystackFluxSA, obj: addon, refused: true, says: sayG2},
		{name: "G2/the cluster's addon with origin labels, Cozystack's Flux", as: cozystackFluxSA, obj: withLabels(addon, originLabels), refused: true, says: sayG2},
		{name: "G2/the installer's addon, tenant", as: tenantUser, obj: addon, refused: true, says: sayG2},
		{name: "G2/Cozystack's tenant Kubernetes addon, Cozystack's Flux", as: cozystackFluxSA, obj: cozyAddon},
		{name: "G2/Cozystack's tenant Kubernetes addon, tenant", as: tenantUser, obj: cozyAddon, refused: true, says: sayG2},

		// G-identity: the installer's and the fleet's accounts are theirs.
		{name: "identity/HelmRelease as the installer, tenant", as: tenantUser, obj: withSA(helmRelease(guardNS, "as-installer", nil, nil), installerAccount), refused: true, says: sayG4Account},
		{name: "identity/HelmRelease as the installer, Cozystack's Flux", as: cozystackFluxSA, obj: withSA(helmRelease(guardNS, "as-installer", nil, nil), installerAccount), refused: true, says: sayG4Account},
		{name: "identity/HelmRelease as the installer, kustomize-controller (not the fleet)", as: asKustomize, obj: withSA(helmRelease(guardNS, "as-installer", nil, nil), installerAccount), refused: true, says: sayG4Account},
		{name: "identity/Kustomization as the installer, tenant", as: tenantUser, obj: withSA(e.kustomization(guardNS, "as-installer", nil, nil), installerAccount), refused: true, says: sayG4Account},
		{name: "identity/Kustomization as the installer, Cozystack's Flux", as: cozystackFluxSA, obj: withSA(e.kustomization(guardNS, "as-installer", nil, nil), installerAccount), refused: true, says: sayG4Account},
		{name: "identity/HelmRelease as the fleet, Cozystack's Flux", as: cozystackFluxSA, obj: withSA(helmRelease(fleetNS, "as-fleet", nil, nil), fleetAccount), refused: true, says: sayG4Account},
		{name: "identity/Kustomization as the fleet, Cozystack's Flux", as: cozystackFluxSA, obj: withSA(e.kustomization(fleetNS, "as-fleet", nil, nil), fleetAccount), refused: true, says: sayG4Account},
		{name: "identity/Kustomization as the fleet, kustomize-controller (not the fleet)", as: asKustomize, obj: withSA(e.kustomization(fleetNS, "as-fleet", nil, nil), fleetAccount), refused: true, says: sayG4Account},
		{name: "identity/the bootstrap root, system:masters", as: asAdmin, obj: withSA(e.kustomization(fleetNS, "computeplane-fleet-root", nil, nil), fleetAccount)},
		{name: "identity/a Kustomization as the fleet, the fleet", as: asFleet, obj: withSA(e.kustomization(fleetNS, "as-fleet", nil, nil), fleetAccount)},
		{name: "identity/Pod as the installer, tenant", as: tenantUser, obj: podOf(guardNS, "as-installer", map[string]any{"serviceAccountName": installerAccount}), refused: true, says: sayG4Credentials},
		{name: "identity/Pod as the installer by the deprecated serviceAccount field, tenant", as: tenantUser, obj: podOf(guardNS, "as-installer-old", map[string]any{"serviceAccount": installerAccount}), refused: true, says: sayG4Credentials},
		{name: "identity/Pod as the installer, a chart of Cozystack's Flux", as: cozystackFluxSA, obj: podOf(guardNS, "as-installer", map[string]any{"serviceAccountName": installerAccount}), refused: true, says: sayG4Credentials},
		{name: "identity/Pod as the installer, a Deployment's replicaset controller", as: replicaSets, obj: podOf(guardNS, "as-installer-rs", map[string]any{"serviceAccountName": installerAccount}), refused: true, says: sayG4Credentials},
		{name: "identity/Pod as the fleet, Cozystack's Flux", as: cozystackFluxSA, obj: podOf(fleetNS, "as-fleet", map[string]any{"serviceAccountName": fleetAccount}), refused: true, says: sayG4Credentials},
		{name: "identity/Pod as default, tenant", as: tenantUser, obj: podOf(guardNS, "plain", nil)},
		{name: "identity/TokenRequest for the installer, tenant", as: tenantUser, op: "token", obj: installerSA, refused: true, says: sayG4Credentials},
		{name: "identity/TokenRequest for the fleet, kustomize-controller (not the fleet)", as: asKustomize, op: "token", obj: fleetSA, refused: true, says: sayG4Credentials},
		{name: "identity/TokenRequest for default, tenant", as: tenantUser, op: "token", obj: obj("v1", "ServiceAccount", guardNS, "default", nil)},
		{name: "identity/service-account-token Secret for the installer, tenant", as: tenantUser, obj: saToken(guardNS, "installer-token", installerAccount), refused: true, says: sayG4Credentials},
		{name: "identity/service-account-token Secret for the installer, a chart of Cozystack's Flux", as: cozystackFluxSA, obj: saToken(guardNS, "installer-token", installerAccount), refused: true, says: sayG4Credentials},
		{name: "identity/service-account-token Secret for the fleet, Cozystack's Flux", as: cozystackFluxSA, obj: saToken(fleetNS, "fleet-token", fleetAccount), refused: true, says: sayG4Credentials},
		{name: "identity/service-account-token Secret for default, tenant", as: tenantUser, obj: saToken(guardNS, "default-token", "default")},
		{name: "identity/RoleBinding to the installer, tenant", as: tenantUser, obj: roleBinding("RoleBinding", guardNS, "to-installer", saSubject(guardNS, installerAccount)), refused: true, says: sayG4Binding},
		{name: "identity/RoleBinding to the installer by user name, tenant", as: tenantUser, obj: roleBinding("RoleBinding", guardNS, "to-installer-user",
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": installer}), refused: true, says: sayG4Binding},
		{name: "identity/RoleBinding to the installer, a chart of Cozystack's Flux", as: cozystackFluxSA, obj: roleBinding("RoleBinding", guardNS, "to-installer", saSubject(guardNS, installerAccount)), refused: true, says: sayG4Binding},
		{name: "identity/ClusterRoleBinding to the installer, Cozystack's Flux", as: cozystackFluxSA, obj: roleBinding("ClusterRoleBinding", "", "to-installer", saSubject(guardNS, installerAccount)), refused: true, says: sayG4Binding},
		{name: "identity/ClusterRoleBinding to the fleet, Cozystack's Flux", as: cozystackFluxSA, obj: roleBinding("ClusterRoleBinding", "", "to-fleet", saSubject(fleetNS, fleetAccount)), refused: true, says: sayG4Binding},
		{name: "identity/RoleBinding of the installer's role to the tenant", as: tenantUser, obj: roleBindingTo("RoleBinding", guardNS, "installer-role", installerAccount,
			map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": tenantUser}), refused: true, says: sayG4Binding},
		{name: "identity/ClusterRoleBinding of the fleet's role, Cozystack's Flux", as: cozystackFluxSA, obj: roleBindingTo("ClusterRoleBinding", "", "fleet-role", fleetAccount,
			saSubject(guardNS, "default")), refused: true, says: sayG4Binding},
		{name: "identity/RoleBinding to default, tenant", as: tenantUser, obj: roleBinding("RoleBinding", guardNS, "to-default", saSubject(guardNS, "default"))},

		// G3: what a worker is made of is the platform's.
		{name: "G3/template labelled cluster-name, tenant", as: tenantUser, obj: vm(guardNS, "template-labelled", nil,
			map[string]any{"cluster.x-k8s.io/cluster-name": "computeplane"}, nil, nil), refused: true, says: sayG3Disks},
		{name: "G3/template labelled kamaji.clastix.io/name, tenant", as: tenantUser, obj: vm(guardNS, "template-kamaji", nil,
			map[string]any{"kamaji.clastix.io/name": "computeplane"}, nil, nil), refused: true, says: sayG3Disks},
		{name: "G3/a worker's disk PVC, tenant", as: tenantUser, obj: vm(guardNS, "boot-worker-pvc", nil, nil, pvcVolume(workerDisk), nil), refused: true, says: sayG3Disks},
		{name: "G3/a worker's DataVolume, tenant", as: tenantUser, obj: vm(guardNS, "boot-worker-dv", nil, nil,
			[]any{map[string]any{"name": "system", "dataVolume": map[string]any{"name": workerDisk}}}, nil), refused: true, says: sayG3Disks},
		{name: "G3/a dataVolumeTemplate named like a worker's disk, tenant", as: tenantUser, obj: vm(guardNS, "boot-worker-dvt", nil, nil,
			[]any{map[string]any{"name": "system", "dataVolume": map[string]any{"name": workerDisk}}},
			[]any{map[string]any{"metadata": map[string]any{"name": workerDisk}, "spec": map[string]any{"storage": map[string]any{}}}}), refused: true, says: sayG3Disks},
		{name: "G3/a dataVolumeTemplate cloning a worker's disk, tenant", as: tenantUser, obj: vm(guardNS, "clone-worker-dvt", nil, nil,
			[]any{map[string]any{"name": "system", "dataVolume": map[string]any{"name": "clone-worker-dvt-disk"}}},
			[]any{map[string]any{"metadata": map[string]any{"name": "clone-worker-dvt-disk"}, "spec": map[string]any{
				"source": map[string]any{"pvc": map[string]any{"namespace": guardNS, "name": workerDisk}}, "storage": map[string]any{}}}}), refused: true, says: sayG3Disks},
		{name: "G3/a DataVolume cloning a worker's disk, tenant", as: tenantUser, obj: obj("cdi.kubevirt.io/v1beta1", "DataVolume", guardNS, "clone-worker", map[string]any{
			"spec": map[string]any{"source": map[string]any{"pvc": map[string]any{"namespace": guardNS, "name": workerDisk}}, "storage": map[string]any{}}}), refused: true, says: sayG3Disks},
		{name: "G3/a DataSource of a worker's disk, tenant", as: tenantUser, obj: obj("cdi.kubevirt.io/v1beta1", "DataSource", guardNS, "worker-source", map[string]any{
			"spec": map[string]any{"source": map[string]any{"pvc": map[string]any{"namespace": guardNS, "name": workerDisk}}}}), refused: true, says: sayG3Disks},
		{name: "G3/a DataSource of the tenant's own disk, tenant", as: tenantUser, obj: obj("cdi.kubevirt.io/v1beta1", "DataSource", guardNS, "own-source", map[string]any{
			"spec": map[string]any{"source": map[string]any{"pvc": map[string]any{"namespace": guardNS, "name": "own-disk"}}}})},
		{name: "G3/a PVC cloning a worker's disk, tenant", as: tenantUser, obj: pvc("clone-worker-pvc", map[string]any{"kind": "PersistentVolumeClaim", "name": workerDisk}), refused: true, says: sayG3Disks},
		{name: "G3/a VolumeSnapshot of a worker's disk, tenant", as: tenantUser, obj: obj("snapshot.storage.k8s.io/v1", "VolumeSnapshot", guardNS, "snap-worker", map[string]any{
			"spec": map[string]any{"source": map[string]any{"persistentVolumeClaimName": workerDisk}}}), refused: true, says: sayG3Disks},
		{name: "G3/a PVC cloning the tenant's own disk, tenant", as: tenantUser, obj: pvc("clone-own-pvc", map[string]any{"kind": "PersistentVolumeClaim", "name": "own-disk"})},
		{name: "G3/a worker's disk, cozystack-api", as: cozystackAPI, obj: vm(guardNS, "boot-worker-pvc", nil, nil, pvcVolume(workerDisk), nil), refused: true, says: sayG3Disks},
		{name: "G3/the tenant's own VM and disk", as: tenantUser, obj: vm(guardNS, "own", nil, map[string]any{"kubevirt.io/vm": "own"}, pvcVolume("own-disk"), nil)},
		{name: "G3/another cluster's worker, tenant", as: tenantUser, obj: otherCluster},
		{name: "G3/worker labelled cluster-name, tenant", as: tenantUser, obj: worker, refused: true, says: sayG3Owner},
		{name: "G3/CAPK creates the worker", as: capkManager, op: "create", obj: worker},
		{name: "G3/worker opened to the API server, tenant", as: tenantUser, obj: opened, refused: true, says: sayG3Owner},
		{name: "G3/worker opened to the API server, cozystack-api", as: cozystackAPI, obj: opened, refused: true, says: sayG3Owner},
		{name: "G3/worker relabelled, CAPK", as: capkManager, obj: relabelled, refused: true, says: sayG3Label},
		{name: "G3/worker changed, system:masters", as: asAdmin, obj: opened, refused: true, says: sayG3Owner},
		{name: "G3/worker deleted, tenant", as: tenantUser, op: "delete", obj: worker, refused: true, says: sayG3Owner},
		{name: "G3/worker deleted, CAPK", as: capkManager, op: "delete", obj: worker},
	}
	cases = append(cases, e.kubevirtGuardCases(t)...)
	cases = append(cases, e.sourceGuardCases()...)
	return cases
}

// waitMutatingPolicy waits until the render's MutatingAdmissionPolicy (the
// shard label's, spec.releases.shardLabel: Admission on 1.36), if it has
// one, is in force: a dry run of a rendered HelmRelease as the fleet comes
// back with the label. On a management cluster started a moment ago the
// policy at first answers every release it matches with 503 ("Resource
// kind helm.toolkit.fluxcd.io/v2, Kind=HelmRelease not found. There can be
// a delay between when CustomResourceDefinitions are created and when they
// are available."), until the API server has the release's schema for it.
func (e *env) waitMutatingPolicy(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	if len(ofKind(objs, "MutatingAdmissionPolicy")) == 0 {
		return
	}
	var probe *unstructured.Unstructured
	for _, hr := range ofKind(objs, "HelmRelease") {
		if _, ok := hr.GetLabels()[shardKeyLabel]; !ok {
			probe = hr
			break
		}
	}
	if probe == nil {
		t.Fatalf("the render has a MutatingAdmissionPolicy and no HelmRelease without %s for it to label", shardKeyLabel)
	}
	err := harness.Poll(e.ctx, time.Minute, 500*time.Millisecond, func() (bool, string) {
		got, _, err := e.fleet.Apply(e.ctx, probe, harness.ApplyOptions{DryRun: true})
		if err != nil {
			return false, err.Error()
		}
		return got.GetLabels()[shardKeyLabel] != "", "no " + shardKeyLabel + " label yet"
	})
	if err != nil {
		t.Fatalf("the render's MutatingAdmissionPolicy does not label %s: %v", harness.Describe(probe), err)
	}
}

// guardCRDs are the stand-ins of the kinds the guard matches that the
// management cluster's CRDs (applyCRDs) lack.
var guardCRDs = []string{
	"testdata/crds/virtualmachines.kubevirt.io.yaml",
	"testdata/crds/virtualmachineinstances.kubevirt.io.yaml",
	"testdata/crds/virtualmachineinstancereplicasets.kubevirt.io.yaml",
	"testdata/crds/virtualmachinepools.pool.kubevirt.io.yaml",
	"testdata/crds/virtualmachinesnapshots.snapshot.kubevirt.io.yaml",
	"testdata/crds/virtualmachinesnapshotcontents.snapshot.kubevirt.io.yaml",
	"testdata/crds/virtualmachinerestores.snapshot.kubevirt.io.yaml",
	"testdata/crds/virtualmachineclones.clone.kubevirt.io.yaml",
	"testdata/crds/virtualmachineexports.export.kubevirt.io.yaml",
	"testdata/crds/virtualmachinebackups.backup.kubevirt.io.yaml",
	"testdata/crds/virtualmachinebackuptrackers.backup.kubevirt.io.yaml",
	"testdata/crds/datavolumes.cdi.kubevirt.io.yaml",
	"testdata/crds/datasources.cdi.kubevirt.io.yaml",
	"testdata/crds/volumesnapshots.snapshot.storage.k8s.io.yaml",
}

func withLabels(o *unstructured.Unstructured, labels map[string]any) *unstructured.Unstructured {
	o = o.DeepCopy()
	l := map[string]string{}
	for k, v := range labels {
		l[k] = v.(string)
	}
	o.SetLabels(l)
	return o
}
