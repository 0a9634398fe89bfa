package render

import (
	"encoding/json"
	"fmt"
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// The guard's CEL. The values of the fleet come in as variables (see
// guardVariables); what follows is the same for every fleet.
//
// HelmReleases and Kustomizations are matched on CREATE and UPDATE, VMs on
// CREATE, UPDATE and DELETE (matchConstraints), so object is null only for
// a VM's DELETE and oldObject only on CREATE; every expression says so.
// Status updates go to the status subresource, which the policy does not
// match: controllers' status writes never reach it.
const (
	celIsHelmRelease = `request.resource.group == 'helm.toolkit.fluxcd.io' &&
request.resource.resource == 'helmreleases'`
	celIsFluxObject = `variables.isHelmRelease ||
(request.resource.group == 'kustomize.toolkit.fluxcd.io' &&
  request.resource.resource == 'kustomizations')`
	celIsVirtualMachine = `request.resource.group == 'kubevirt.io' &&
request.resource.resource == 'virtualmachines'`
	celFromFlux     = `request.userInfo.username in variables.fluxIdentities`
	celFromPlatform = `request.userInfo.username in variables.platformIdentities`

	// routedKinds: the kinds placed on the ComputePlane that the labels of
	// the object, or of the object before the update (so that dropping the
	// label does not leave the rule), name.
	celRoutedKinds = `!variables.isHelmRelease ? [] :
variables.computePlaneKinds.filter(k, [object, oldObject].exists(o,
  o != null && has(o.metadata.labels) &&
  ['` + wire.ApplicationKindLabel + `', '` + wire.RoutedKindLabel + `'].exists(l,
    l in o.metadata.labels && o.metadata.labels[l] == k)))`

	// kubeConfig as it is before and after the request; null when unset.
	celNewKubeConfig = `object != null && has(object.spec) && has(object.spec.kubeConfig) ?
object.spec.kubeConfig : null`
	celOldKubeConfig = `oldObject != null && has(oldObject.spec) && has(oldObject.spec.kubeConfig) ?
oldObject.spec.kubeConfig : null`

	// setsKubeConfig: a HelmRelease or Kustomization created with a
	// kubeConfig, or updated so that its kubeConfig is added, changed or
	// removed, or any other field of the spec of a release that has one
	// changes (what runs with a kubeConfig is as sensitive as the
	// kubeConfig). spec.suspend alone is not a change: suspending a release
	// moves nothing. Changes of metadata only (labels of Flux's sharding,
	// finalizers, reconcile requests) are not in scope.
	celSetsKubeConfig = `variables.isFluxObject &&
(variables.newKubeConfig != null || variables.oldKubeConfig != null) &&
(request.operation == 'CREATE' ||
  variables.newKubeConfig != variables.oldKubeConfig ||
  object.spec.exists(k, k != 'suspend' &&
    (!(k in oldObject.spec) || object.spec[k] != oldObject.spec[k])) ||
  oldObject.spec.exists(k, k != 'suspend' && !(k in object.spec)))`

	// namesClusterSecret: the new kubeConfig reads the ComputePlane's admin
	// kubeconfig Secret.
	celNamesClusterSecret = `variables.newKubeConfig != null &&
has(variables.newKubeConfig.secretRef) &&
variables.newKubeConfig.secretRef.name == variables.kubeconfigSecret`

	// fromClusterChart: the object carries helm-controller's origin labels
	// of the ComputePlane's own release in its namespace (its addons).
	celFromClusterChart = `object != null && has(object.metadata.labels) &&
'` + wire.HelmOriginNameLabel + `' in object.metadata.labels &&
object.metadata.labels['` + wire.HelmOriginNameLabel + `'] == variables.clusterRelease &&
'` + wire.HelmOriginNamespaceLabel + `' in object.metadata.labels &&
object.metadata.labels['` + wire.HelmOriginNamespaceLabel + `'] == object.metadata.namespace`

	// The VM's cluster name before and after the request; "" when unset.
	celOldVMCluster = `oldObject != null && has(oldObject.metadata.labels) &&
'` + ClusterNameLabel + `' in oldObject.metadata.labels ?
oldObject.metadata.labels['` + ClusterNameLabel + `'] : ''`
	celNewVMCluster = `object != null && has(object.metadata.labels) &&
'` + ClusterNameLabel + `' in object.metadata.labels ?
object.metadata.labels['` + ClusterNameLabel + `'] : ''`
	celIsWorker = `variables.isVirtualMachine &&
(variables.oldVMCluster == variables.clusterRelease ||
  variables.newVMCluster == variables.clusterRelease)`

	// The request's object, for messages: namespace/name.
	celTarget = `(object != null ? object : oldObject).metadata.namespace + '/' +
  (object != null ? object : oldObject).metadata.name`
)

// The rules: expression (true admits) and messageExpression. They are
// written on several lines: what kustomize and kubectl write back (YAML
// with 80-column folding) then keeps them in the same literal blocks, and
// the output of a kustomize build is byte for byte the function's.
const (
	// G1: a release of a kind placed on the ComputePlane runs there. A
	// release being deleted may still lose its finalizers.
	celG1 = `size(variables.routedKinds) == 0 ||
has(object.metadata.deletionTimestamp) ||
(variables.newKubeConfig != null &&
  has(variables.newKubeConfig.secretRef) &&
  variables.newKubeConfig.secretRef.name == variables.kubeconfigSecret &&
  has(variables.newKubeConfig.secretRef.key) &&
  variables.newKubeConfig.secretRef.key == variables.kubeconfigKey)`
	msgG1 = `variables.routedKinds[0] +
  " apps run on the tenant's ComputePlane: add it to the fleet repository (HelmRelease " +
  ` + celTarget + ` +
  " must reach the ComputePlane through spec.kubeConfig.secretRef name " +
  variables.kubeconfigSecret + ", key " + variables.kubeconfigKey +
  "; without it the app would run on the management cluster)"`

	// G2: only Flux sets a kubeConfig; the platform's controllers too, but
	// one naming the ComputePlane's Secret only from its own chart.
	celG2 = `!variables.setsKubeConfig || variables.fromFlux ||
(variables.fromPlatform &&
  (!variables.namesClusterSecret || variables.fromClusterChart))`
	msgG2 = `request.kind.kind + " " +
  ` + celTarget + ` +
  ": only Flux (" + variables.fluxIdentities.join(", ") +
  ") may set or change spec.kubeConfig, or change the spec of a release that has one, and " +
  request.userInfo.username +
  " is not Flux; a release that reaches another cluster belongs in the fleet repository"`

	// G3a: a ComputePlane's worker VMs are the platform's.
	celG3Owner = `!variables.isWorker || variables.fromPlatform`
	msgG3Owner = `"VirtualMachine " +
  ` + celTarget + ` +
  " is a worker of the tenant's ComputePlane (` + ClusterNameLabel + ` " +
  variables.clusterRelease +
  "): only the platform's controllers may create, change or delete it, and " +
  request.userInfo.username +
  " is not one of them; change the ComputePlane (its node groups) in the fleet repository"`

	// G3b: and keep their cluster name, whoever asks.
	celG3Label = `!variables.isWorker || request.operation != 'UPDATE' ||
variables.oldVMCluster == variables.newVMCluster`
	msgG3Label = `"VirtualMachine " +
  ` + celTarget + ` +
  ": the label ` + ClusterNameLabel + ` of a ComputePlane worker cannot be added, changed or removed (it was '" +
  variables.oldVMCluster + "', the update makes it '" + variables.newVMCluster +
  "'); the egress policy of the ComputePlane selects its VMs by it"`
)

// guardValues are the fleet's values the guard's variables carry.
type guardValues struct {
	FluxIdentities     []string
	PlatformIdentities []string
	ComputePlaneKinds  []string
	ClusterRelease     string
}

// celLiteral writes v as a CEL literal in JSON syntax (a list of strings or
// a string), which CEL reads as written.
func celLiteral(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("failed to encode a guard variable: %w", err)
	}
	return string(data), nil
}

// sortedUnique returns the strings sorted, without duplicates, never nil
// (an empty list is [] in CEL, not null).
func sortedUnique(in []string) []string {
	out := append([]string{}, in...)
	slices.Sort(out)
	return slices.Compact(out)
}

func guardVariables(v guardValues) ([]admissionv1.Variable, error) {
	literals := []struct {
		name  string
		value any
	}{
		{wire.GuardFluxIdentitiesVariable, sortedUnique(v.FluxIdentities)},
		{wire.GuardPlatformIdentitiesVariable, sortedUnique(v.PlatformIdentities)},
		{"computePlaneKinds", sortedUnique(v.ComputePlaneKinds)},
		{"clusterRelease", v.ClusterRelease},
		{"kubeconfigSecret", fleet.KubeconfigSecret(v.ClusterRelease)},
		{"kubeconfigKey", fleet.KubeconfigKey},
	}
	vars := make([]admissionv1.Variable, 0, len(literals)+16)
	for _, l := range literals {
		expr, err := celLiteral(l.value)
		if err != nil {
			return nil, err
		}
		vars = append(vars, admissionv1.Variable{Name: l.name, Expression: expr})
	}
	// Later variables read earlier ones.
	for _, d := range [][2]string{
		{"isHelmRelease", celIsHelmRelease},
		{"isFluxObject", celIsFluxObject},
		{"isVirtualMachine", celIsVirtualMachine},
		{"fromFlux", celFromFlux},
		{"fromPlatform", celFromPlatform},
		{"routedKinds", celRoutedKinds},
		{"newKubeConfig", celNewKubeConfig},
		{"oldKubeConfig", celOldKubeConfig},
		{"setsKubeConfig", celSetsKubeConfig},
		{"namesClusterSecret", celNamesClusterSecret},
		{"fromClusterChart", celFromClusterChart},
		{"oldVMCluster", celOldVMCluster},
		{"newVMCluster", celNewVMCluster},
		{"isWorker", celIsWorker},
	} {
		vars = append(vars, admissionv1.Variable{Name: d[0], Expression: d[1]})
	}
	return vars, nil
}

// guardValidations are the rules G1, G2 and G3 of SPEC 3.5.
func guardValidations() []admissionv1.Validation {
	forbidden := metav1.StatusReasonForbidden
	return []admissionv1.Validation{
		{Expression: celG1, MessageExpression: msgG1, Reason: &forbidden,
			Message: "this kind runs on the ComputePlane: add it to the fleet repo"},
		{Expression: celG2, MessageExpression: msgG2, Reason: &forbidden,
			Message: "only Flux may set or change spec.kubeConfig"},
		{Expression: celG3Owner, MessageExpression: msgG3Owner, Reason: &forbidden,
			Message: "only the platform may change a ComputePlane's worker VMs"},
		{Expression: celG3Label, MessageExpression: msgG3Label, Reason: &forbidden,
			Message: "the cluster name of a ComputePlane worker cannot change"},
	}
}

// guardRules are what the policy matches: every version of each kind
// (matchPolicy Equivalent then also matches a request through another
// version), main resources only.
func guardRules() []admissionv1.NamedRuleWithOperations {
	rule := func(group, resource string, ops ...admissionv1.OperationType) admissionv1.NamedRuleWithOperations {
		return admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: ops,
			Rule:       admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}},
		}}
	}
	return []admissionv1.NamedRuleWithOperations{
		rule("helm.toolkit.fluxcd.io", "helmreleases", admissionv1.Create, admissionv1.Update),
		rule("kustomize.toolkit.fluxcd.io", "kustomizations", admissionv1.Create, admissionv1.Update),
		rule("kubevirt.io", "virtualmachines", admissionv1.Create, admissionv1.Update, admissionv1.Delete),
	}
}

// RenderGuard builds the management-plane guard of SPEC 3.5: the
// ValidatingAdmissionPolicy computeplane-guard and its binding, cluster-scoped
// platform objects, from the fleet's guard config, the kinds its
// definitions place on the ComputePlane and the cluster's release name.
//
// Rules (each a validation with a messageExpression):
//
//   - G1: a HelmRelease labelled apps.cozystack.io/application.kind or
//     computeplane.dev/application.kind (before or after the update) with a
//     kind placed on the ComputePlane must set spec.kubeConfig.secretRef to
//     {name: <release>-admin-kubeconfig, key: super-admin.svc}, whoever
//     asks; a release being deleted is exempt.
//   - G2: a HelmRelease or Kustomization that is created with a
//     spec.kubeConfig, or whose kubeConfig is added, changed or removed, or
//     whose spec (but spec.suspend) changes while it has one, comes from
//     guard.fluxIdentities; or from guard.platformIdentities, which may name
//     the ComputePlane's Secret only in an object helm-controller applied
//     from the ComputePlane's own release (its origin labels), as the
//     cluster chart's addon releases are.
//   - G3: a kubevirt.io VirtualMachine whose cluster.x-k8s.io/cluster-name is
//     the cluster's release, before or after the request, is created,
//     changed and deleted only by guard.platformIdentities (a tenant cannot
//     forge a worker either), and no update adds, changes or removes that
//     label.
//
// Cases for a real API server (the end-to-end suite), with the defaults:
//
//   - G1 denied: HelmRelease tenant-acme/jupyterhub-notebooks labelled
//     apps.cozystack.io/application.kind: JupyterHub without kubeConfig,
//     created as system:serviceaccount:cozy-system:cozystack-api, as a
//     tenant user (alice, groups tenant-acme-admins) and as Flux;
//     admitted: the rendered routed release, applied as Flux.
//   - G2 denied: a HelmRelease or Kustomization with
//     spec.kubeConfig.secretRef computeplane-admin-kubeconfig created by a
//     tenant user, by cozystack-api, or by
//     system:serviceaccount:cozy-fluxcd:flux without helm-controller's
//     origin labels of release computeplane; a rendered routed release
//     whose chartRef or values a tenant user changes; admitted: the
//     rendered releases applied as
//     system:serviceaccount:flux-system:kustomize-controller, an addon
//     release computeplane-cilium labelled helm.toolkit.fluxcd.io/name:
//     computeplane and .../namespace: tenant-acme created as
//     system:serviceaccount:cozy-fluxcd:flux, a label-only patch (Flux's
//     sharding) and a suspend by anyone allowed to update releases.
//   - G3 denied: a tenant user updating, relabelling (dropping the label or
//     adding policy.cozystack.io/allow-to-apiserver), deleting or creating
//     a VM labelled cluster.x-k8s.io/cluster-name: computeplane in
//     tenant-acme; capk-manager removing that label; admitted: the same as
//     system:serviceaccount:cozy-cluster-api:capk-manager (create, update
//     keeping the label, delete), and any change to a VM of another
//     cluster.
func RenderGuard(f *fleet.Fleet) ([]Object, error) {
	g := f.Config.Guard
	var kinds []string
	for kind, d := range f.Definitions {
		if d.Placement == api.PlacementComputePlane {
			kinds = append(kinds, kind)
		}
	}
	vars, err := guardVariables(guardValues{
		FluxIdentities:     g.FluxIdentities,
		PlatformIdentities: g.PlatformIdentities,
		ComputePlaneKinds:  kinds,
		ClusterRelease:     f.ClusterRelease(),
	})
	if err != nil {
		return nil, err
	}
	fail := admissionv1.Fail
	equivalent := admissionv1.Equivalent
	policy := admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: wire.GuardName, Labels: managedLabels(nil)},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{
				MatchPolicy:   &equivalent,
				ResourceRules: guardRules(),
			},
			Variables:   vars,
			Validations: guardValidations(),
		},
	}
	binding := admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: wire.GuardName, Labels: managedLabels(nil)},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        wire.GuardName,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	out := make([]Object, 0, 2)
	for _, obj := range []struct {
		v          any
		kind, name string
	}{{&policy, policy.Kind, policy.Name}, {&binding, binding.Kind, binding.Name}} {
		n, err := TypedNode(obj.v)
		if err != nil {
			return nil, err
		}
		out = append(out, Object{
			Body: NodeBody(n), APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: obj.kind, Name: obj.name,
			Platform: true, Generated: true, From: f.Config.Ref, Origin: f.Config.Origin,
		})
	}
	return out, nil
}
