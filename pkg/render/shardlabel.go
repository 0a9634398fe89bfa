package render

import (
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// shardLabelRendered reports whether a release carries the shard label in
// the render: only under spec.releases.shardLabel: Rendered. Otherwise the
// label that Cozystack's definitions give every tenant release (tenants) is
// left to the admission policy (Admission), so that it belongs to no field
// manager: kustomize-controller then never reverts the shard
// flux-shard-operator writes there; or to nobody (Omitted, where the
// platform serves no MutatingAdmissionPolicy), so that the release stays on
// the main helm-controller (docs/flux-wiring.md, "helm-controller shards").
func shardLabelRendered(f *model.Fleet, value string) bool {
	return value != wire.ShardingTenants || f.Config.Releases.ShardLabel == api.ShardLabelRendered
}

// RenderShardLabelPolicy builds the MutatingAdmissionPolicy that sets
// sharding.fluxcd.io/key: tenants on a HelmRelease the function rendered
// (managed-by label) when it has no shard label, on create and on update,
// and its binding; nothing under spec.releases.shardLabel: Rendered. What
// an admission policy adds is owned by no field manager, so
// kustomize-controller, which applies the release without the label, leaves
// it alone; flux-shard-operator's webhook (which runs after the policies,
// on create) and its placement controller then write the tenant's shard
// there, and that stays. Config.Validate refuses Admission where the
// platform does not serve the policy's kind.
func RenderShardLabelPolicy(f *model.Fleet) ([]Object, error) {
	if f.Config.Releases.ShardLabel != api.ShardLabelAdmission {
		return nil, nil
	}
	fail := admissionv1.Fail
	equivalent := admissionv1.Equivalent
	policy := admissionv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: wire.ShardLabelPolicyName, Labels: managedLabels(nil)},
		Spec: admissionv1.MutatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{
				MatchPolicy: &equivalent,
				ObjectSelector: &metav1.LabelSelector{
					MatchLabels: map[string]string{wire.ManagedByLabel: wire.ManagedByValue},
					MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: wire.ShardingLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
					},
				},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionv1.RuleWithOperations{
						Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
						Rule: admissionv1.Rule{
							APIGroups: []string{"helm.toolkit.fluxcd.io"}, APIVersions: []string{"*"}, Resources: []string{"helmreleases"},
						},
					},
				}},
			},
			// On update the object selector matches the old object too.
			// The expressions are written on several lines, as the
			// guard's are: kustomize and kubectl keep them in literal
			// blocks, and fold a long single line.
			MatchConditions: []admissionv1.MatchCondition{{
				Name:       "no-shard-label",
				Expression: "!has(object.metadata.labels) ||\n!('" + wire.ShardingLabel + "' in object.metadata.labels)",
			}},
			Mutations: []admissionv1.Mutation{{
				PatchType: admissionv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionv1.ApplyConfiguration{
					Expression: "Object{metadata: Object.metadata{labels: {\n  \"" + wire.ShardingLabel + "\": \"" + wire.ShardingTenants + "\"}}}",
				},
			}},
			ReinvocationPolicy: admissionv1.NeverReinvocationPolicy,
		},
	}
	binding := admissionv1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: wire.ShardLabelPolicyName, Labels: managedLabels(nil)},
		Spec:       admissionv1.MutatingAdmissionPolicyBindingSpec{PolicyName: wire.ShardLabelPolicyName},
	}
	return platformObjects(f, &policy, &binding)
}
