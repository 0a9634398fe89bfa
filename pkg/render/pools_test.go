package render_test

import (
	"encoding/json"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/kustomize/api/krusty"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// poolKnobs: tenant acme's two node groups.
const poolKnobs = `
---
apiVersion: apps.cozystack.io/v1alpha1
kind: ComputePlane
metadata: {name: computeplane, namespace: tenant-acme}
spec:
  nodeGroups:
    md0: {minReplicas: 1, maxReplicas: 3, instanceType: u1.large, diskSize: 50Gi, roles: [ingress-nginx]}
    gpu: {minReplicas: 0, maxReplicas: 2, instanceType: u1.xlarge, diskSize: 100Gi}
`

func lookupObject(out []render.Object, kind, namespace, name string) *render.Object {
	for i := range out {
		if out[i].Kind == kind && out[i].Namespace == namespace && out[i].Name == name {
			return &out[i]
		}
	}
	return nil
}

func helmRelease(t *testing.T, o *render.Object) helmv2.HelmRelease {
	t.Helper()
	var hr helmv2.HelmRelease
	if err := json.Unmarshal(objectJSON(t, *o), &hr); err != nil {
		t.Fatal(err)
	}
	return hr
}

// TestSplitPoolsRender: on the SplitPools line the cluster's values hold no
// node group, and each node group is a pool release attached to the
// cluster by name, with only the pool's fields.
func TestSplitPoolsRender(t *testing.T) {
	out := renderFleet(t, `{platform: {clusterChart: SplitPools}}`, guardFleet+poolKnobs)
	cluster := lookupObject(out, "HelmRelease", "tenant-acme", "computeplane")
	if cluster == nil {
		t.Fatal("no cluster release")
	}
	if hr := helmRelease(t, cluster); strings.Contains(string(hr.Spec.Values.Raw), "nodeGroups") {
		t.Errorf("the cluster's values hold node groups on the SplitPools line: %s", hr.Spec.Values.Raw)
	}
	for _, pool := range []string{"gpu", "md0"} {
		name := "kubernetes-nodes-computeplane-" + pool
		o := lookupObject(out, "HelmRelease", "tenant-acme", name)
		if o == nil {
			t.Errorf("no pool release %s", name)
			continue
		}
		hr := helmRelease(t, o)
		var values map[string]any
		if err := json.Unmarshal(hr.Spec.Values.Raw, &values); err != nil {
			t.Fatal(err)
		}
		if values["cluster"] != "computeplane" || values["clusterReleaseName"] != "computeplane" {
			t.Errorf("%s: values %v do not attach the pool to the cluster computeplane", name, values)
		}
		if hr.Spec.ReleaseName != name || hr.Spec.ChartRef.Name != render.PoolArtifactName || hr.Spec.ServiceAccountName != "computeplane-installer" {
			t.Errorf("%s: releaseName %q, chart %q, account %q", name, hr.Spec.ReleaseName, hr.Spec.ChartRef.Name, hr.Spec.ServiceAccountName)
		}
		if hr.Labels[render.PoolLabel] != pool || hr.Labels["apps.cozystack.io/application.kind"] != "" {
			t.Errorf("%s: labels %v", name, hr.Labels)
		}
		if !o.Kept {
			t.Errorf("%s is not kept when it leaves Git: pruning it would delete its workers", name)
		}
	}
	// Tenant beta... has none in guardFleet; the default pool is proven
	// by the split-pools fixture.
	source := lookupObject(out, "ArtifactGenerator", "cozy-system", render.SourceGeneratorName)
	if source == nil || !strings.Contains(string(objectJSON(t, *source)), `"@cozystack-packages/apps/kubernetes-nodes/**"`) {
		t.Errorf("the ArtifactGenerator does not re-source apps/kubernetes-nodes")
	}
}

// TestCombinedRendersNoPool: the Combined line (the default) renders no pool
// release, re-sources no pool chart and has no G6.
func TestCombinedRendersNoPool(t *testing.T) {
	out := renderFleet(t, `{}`, guardFleet+poolKnobs)
	for _, o := range out {
		if strings.HasPrefix(o.Name, "kubernetes-nodes-") {
			t.Errorf("%s %s/%s on the Combined line", o.Kind, o.Namespace, o.Name)
		}
		if strings.Contains(string(objectJSON(t, o)), "kubernetes-nodes") {
			t.Errorf("%s %s/%s names kubernetes-nodes on the Combined line", o.Kind, o.Namespace, o.Name)
		}
	}
}

// TestGuardPools: G6 refuses a worker pool of the ComputePlane's cluster
// from anyone but the fleet, by its name or its values, and admits the
// pools of a tenant's own clusters.
func TestGuardPools(t *testing.T) {
	for _, version := range []string{"1.33", "1.36"} {
		t.Run("kubernetes-"+version, func(t *testing.T) {
			out := renderFleet(t, `{platform: {kubernetesVersion: "`+version+`", clusterChart: SplitPools}}`, guardFleet+poolKnobs)
			policy, _ := guardObjects(t, out)
			g := compileGuard(t, policy)
			pool := func(name, values string) string {
				return `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: ` + name + `
  namespace: tenant-acme
  labels:
    apps.cozystack.io/application.kind: KubernetesNodes
    apps.cozystack.io/application.group: apps.cozystack.io
    apps.cozystack.io/application.name: ` + strings.TrimPrefix(name, "kubernetes-nodes-") + `
spec:
  chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-nodes-application-kubevirt-kubernetes-nodes, namespace: cozy-system}
  interval: 5m
  values: ` + values + `
`
			}
			const refused = "is a worker pool of the tenant's ComputePlane"
			for _, c := range []struct {
				name, object, user, want string
			}{
				{"a pool named like the ComputePlane's, by cozystack-api", pool("kubernetes-nodes-computeplane-md1", "{cluster: computeplane, minReplicas: 1}"), cozystackAPI, refused},
				{"a pool named like the ComputePlane's, by a tenant user", pool("kubernetes-nodes-computeplane-md1", "{cluster: computeplane}"), tenantUser, refused},
				{"a pool attached by clusterReleaseName", pool("kubernetes-nodes-mine-md0", "{cluster: mine, clusterReleaseName: computeplane}"), cozystackAPI, refused},
				{"a pool attached by cluster", pool("kubernetes-nodes-other", "{cluster: computeplane}"), cozystackAPI, refused},
				{"a pool of the tenant's own cluster", pool("kubernetes-nodes-mine-md0", "{cluster: mine}"), cozystackAPI, ""},
				{"a cluster value of another type", pool("kubernetes-nodes-mine-md0", "{cluster: 5, clusterReleaseName: {a: b}}"), cozystackAPI, ""},
				{"the fleet's pool", pool("kubernetes-nodes-computeplane-md1", "{cluster: computeplane, clusterReleaseName: computeplane}"), fleetAccount, ""},
			} {
				checkAdmission(t, g, c.name, guardRequest{op: admission.Create, user: c.user, groups: tenantGroups, object: c.object}, c.want)
			}
			// An update that moves a pool onto the cluster is refused too.
			mine := pool("kubernetes-nodes-mine-md0", "{cluster: mine}")
			moved := pool("kubernetes-nodes-mine-md0", "{cluster: mine, clusterReleaseName: computeplane}")
			checkAdmission(t, g, "a pool moved onto the cluster", guardRequest{op: admission.Update, user: cozystackAPI, groups: tenantGroups, object: moved, oldObject: mine}, refused)
			// What changes no worker is admitted from anyone RBAC lets
			// through: a reconcile request (flux reconcile) or a suspend of
			// the fleet's pool. A cluster administrator may change one.
			fleetPool := pool("kubernetes-nodes-computeplane-md1", "{cluster: computeplane, clusterReleaseName: computeplane}")
			requested := edit(t, fleetPool, "  namespace: tenant-acme\n", "  namespace: tenant-acme\n  annotations: {reconcile.fluxcd.io/requestedAt: now}\n")
			suspended := edit(t, fleetPool, "  interval: 5m\n", "  interval: 5m\n  suspend: true\n")
			resized := edit(t, fleetPool, "{cluster: computeplane, clusterReleaseName: computeplane}", "{cluster: computeplane, clusterReleaseName: computeplane, maxReplicas: 9}")
			checkAdmission(t, g, "a reconcile request of the fleet's pool by cozystack-api", guardRequest{op: admission.Update, user: cozystackAPI, groups: tenantGroups, object: requested, oldObject: fleetPool}, "")
			checkAdmission(t, g, "a suspend of the fleet's pool by a tenant user", guardRequest{op: admission.Update, user: tenantUser, groups: tenantGroups, object: suspended, oldObject: fleetPool}, "")
			checkAdmission(t, g, "the fleet's pool resized by a tenant user", guardRequest{op: admission.Update, user: tenantUser, groups: tenantGroups, object: resized, oldObject: fleetPool}, refused)
			checkAdmission(t, g, "the fleet's pool resized by a cluster administrator", guardRequest{op: admission.Update, user: admin, groups: []string{"system:masters", "system:authenticated"}, object: resized, oldObject: fleetPool}, "")
			checkAdmission(t, g, "a pool named like the ComputePlane's, by a cluster administrator", guardRequest{op: admission.Create, user: admin, groups: []string{"system:masters", "system:authenticated"}, object: fleetPool}, "")
			// A pool's worker, as the pool chart makes it with
			// clusterReleaseName (named and labelled as the Combined
			// chart's), is the platform's (G3); a VM that mounts the token
			// of a pool's talos-reconcile account is refused (G3d).
			worker := `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: computeplane-gpu-abcde-fghij
  namespace: tenant-acme
  labels: {cluster.x-k8s.io/cluster-name: computeplane}
spec:
  runStrategy: Always
  template:
    spec:
      domain: {devices: {}}
      volumes: [{name: disk, dataVolume: {name: computeplane-gpu-abcde-fghij-disk-system}}]
`
			checkAdmission(t, g, "a pool's worker created by a tenant user", guardRequest{op: admission.Create, user: tenantUser, groups: tenantGroups, object: worker}, "is a worker of the tenant's ComputePlane")
			checkAdmission(t, g, "a pool's worker created by CAPK", guardRequest{op: admission.Create, user: capk, object: worker}, "")
			stolen := edit(t, worker, "cluster.x-k8s.io/cluster-name: computeplane", "app: mine", "volumes: [{name: disk, dataVolume: {name: computeplane-gpu-abcde-fghij-disk-system}}]",
				"volumes: [{name: token, serviceAccount: {serviceAccountName: kubernetes-nodes-computeplane-gpu-talos-reconcile}}]")
			checkAdmission(t, g, "a VM with a pool account's token", guardRequest{op: admission.Create, user: tenantUser, groups: tenantGroups, object: stolen}, "would hand its guest a credential")
			disk := edit(t, worker, "cluster.x-k8s.io/cluster-name: computeplane", "app: mine", "name: computeplane-gpu-abcde-fghij\n", "name: mine\n")
			checkAdmission(t, g, "a VM that mounts a pool worker's disk", guardRequest{op: admission.Create, user: tenantUser, groups: tenantGroups, object: disk}, "is made like a worker")

			// Every rendered pool release is admitted from the fleet and
			// refused from anyone else.
			pools := 0
			for _, o := range out {
				if o.Kind != "HelmRelease" || !strings.HasPrefix(o.Name, "kubernetes-nodes-") {
					continue
				}
				pools++
				text := string(objectJSON(t, o))
				checkAdmission(t, g, o.Name+" by the fleet", guardRequest{op: admission.Create, user: fleetAccount, object: text}, "")
				checkAdmission(t, g, o.Name+" by cozystack-api", guardRequest{op: admission.Create, user: cozystackAPI, object: text}, refused)
			}
			if pools != 2 {
				t.Errorf("%d rendered pool releases, want 2", pools)
			}
		})
	}
}

// TestPinPatchesAsKustomizeApplies: under poolMigration: Pin the cluster
// release's post-renderer, applied by kustomize as helm-controller applies
// it, annotates every worker object of the Combined chart with
// helm.sh/resource-policy: keep, and nothing else.
func TestPinPatchesAsKustomizeApplies(t *testing.T) {
	out := renderFleet(t, `{platform: {poolMigration: Pin}}`, guardFleet+poolKnobs)
	hr := helmRelease(t, lookupObject(out, "HelmRelease", "tenant-acme", "computeplane"))
	if len(hr.Spec.PostRenderers) != 1 || hr.Spec.PostRenderers[0].Kustomize == nil {
		t.Fatalf("post-renderers %v", hr.Spec.PostRenderers)
	}
	// What the Combined chart makes for node groups md0 and gpu (templates/
	// cluster.yaml at Cozystack 3c780acd), and objects it must not touch.
	manifest := `
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: computeplane-md0, namespace: tenant-acme}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata: {name: computeplane-gpu, namespace: tenant-acme, annotations: {a: b}}
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineHealthCheck
metadata: {name: computeplane-md0, namespace: tenant-acme}
---
apiVersion: infrastructure.cluster.x-k8s.io/v1alpha1
kind: KubevirtMachineTemplate
metadata: {name: computeplane-md0-1a2b3c, namespace: tenant-acme}
---
apiVersion: cozystack.io/v1alpha1
kind: WorkloadMonitor
metadata: {name: computeplane-gpu, namespace: tenant-acme}
---
apiVersion: cozystack.io/v1alpha1
kind: WorkloadMonitor
metadata: {name: computeplane, namespace: tenant-acme}
---
apiVersion: controlplane.cluster.x-k8s.io/v1alpha1
kind: KamajiControlPlane
metadata: {name: computeplane, namespace: tenant-acme}
`
	fs := filesys.MakeFsInMemory()
	k := kusttypes.Kustomization{Resources: []string{"manifest.yaml"}}
	for _, p := range hr.Spec.PostRenderers[0].Kustomize.Patches {
		if p.Target == nil || !strings.Contains(p.Patch, "resource-policy") {
			continue // the cluster's own patches target objects not in this manifest
		}
		k.Patches = append(k.Patches, kusttypes.Patch{Patch: p.Patch, Target: &kusttypes.Selector{
			ResId:              kustResId(p.Target.Group, p.Target.Version, p.Target.Kind, p.Target.Name, p.Target.Namespace),
			AnnotationSelector: p.Target.AnnotationSelector, LabelSelector: p.Target.LabelSelector,
		}})
	}
	if len(k.Patches) != 4 {
		t.Fatalf("%d pin patches, want 4 (MachineDeployment, MachineHealthCheck, KubevirtMachineTemplate, WorkloadMonitor)", len(k.Patches))
	}
	data, err := sigsyaml.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile("/k/kustomization.yaml", data); err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile("/k/manifest.yaml", []byte(manifest)); err != nil {
		t.Fatal(err)
	}
	opts := krusty.MakeDefaultOptions()
	opts.PluginConfig = kusttypes.DisabledPluginConfig()
	m, err := krusty.MakeKustomizer(opts).Run(fs, "/k")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		"MachineDeployment/computeplane-md0": true, "MachineDeployment/computeplane-gpu": true,
		"MachineHealthCheck/computeplane-md0": true, "KubevirtMachineTemplate/computeplane-md0-1a2b3c": true,
		"WorkloadMonitor/computeplane-gpu": true, "WorkloadMonitor/computeplane": false, "KamajiControlPlane/computeplane": false,
	}
	for _, r := range m.Resources() {
		id := r.GetKind() + "/" + r.GetName()
		pinned := r.GetAnnotations()[render.KeepAnnotation] == "keep"
		if pinned != want[id] {
			t.Errorf("%s: pinned %v, want %v (annotations %v)", id, pinned, want[id], r.GetAnnotations())
		}
		if id == "MachineDeployment/computeplane-gpu" && r.GetAnnotations()["a"] != "b" {
			t.Errorf("%s lost its annotations: %v", id, r.GetAnnotations())
		}
	}
	if len(m.Resources()) != len(want) {
		t.Errorf("%d objects after the patches, want %d (a patch renamed one)", len(m.Resources()), len(want))
	}
}

func kustResId(group, version, kind, name, namespace string) resid.ResId {
	return resid.ResId{Gvk: resid.Gvk{Group: group, Version: version, Kind: kind}, Name: name, Namespace: namespace}
}
