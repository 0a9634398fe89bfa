package render_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/admission"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// guardFleet: tenant acme with a ComputePlane, a routed JupyterHub and a
// Postgres on the management plane.
const guardFleet = `
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: postgres}
spec:
  application: {kind: Postgres, plural: postgreses, singular: postgres, openAPISchema: "{}"}
  release: {prefix: postgres-, chartRef: {kind: ExternalArtifact, name: postgres, namespace: cozy-system}}
---
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: jupyterhub, annotations: {computeplane.dev/placement: ComputePlane}}
spec:
  application: {kind: JupyterHub, plural: jupyterhubs, singular: jupyterhub, openAPISchema: "{}"}
  release: {prefix: jupyterhub-, chartRef: {kind: ExternalArtifact, name: jupyterhub, namespace: cozy-system}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: acme, namespace: tenant-root}
spec: {computeplane: true}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: JupyterHub
metadata: {name: notebooks, namespace: tenant-acme}
spec: {size: small}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: db, namespace: tenant-acme}
`

// renderGuardFleet renders guardFleet under the config's spec and returns
// the whole output.
func renderGuardFleet(t testing.TB, spec string) []render.Object {
	t.Helper()
	return renderFleet(t, spec, guardFleet)
}

// renderFleet renders the inputs under the config's spec and returns the
// whole output.
func renderFleet(t testing.TB, spec, inputs string) []render.Object {
	t.Helper()
	cfgObjs, err := input.Decode([]byte("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata: {name: fleet}\nspec: "+spec+"\n"), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, problems := api.DecodeConfig(cfgObjs[0])
	if len(problems) > 0 {
		t.Fatalf("config refused: %v", problems)
	}
	objs, err := input.Decode([]byte(inputs), "fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run, problems := pipeline.Run(pipeline.Options{Config: cfg, Items: objs})
	if len(problems) > 0 {
		t.Fatalf("refused: %v", problems)
	}
	out := run.Objects
	return out
}

// objectJSON is an output object as JSON, as Flux reads it.
func objectJSON(t testing.TB, o render.Object) []byte {
	t.Helper()
	text, err := o.AppendYAML(nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := yaml.YAMLToJSON(text)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// guardObjects returns the rendered policy and binding, decoded strictly
// into the upstream API types (an unknown field fails the test).
func guardObjects(t testing.TB, out []render.Object) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	var policy *admissionv1.ValidatingAdmissionPolicy
	var binding *admissionv1.ValidatingAdmissionPolicyBinding
	for _, o := range out {
		// The shard-label policy or webhook is not the guard (shardlabel_test.go).
		if o.APIVersion != "admissionregistration.k8s.io/v1" || strings.HasPrefix(o.Kind, "Mutating") {
			continue
		}
		if o.Namespace != "" || !o.Platform || !o.Generated || !o.Account {
			t.Errorf("%s %s: namespace %q, platform %v, generated %v, the account's unit %v; want a cluster-scoped platform object in the account's unit", o.Kind, o.Name, o.Namespace, o.Platform, o.Generated, o.Account)
		}
		var into any
		switch o.Kind {
		case "ValidatingAdmissionPolicy":
			policy = &admissionv1.ValidatingAdmissionPolicy{}
			into = policy
		case "ValidatingAdmissionPolicyBinding":
			binding = &admissionv1.ValidatingAdmissionPolicyBinding{}
			into = binding
		default:
			t.Fatalf("unexpected %s", o.Kind)
		}
		if err := yaml.UnmarshalStrict(objectJSON(t, o), into); err != nil {
			t.Fatalf("%s: %v", o.Kind, err)
		}
	}
	if policy == nil || binding == nil {
		t.Fatalf("the output has no guard: policy %v, binding %v", policy != nil, binding != nil)
	}
	return policy, binding
}

func TestGuardShape(t *testing.T) {
	policy, binding := guardObjects(t, renderGuardFleet(t, "{}"))
	for _, m := range []map[string]string{policy.Labels, binding.Labels} {
		if m["app.kubernetes.io/managed-by"] != "computeplane-fn" {
			t.Errorf("labels %v: want the managed-by label", m)
		}
	}
	if policy.Name != wire.GuardName || binding.Name != wire.GuardName || binding.Spec.PolicyName != wire.GuardName {
		t.Errorf("names: policy %q, binding %q bound to %q; want %q", policy.Name, binding.Name, binding.Spec.PolicyName, wire.GuardName)
	}
	if fp := policy.Spec.FailurePolicy; fp == nil || *fp != admissionv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", fp)
	}
	if diff := cmp.Diff([]admissionv1.ValidationAction{admissionv1.Deny}, binding.Spec.ValidationActions); diff != "" {
		t.Errorf("validationActions (-want +got):\n%s", diff)
	}
	if binding.Spec.ParamRef != nil || binding.Spec.MatchResources != nil || policy.Spec.ParamKind != nil {
		t.Errorf("the guard takes no parameters and the binding narrows nothing")
	}
	for i, v := range policy.Spec.Validations {
		if v.MessageExpression == "" || v.Message == "" {
			t.Errorf("validation %d has no message or messageExpression", i)
		}
	}
	// The contract with the pull-request summary: the identity lists are
	// in the annotation, sorted, without duplicates.
	ids := guardIdentityAnnotation(t, policy)
	for name, want := range map[string][]string{
		wire.GuardFluxIdentitiesVariable:     {"system:serviceaccount:flux-system:computeplane-fleet"},
		wire.GuardHelmIdentitiesVariable:     api.DefaultHelmIdentities(),
		wire.GuardPlatformIdentitiesVariable: api.DefaultPlatformIdentities(),
	} {
		if diff := cmp.Diff(want, ids[name]); diff != "" {
			t.Errorf("annotation %s, %s (-want +got):\n%s", wire.GuardIdentitiesAnnotation, name, diff)
		}
	}
	// On the default platform (Kubernetes 1.33) the rules carry no
	// variables (kubernetes/kubernetes#135757): every reference is inlined.
	if len(policy.Spec.Variables) > 0 {
		t.Errorf("the guard for Kubernetes 1.33 has %d variables, want none", len(policy.Spec.Variables))
	}
	for i, v := range policy.Spec.Validations {
		if strings.Contains(v.Expression+v.MessageExpression, "variables") {
			t.Errorf("validation %d of the guard for Kubernetes 1.33 reads variables", i)
		}
	}
}

// guardIdentityAnnotation reads the policy's identity lists.
func guardIdentityAnnotation(t *testing.T, policy *admissionv1.ValidatingAdmissionPolicy) map[string][]string {
	t.Helper()
	var ids map[string][]string
	if err := json.Unmarshal([]byte(policy.Annotations[wire.GuardIdentitiesAnnotation]), &ids); err != nil {
		t.Fatalf("annotation %s = %q: %v", wire.GuardIdentitiesAnnotation, policy.Annotations[wire.GuardIdentitiesAnnotation], err)
	}
	return ids
}

// TestGuardIdentitiesFromConfig: the config's identities reach the
// annotation and, on Kubernetes 1.36, the variables the rules read.
func TestGuardIdentitiesFromConfig(t *testing.T) {
	policy, _ := guardObjects(t, renderGuardFleet(t, `{platform: {kubernetesVersion: "1.36"}, delivery: Platform, guard: {fluxIdentities: [b, "system:serviceaccount:cozy-fluxcd:flux", b], helmIdentities: [h], platformIdentities: [capk]}}`))
	got := map[string]string{}
	for _, v := range policy.Spec.Variables {
		got[v.Name] = v.Expression
	}
	want := map[string]string{
		wire.GuardFluxIdentitiesVariable:     `["b","system:serviceaccount:cozy-fluxcd:flux"]`,
		wire.GuardPlatformIdentitiesVariable: `["capk"]`,
		"clusterRelease":                     `"computeplane-cluster"`,
		"kubeconfigSecret":                   `"computeplane-cluster-admin-kubeconfig"`,
		"computePlaneKinds":                  `["JupyterHub"]`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("variable %s = %s, want %s", name, got[name], w)
		}
	}
	ids := guardIdentityAnnotation(t, policy)
	if diff := cmp.Diff([]string{"b", "system:serviceaccount:cozy-fluxcd:flux"}, ids[wire.GuardFluxIdentitiesVariable]); diff != "" {
		t.Errorf("annotation, %s (-want +got):\n%s", wire.GuardFluxIdentitiesVariable, diff)
	}
	if diff := cmp.Diff([]string{"capk"}, ids[wire.GuardPlatformIdentitiesVariable]); diff != "" {
		t.Errorf("annotation, %s (-want +got):\n%s", wire.GuardPlatformIdentitiesVariable, diff)
	}
}

func TestGuardDisabled(t *testing.T) {
	for _, o := range renderGuardFleet(t, "{guard: {enabled: false}}") {
		if o.APIVersion == "admissionregistration.k8s.io/v1" && o.Name == wire.GuardName {
			t.Errorf("guard off, yet the output holds %s %s", o.Kind, o.Name)
		}
	}
}

// Identities of the cases.
const (
	fleetAccount   = "system:serviceaccount:flux-system:computeplane-fleet"
	installer      = "system:serviceaccount:tenant-acme:computeplane-installer"
	otherInstaller = "system:serviceaccount:tenant-beta:computeplane-installer"
	rsController   = "system:serviceaccount:kube-system:replicaset-controller"
	admin          = "kubernetes-admin"
	fluxKustomize  = "system:serviceaccount:flux-system:kustomize-controller"
	cozyFlux       = "system:serviceaccount:cozy-fluxcd:flux"
	cozystackAPI   = "system:serviceaccount:cozy-system:cozystack-api"
	shardOperator  = "system:serviceaccount:cozy-fluxcd:flux-shard-operator"
	capk           = "system:serviceaccount:cozy-cluster-api:capk-manager"
	nsController   = "system:serviceaccount:kube-system:namespace-controller"
	tenantUser     = "alice"
)

var tenantGroups = []string{"tenant-acme-super-admin", "system:authenticated"}

// TestGuardAdmitsRenderedObjects: every rendered object the guard matches,
// created and updated by the fleet, is admitted; the routed releases and
// the cluster release (which runs as the installer), created by anyone
// else, are not.
func TestGuardAdmitsRenderedObjects(t *testing.T) { eachGuardForm(t, testGuardAdmitsRenderedObjects) }

func testGuardAdmitsRenderedObjects(t *testing.T, platform string) {
	out := renderGuardFleet(t, platform)
	policy, _ := guardObjects(t, out)
	g := compileGuard(t, policy)
	routed, matched := 0, 0
	for _, o := range out {
		if _, ok := guardResources[o.Kind]; !ok {
			continue
		}
		matched++
		text := string(objectJSON(t, o))
		name := o.Kind + " " + o.Namespace + "/" + o.Name
		checkAdmission(t, g, name+" created by the fleet", guardRequest{op: admission.Create, user: fleetAccount, object: text}, "")
		checkAdmission(t, g, name+" updated by the fleet", guardRequest{op: admission.Update, user: fleetAccount, object: text, oldObject: text}, "")
		// What the fleet applies at every reconcile reaches the rules only
		// when G1 may refuse it: a release of a kind placed on the
		// ComputePlane. Anyone's request to reconcile it (a metadata
		// change) is the same.
		kindLabel := strings.Contains(text, wire.RoutedKindLabel)
		requests := []guardRequest{
			{op: admission.Create, user: fleetAccount, object: text},
			{op: admission.Update, user: fleetAccount, object: text, oldObject: text},
		}
		if o.Kind == "HelmRelease" || o.Kind == "Kustomization" {
			annotated := edit(t, text, `"metadata":{`, `"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"now"},`)
			requests = append(requests, guardRequest{op: admission.Update, user: tenantUser, groups: tenantGroups, object: annotated, oldObject: text})
		}
		for _, r := range requests {
			if got := g.toRules(t, r); got != kindLabel {
				t.Errorf("%s %s by %s: the match condition passes it to the rules: %v, want %v", name, r.op, r.user, got, kindLabel)
			}
		}
		switch {
		case strings.Contains(text, "kubeConfig"):
			routed++
			// (The installer may: it reaches its own cluster.)
			for _, u := range []string{tenantUser, cozystackAPI, cozyFlux, fluxKustomize, otherInstaller} {
				checkAdmission(t, g, name+" created by "+u, guardRequest{op: admission.Create, user: u, groups: tenantGroups, object: text}, "only the fleet (system:serviceaccount:flux-system:computeplane-fleet) may set or change spec.kubeConfig")
			}
		case strings.Contains(text, "serviceAccountName"):
			for _, u := range []string{tenantUser, cozyFlux, installer} {
				checkAdmission(t, g, name+" created by "+u, guardRequest{op: admission.Create, user: u, groups: tenantGroups, object: text}, "spec.serviceAccountName computeplane-installer is the account of the fleet or of a ComputePlane's installer")
			}
		case o.Kind == "RoleBinding" || o.Kind == "ClusterRoleBinding":
			checkAdmission(t, g, name+" created by a tenant user", guardRequest{op: admission.Create, user: tenantUser, groups: tenantGroups, object: text}, "binds the fleet's or a ComputePlane installer's account or role")
			checkAdmission(t, g, name+" created by an administrator (bootstrap)", guardRequest{op: admission.Create, user: admin, groups: []string{"system:masters"}, object: text}, "")
		}
	}
	if routed == 0 || matched < 6 {
		t.Fatalf("the output holds %d routed releases and %d objects the guard matches", routed, matched)
	}
}

// A routed release as rendered, and variants of it.
const routedRelease = `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: jupyterhub-notebooks
  namespace: tenant-acme
  labels:
    app.kubernetes.io/managed-by: computeplane-fn
    computeplane.dev/application.kind: JupyterHub
    computeplane.dev/application.name: notebooks
spec:
  chartRef: {kind: ExternalArtifact, name: jupyterhub, namespace: cozy-system}
  interval: 5m
  kubeConfig:
    secretRef: {name: computeplane-admin-kubeconfig, key: super-admin.svc}
  values: {size: small}
`

// edit returns text with each old replaced by its new.
func edit(t *testing.T, text string, pairs ...string) string {
	t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(text, pairs[i]) {
			t.Fatalf("edit: %q not in the object", pairs[i])
		}
		text = strings.Replace(text, pairs[i], pairs[i+1], 1)
	}
	return text
}

func TestGuardRules(t *testing.T) { eachGuardForm(t, testGuardRules) }

func testGuardRules(t *testing.T, platform string) {
	policy, _ := guardObjects(t, renderGuardFleet(t, platform))
	g := compileGuard(t, policy)

	// cozystack-api's release of an app created through Cozystack's API.
	apiRelease := `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: jupyterhub-notebooks
  namespace: tenant-acme
  labels:
    apps.cozystack.io/application.kind: JupyterHub
    apps.cozystack.io/application.group: apps.cozystack.io
    apps.cozystack.io/application.name: notebooks
spec:
  chartRef: {kind: ExternalArtifact, name: jupyterhub, namespace: cozy-system}
  interval: 5m
  values: {size: small}
`
	postgresRelease := edit(t, apiRelease, "JupyterHub", "Postgres", "name: jupyterhub-notebooks", "name: postgres-db", "name: jupyterhub, namespace", "name: postgres, namespace")
	deleting := edit(t, apiRelease, "  namespace: tenant-acme\n", "  namespace: tenant-acme\n  deletionTimestamp: \"2026-01-01T00:00:00Z\"\n")
	addon := `
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: computeplane-cilium
  namespace: tenant-acme
  labels:
    cozystack.io/target-cluster-name: computeplane
    helm.toolkit.fluxcd.io/name: computeplane
    helm.toolkit.fluxcd.io/namespace: tenant-acme
    sharding.fluxcd.io/key: tenants
spec:
  releaseName: cilium
  chartRef: {kind: ExternalArtifact, name: cozystack-kubernetes-application-kubevirt-kubernetes-cilium, namespace: cozy-system}
  kubeConfig:
    secretRef: {name: computeplane-admin-kubeconfig, key: super-admin.svc}
  targetNamespace: cozy-cilium
  interval: 5m
`
	tenantClusterAddon := edit(t, addon, "computeplane-cilium", "kubernetes-dev-cilium", "name: computeplane-admin-kubeconfig", "name: kubernetes-dev-admin-kubeconfig",
		"helm.toolkit.fluxcd.io/name: computeplane", "helm.toolkit.fluxcd.io/name: kubernetes-dev")
	kustomization := `
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: stolen, namespace: tenant-acme}
spec:
  interval: 5m
  path: ./
  prune: true
  sourceRef: {kind: GitRepository, name: mine}
  kubeConfig:
    secretRef: {name: computeplane-admin-kubeconfig, key: super-admin.svc}
`
	worker := `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: computeplane-md0-abcde-fghij
  namespace: tenant-acme
  labels:
    cluster.x-k8s.io/cluster-name: computeplane
    cluster.x-k8s.io/role: worker
spec:
  runStrategy: Always
  template:
    spec:
      domain: {devices: {}}
      volumes: []
`
	workerOpened := edit(t, worker, "    cluster.x-k8s.io/role: worker\n", "    cluster.x-k8s.io/role: worker\n    policy.cozystack.io/allow-to-apiserver: \"true\"\n")
	workerUnlabelled := edit(t, worker, "    cluster.x-k8s.io/cluster-name: computeplane\n", "")
	workerRelabelled := edit(t, worker, "cluster-name: computeplane", "cluster-name: elsewhere")
	workerWithDB := edit(t, worker, "      volumes: []", "      volumes: [{name: db, persistentVolumeClaim: {claimName: postgres-db-data}}]")
	otherVM := edit(t, worker, "cluster-name: computeplane", "cluster-name: kubernetes-dev", "computeplane-md0", "kubernetes-dev-md0")
	otherVMChanged := edit(t, otherVM, "      volumes: []", "      volumes: [{name: db, persistentVolumeClaim: {claimName: x}}]")

	valuesFromKubeconfig := edit(t, postgresRelease, "  interval: 5m\n", "  interval: 5m\n  valuesFrom:\n  - {kind: Secret, name: computeplane-admin-kubeconfig, valuesKey: super-admin.svc, targetPath: kubeconfig}\n")
	substituteFromCA := edit(t, edit(t, kustomization, "  kubeConfig:\n    secretRef: {name: computeplane-admin-kubeconfig, key: super-admin.svc}\n", ""), "  prune: true\n", "  prune: true\n  postBuild:\n    substituteFrom:\n    - {kind: Secret, name: computeplane-ca}\n")
	asInstaller := edit(t, postgresRelease, "  interval: 5m\n", "  interval: 5m\n  serviceAccountName: computeplane-installer\n")
	asFleet := edit(t, edit(t, kustomization, "  kubeConfig:\n    secretRef: {name: computeplane-admin-kubeconfig, key: super-admin.svc}\n", ""), "metadata: {name: stolen, namespace: tenant-acme}", "metadata: {name: stolen, namespace: flux-system}", "  prune: true\n", "  prune: true\n  serviceAccountName: computeplane-fleet\n")
	podLabelled := `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: sneaky, namespace: tenant-acme}
spec:
  runStrategy: Always
  template:
    metadata:
      labels: {cluster.x-k8s.io/cluster-name: computeplane}
    spec:
      domain: {devices: {}}
`
	diskThief := `
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: thief, namespace: tenant-acme}
spec:
  runStrategy: Always
  template:
    spec:
      domain: {devices: {}}
      volumes:
      - name: system
        dataVolume: {name: computeplane-md0-abcde-fghij-disk-system}
`
	dataVolumeClone := `
apiVersion: cdi.kubevirt.io/v1beta1
kind: DataVolume
metadata: {name: copy, namespace: tenant-acme}
spec:
  source: {pvc: {name: computeplane-md0-abcde-fghij-disk-system, namespace: tenant-acme}}
  storage: {resources: {requests: {storage: 20Gi}}}
`
	pvcClone := `
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: copy, namespace: tenant-acme}
spec:
  accessModes: [ReadWriteOnce]
  dataSource: {kind: PersistentVolumeClaim, name: computeplane-md0-abcde-fghij-disk-system}
  resources: {requests: {storage: 20Gi}}
`
	snapshot := `
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: {name: copy, namespace: tenant-acme}
spec:
  source: {persistentVolumeClaimName: computeplane-md0-abcde-fghij-disk-system}
`
	vmSnapshot := `
apiVersion: snapshot.kubevirt.io/v1beta1
kind: VirtualMachineSnapshot
metadata: {name: copy, namespace: tenant-acme}
spec:
  source: {apiGroup: kubevirt.io, kind: VirtualMachine, name: computeplane-md0-abcde-fghij}
`
	vmExport := `
apiVersion: export.kubevirt.io/v1beta1
kind: VirtualMachineExport
metadata: {name: copy, namespace: tenant-acme}
spec:
  source: {apiGroup: "", kind: PersistentVolumeClaim, name: computeplane-md0-abcde-fghij-disk-system}
`
	installerPod := `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: tenant-acme}
spec:
  serviceAccountName: computeplane-installer
  containers: [{name: c, image: busybox}]
`
	installerToken := `
apiVersion: authentication.k8s.io/v1
kind: TokenRequest
metadata: {name: computeplane-installer, namespace: tenant-acme}
spec: {audiences: [https://kubernetes.default.svc]}
`
	installerTokenSecret := `
apiVersion: v1
kind: Secret
metadata:
  name: token
  namespace: tenant-acme
  annotations: {kubernetes.io/service-account.name: computeplane-installer}
type: kubernetes.io/service-account-token
`
	bindingToInstaller := `
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: more, namespace: tenant-acme}
roleRef: {kind: ClusterRole, name: admin, apiGroup: rbac.authorization.k8s.io}
subjects:
- {kind: ServiceAccount, name: computeplane-installer, namespace: tenant-acme}
`

	const (
		g1          = "JupyterHub apps run on the tenant's ComputePlane: add it to the fleet repository (HelmRelease tenant-acme/jupyterhub-notebooks must reach the ComputePlane through spec.kubeConfig.secretRef name computeplane-admin-kubeconfig, key super-admin.svc"
		g2          = "only the fleet (system:serviceaccount:flux-system:computeplane-fleet) may set or change spec.kubeConfig"
		g3Disks     = "only the platform's controllers may use them"
		g4Acct      = "is the account of the fleet or of a ComputePlane's installer"
		g4Cred      = "that account is the fleet's or a ComputePlane's installer"
		g4Bind      = "binds the fleet's or a ComputePlane installer's account or role"
		g3Owner     = "is a worker of the tenant's ComputePlane (cluster.x-k8s.io/cluster-name computeplane): only the platform's controllers may create, change or delete it"
		g3Label     = "the label cluster.x-k8s.io/cluster-name of a ComputePlane worker cannot be added, changed or removed"
		g2Installer = "installs the tenant's ComputePlane, and what it makes must reach that cluster"
	)
	create := func(user, obj string) guardRequest {
		return guardRequest{op: admission.Create, user: user, groups: tenantGroups, object: obj}
	}
	update := func(user, old, obj string) guardRequest {
		return guardRequest{op: admission.Update, user: user, groups: tenantGroups, object: obj, oldObject: old}
	}
	del := func(user, old string) guardRequest {
		return guardRequest{op: admission.Delete, user: user, groups: tenantGroups, oldObject: old}
	}
	for _, c := range []struct {
		name string
		req  guardRequest
		want string // "" admitted, else part of the denial
	}{
		// G1: an app of a kind, or a chart, placed on the ComputePlane reaches it.
		{"G1 cozystack-api creates a JupyterHub release without kubeConfig", create(cozystackAPI, apiRelease), g1},
		{"G1 a tenant user creates it", create(tenantUser, apiRelease), g1},
		{"G1 even the fleet cannot", create(fleetAccount, apiRelease), g1},
		{"G1 cozystack-api rebuilds a routed release without kubeConfig", update(cozystackAPI, routedRelease, apiRelease), g1},
		{"G1 the routed labels and kubeConfig dropped together", update(cozystackAPI, routedRelease, edit(t, routedRelease, "computeplane.dev/application.kind: JupyterHub", "app: x", "  kubeConfig:\n    secretRef: {name: computeplane-admin-kubeconfig, key: super-admin.svc}\n", "")), g1},
		{"G1 another Secret", create(fleetAccount, edit(t, routedRelease, "name: computeplane-admin-kubeconfig", "name: kubernetes-dev-admin-kubeconfig")), g1},
		{"G1 another key", create(fleetAccount, edit(t, routedRelease, "key: super-admin.svc", "key: admin.conf")), g1},
		{"G1 JupyterHub's chart without kind labels", create(tenantUser, edit(t, apiRelease, "    apps.cozystack.io/application.kind: JupyterHub\n", "")), "its chart runs on the tenant's ComputePlane"},
		{"G1 JupyterHub's chart, its namespace left out", create(tenantUser, edit(t, apiRelease, "    apps.cozystack.io/application.kind: JupyterHub\n", "", "name: jupyterhub, namespace: cozy-system", "name: jupyterhub")), ""},
		{"G1 the kind label in lower case", create(tenantUser, edit(t, apiRelease, "application.kind: JupyterHub", "application.kind: jupyterhub", "name: jupyterhub, namespace", "name: other, namespace")), "JupyterHub apps run"},
		{"G1 a management-plane kind is not routed", create(cozystackAPI, postgresRelease), ""},
		{"G1 a release being deleted may lose its finalizers", update(cozyFlux, deleting, deleting), ""},
		{"G1 the routed release as rendered, by the fleet", create(fleetAccount, routedRelease), ""},

		// G2: only the fleet sets a kubeConfig or reads a ComputePlane's
		// credentials; the installer its own cluster's.
		{"G2 a tenant user creates a routed release", create(tenantUser, routedRelease), g2},
		{"G2 cozystack-api creates it", create(cozystackAPI, routedRelease), g2},
		{"G2 Cozystack's Flux creates it", create(cozyFlux, routedRelease), g2},
		{"G2 kustomize-controller as itself creates it", create(fluxKustomize, routedRelease), g2},
		{"G2 a tenant user changes a routed release's values", update(tenantUser, routedRelease, edit(t, routedRelease, "size: small", "size: huge")), g2},
		{"G2 a tenant user changes its chart", update(tenantUser, routedRelease, edit(t, routedRelease, "name: jupyterhub, namespace", "name: anything, namespace")), g2},
		{"G2 a tenant user adds a kubeConfig", update(tenantUser, postgresRelease, edit(t, postgresRelease, "  interval: 5m\n", "  interval: 5m\n  kubeConfig: {secretRef: {name: computeplane-admin-kubeconfig, key: super-admin.svc}}\n")), g2},
		{"G2 a tenant user's Kustomization", create(tenantUser, kustomization), g2},
		{"G2 cozystack-api's Kustomization", create(cozystackAPI, kustomization), g2},
		{"G2 Cozystack's Flux's Kustomization", create(cozyFlux, kustomization), g2},
		{"G2 the fleet's Kustomization", create(fleetAccount, kustomization), ""},
		{"G2 the fleet changes a routed release", update(fleetAccount, routedRelease, edit(t, routedRelease, "size: small", "size: huge")), ""},
		{"G2 a label-only patch (Flux sharding)", update(shardOperator, routedRelease, edit(t, routedRelease, "    app.kubernetes.io/managed-by", "    sharding.fluxcd.io/key: shard-1\n    app.kubernetes.io/managed-by")), ""},
		{"G2 a suspend", update(tenantUser, routedRelease, edit(t, routedRelease, "  interval: 5m\n", "  interval: 5m\n  suspend: true\n")), ""},
		{"G2 the cluster chart's addon, by the installer", create(installer, addon), ""},
		{"G2 the addon updated by it", update(installer, addon, edit(t, addon, "interval: 5m", "interval: 10m")), ""},
		{"G2 the addon by another namespace's installer", create(otherInstaller, addon), g2},
		{"G2 the addon by Cozystack's helm-controller, origin labels and all", create(cozyFlux, addon), g2},
		{"G2 a chart hook of Cozystack's Flux forging the addon (pwn)", create(cozyFlux, edit(t, addon, "name: computeplane-cilium", "name: pwn", "name: cozystack-kubernetes-application-kubevirt-kubernetes-cilium", "name: anything")), g2},
		{"G2 the addon with forged origin labels, by a tenant user", create(tenantUser, addon), g2},
		{"G2 the addon with forged origin labels, by cozystack-api", create(cozystackAPI, addon), g2},
		{"G2 Kamaji's admin.conf (-kubeconfig, key value), by Cozystack's Flux", create(cozyFlux, edit(t, addon, "{name: computeplane-admin-kubeconfig, key: super-admin.svc}", "{name: computeplane-kubeconfig, key: value}")), g2},
		{"G2 the cluster's CA, by Cozystack's Flux", create(cozyFlux, edit(t, addon, "{name: computeplane-admin-kubeconfig, key: super-admin.svc}", "{name: computeplane-ca, key: tls.crt}")), g2},
		{"G2 the installer reaching another cluster", create(installer, tenantClusterAddon), g2},
		{"G2 a tenant Kubernetes app's addon, by Cozystack's helm-controller", create(cozyFlux, tenantClusterAddon), ""},
		{"G2 a tenant Kubernetes app's addon, by a tenant user", create(tenantUser, tenantClusterAddon), g2},
		{"G2 Cozystack's helm-controller moving a routed release", update(cozyFlux, routedRelease, edit(t, routedRelease, "name: computeplane-admin-kubeconfig", "name: kubernetes-dev-admin-kubeconfig")), g2},
		{"G2 valuesFrom the admin kubeconfig, by a tenant user", create(tenantUser, valuesFromKubeconfig), g2},
		{"G2 valuesFrom the admin kubeconfig, by Cozystack's Flux", create(cozyFlux, valuesFromKubeconfig), g2},
		{"G2 valuesFrom the admin kubeconfig, by the fleet", create(fleetAccount, valuesFromKubeconfig), ""},
		{"G2 valuesFrom the admin kubeconfig, by the installer, without a kubeConfig", create(installer, valuesFromKubeconfig), g2Installer},
		{"G2 valuesFrom the admin kubeconfig, by the installer, reaching its cluster", create(installer, edit(t, valuesFromKubeconfig, "  interval: 5m\n", "  interval: 5m\n  kubeConfig: {secretRef: {name: computeplane-admin-kubeconfig, key: super-admin.svc}}\n")), ""},
		{"G2 the installer making a release without kubeConfig", create(installer, postgresRelease), g2Installer},
		{"G2 the installer making a Kustomization without kubeConfig", create(installer, substituteFromCA), g2Installer},
		{"G2 the installer making a release of another cluster", create(installer, tenantClusterAddon), g2Installer},
		{"G2 the installer suspending its addon", update(installer, addon, edit(t, addon, "  interval: 5m\n", "  interval: 5m\n  suspend: true\n")), ""},
		{"G2 valuesFrom another Secret", create(tenantUser, edit(t, valuesFromKubeconfig, "name: computeplane-admin-kubeconfig", "name: my-values")), ""},
		{"G2 substituteFrom the CA, by a tenant user", create(tenantUser, substituteFromCA), g2},
		{"G2 substituteFrom the CA, by the fleet", create(fleetAccount, substituteFromCA), ""},
		{"G2 valuesFrom a worker's machine configuration", create(tenantUser, edit(t, valuesFromKubeconfig, "name: computeplane-admin-kubeconfig", "name: computeplane-md0-abcde-fghij-bootstrap-data")), g2},
		{"G2 valuesFrom Kamaji's datastore config", create(cozyFlux, edit(t, valuesFromKubeconfig, "name: computeplane-admin-kubeconfig", "name: computeplane-datastore-config")), g2},

		// G3: a ComputePlane's worker VMs and their disks are the platform's.
		{"G3 a tenant user opens a worker to the API server", update(tenantUser, worker, workerOpened), g3Owner},
		{"G3 a tenant user attaches a database volume", update(tenantUser, worker, workerWithDB), g3Owner},
		{"G3 a tenant user drops the cluster name", update(tenantUser, worker, workerUnlabelled), g3Label},
		{"G3 a tenant user deletes a worker", del(tenantUser, worker), g3Owner},
		{"G3 a tenant user forges a worker", create(tenantUser, worker), g3Owner},
		{"G3 a tenant user turns a VM into a worker", update(tenantUser, otherVM, edit(t, otherVM, "cluster-name: kubernetes-dev", "cluster-name: computeplane")), g3Label},
		{"G3 cozystack-api updates a worker", update(cozystackAPI, worker, workerOpened), g3Owner},
		{"G3 Cozystack's Flux forges a worker", create(cozyFlux, worker), g3Owner},
		{"G3 CAPK creates a worker", create(capk, worker), ""},
		{"G3 CAPK updates it", update(capk, worker, edit(t, worker, "runStrategy: Always", "runStrategy: Halted")), ""},
		{"G3 CAPK deletes it", del(capk, worker), ""},
		{"G3 the namespace controller deletes it", del(nsController, worker), ""},
		{"G3 nobody drops the cluster name, CAPK neither", update(capk, worker, workerUnlabelled), g3Label},
		{"G3 nobody changes it", update(capk, worker, workerRelabelled), g3Label},
		{"G3 a VM of another cluster is the tenant's", update(tenantUser, otherVM, otherVMChanged), ""},
		{"G3 and so is its deletion", del(tenantUser, otherVM), ""},
		{"G3 a VM with the worker's labels in its template only", create(tenantUser, podLabelled), g3Disks},
		{"G3 a VM with Kamaji's label in its template", create(tenantUser, edit(t, podLabelled, "cluster.x-k8s.io/cluster-name: computeplane", "kamaji.clastix.io/name: computeplane")), g3Disks},
		{"G3 a VM that mounts a worker's system disk", create(tenantUser, diskThief), g3Disks},
		{"G3 a VM that mounts it as a PVC", create(tenantUser, edit(t, diskThief, "dataVolume: {name: computeplane-md0-abcde-fghij-disk-system}", "persistentVolumeClaim: {claimName: computeplane-md0-abcde-fghij-disk-system}")), g3Disks},
		{"G3 a VM that clones it", create(tenantUser, edit(t, diskThief, "  template:", "  dataVolumeTemplates:\n  - metadata: {name: copy}\n    spec: {source: {pvc: {name: computeplane-md0-abcde-fghij-disk-system, namespace: tenant-acme}}}\n  template:", "dataVolume: {name: computeplane-md0-abcde-fghij-disk-system}", "dataVolume: {name: copy}")), g3Disks},
		{"G3 a tenant's own VM", create(tenantUser, edit(t, diskThief, "computeplane-md0-abcde-fghij-disk-system", "vm-disk-mine")), ""},
		{"G3 a DataVolume cloning a worker's disk", create(tenantUser, dataVolumeClone), g3Disks},
		{"G3 a PVC restored from it", create(tenantUser, pvcClone), g3Disks},
		{"G3 a VolumeSnapshot of it", create(tenantUser, snapshot), g3Disks},
		{"G3 a DataVolume of the tenant's own", create(tenantUser, edit(t, dataVolumeClone, "computeplane-md0-abcde-fghij-disk-system", "vm-disk-mine")), ""},
		{"G3 KubeVirt's controller copying it", create(capk, dataVolumeClone), ""},
		{"G3 a snapshot of a worker VM", create(tenantUser, vmSnapshot), g3Disks},
		{"G3 a snapshot of the tenant's own VM", create(tenantUser, edit(t, vmSnapshot, "name: computeplane-md0-abcde-fghij", "name: vm-instance-mine")), ""},
		{"G3 an export of a worker's disk", create(tenantUser, vmExport), g3Disks},

		// G4: the fleet's and the installers' accounts are the fleet's.
		{"G4 a tenant user's release running as the installer", create(tenantUser, asInstaller), g4Acct},
		{"G4 Cozystack's Flux's release running as the installer", create(cozyFlux, asInstaller), g4Acct},
		{"G4 the installer's own release running as the installer", create(installer, asInstaller), g4Acct},
		{"G4 the fleet's release running as the installer", create(fleetAccount, asInstaller), ""},
		{"G4 a tenant user switching a release to the installer", update(tenantUser, postgresRelease, asInstaller), g4Acct},
		{"G4 a shard label on the cluster release", update(shardOperator, asInstaller, edit(t, asInstaller, "  labels:\n", "  labels:\n    sharding.fluxcd.io/key: shard0\n")), ""},
		{"G4 a Kustomization running as the fleet, by Cozystack's Flux", create(cozyFlux, asFleet), g4Acct},
		{"G4 the bootstrap's root Kustomization, by an administrator", guardRequest{op: admission.Create, user: admin, groups: []string{"system:masters", "system:authenticated"}, object: asFleet}, ""},
		{"G4 the same, by a user who is no administrator", create(admin, asFleet), g4Acct},
		{"G4 a Kustomization naming computeplane-fleet elsewhere", create(tenantUser, edit(t, asFleet, "namespace: flux-system", "namespace: tenant-acme")), ""},
		{"G4 a pod of the installer, by a tenant user", create(tenantUser, installerPod), g4Cred},
		{"G4 a pod of the installer, by the ReplicaSet controller", create(rsController, installerPod), g4Cred},
		{"G4 a pod of the fleet's account", create(tenantUser, edit(t, installerPod, "namespace: tenant-acme", "namespace: flux-system", "serviceAccountName: computeplane-installer", "serviceAccountName: computeplane-fleet")), g4Cred},
		{"G4 a pod of another account", create(tenantUser, edit(t, installerPod, "serviceAccountName: computeplane-installer", "serviceAccountName: default")), ""},
		{"G4 a token of the installer", create(tenantUser, installerToken), g4Cred},
		{"G4 a token of another account", create(tenantUser, edit(t, installerToken, "name: computeplane-installer", "name: default")), ""},
		{"G4 a token Secret of the installer", create(tenantUser, installerTokenSecret), g4Cred},
		{"G4 a Secret of the tenant's own", create(tenantUser, edit(t, installerTokenSecret, "type: kubernetes.io/service-account-token", "type: Opaque")), ""},
		{"G4 a RoleBinding giving the installer more", create(tenantUser, bindingToInstaller), g4Bind},
		{"G4 a RoleBinding giving a user the installer's role", create(tenantUser, edit(t, bindingToInstaller, "{kind: ClusterRole, name: admin, apiGroup: rbac.authorization.k8s.io}", "{kind: ClusterRole, name: computeplane-installer, apiGroup: rbac.authorization.k8s.io}", "{kind: ServiceAccount, name: computeplane-installer, namespace: tenant-acme}", "{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}")), g4Bind},
		{"G4 a ClusterRoleBinding to a tenant's cluster rights", create(tenantUser, edit(t, bindingToInstaller, "kind: RoleBinding", "kind: ClusterRoleBinding", "name: admin,", "name: computeplane-installer-tenant-acme,", "{kind: ServiceAccount, name: computeplane-installer, namespace: tenant-acme}", "{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}")), g4Bind},
		{"G4 a RoleBinding to the installer by its user name", create(tenantUser, edit(t, bindingToInstaller, "{kind: ServiceAccount, name: computeplane-installer, namespace: tenant-acme}", "{kind: User, name: \"system:serviceaccount:tenant-acme:computeplane-installer\", apiGroup: rbac.authorization.k8s.io}")), g4Bind},
		{"G4 a RoleBinding to the fleet by its user name", create(tenantUser, edit(t, bindingToInstaller, "{kind: ServiceAccount, name: computeplane-installer, namespace: tenant-acme}", "{kind: User, name: \"system:serviceaccount:flux-system:computeplane-fleet\", apiGroup: rbac.authorization.k8s.io}")), g4Bind},
		{"G4 a RoleBinding of the tenant's own", create(tenantUser, edit(t, bindingToInstaller, "{kind: ServiceAccount, name: computeplane-installer, namespace: tenant-acme}", "{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}")), ""},
		{"G4 the fleet's own binding of the installer", create(fleetAccount, bindingToInstaller), ""},
	} {
		checkAdmission(t, g, c.name, c.req, c.want)
	}
}

// TestGuardReleaseCost: a HelmRelease near the API server's request limit
// (values of about 1 MiB in 4,000 keys, 1,000 valuesFrom entries, every
// field of the spec changed) is evaluated within the runtime cost budget
// by each form of the guard: inlined, the expressions that read the spec
// run once for each rule that reads them.
func TestGuardReleaseCost(t *testing.T) { eachGuardForm(t, testGuardReleaseCost) }

func testGuardReleaseCost(t *testing.T, platform string) {
	policy, _ := guardObjects(t, renderGuardFleet(t, platform))
	g := compileGuard(t, policy)
	var values, valuesFrom []string
	for i := range 4000 {
		values = append(values, fmt.Sprintf("k%d: %q", i, strings.Repeat("v", 256)))
	}
	for i := range 1000 {
		valuesFrom = append(valuesFrom, fmt.Sprintf("{kind: Secret, name: c%d}", i))
	}
	release := func(version string) string {
		return fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: big, namespace: tenant-acme}
spec:
  chartRef: {kind: OCIRepository, name: big-%s}
  interval: 5m
  values: {%s}
  valuesFrom: [%s]
`, version, strings.Join(values, ", "), strings.Join(valuesFrom, ", "))
	}
	for _, u := range []string{tenantUser, fleetAccount} {
		checkAdmission(t, g, "a large release created by "+u, guardRequest{op: admission.Create, user: u, groups: tenantGroups, object: release("a")}, "")
		checkAdmission(t, g, "a large release updated by "+u, guardRequest{op: admission.Update, user: u, groups: tenantGroups, object: release("b"), oldObject: release("a")}, "")
	}
}
