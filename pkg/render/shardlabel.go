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
	if f.Config.Releases.ShardLabel == api.ShardLabelWebhook {
		return renderShardLabelWebhook(f)
	}
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

// renderShardLabelWebhook builds the MutatingWebhookConfiguration of
// spec.releases.shardLabel: Webhook, for platforms that serve no
// MutatingAdmissionPolicy: the create of a HelmRelease the function
// rendered that has no shard label goes to flux-shard-operator's own
// webhook, which adds the shard it has recorded for the release's tenant
// (Cozystack's registration sends it only releases born with tenants).
// What a webhook adds during a request belongs to no field manager, so
// kustomize-controller, which applies the release without the label,
// never takes it back; the operator's placement controller, which sees
// only labelled releases, then keeps the release on its tenant's shard and
// may move it. The operator's webhook mutates creates only, so an update
// is never sent; and it is called as Cozystack calls it, failing open
// (failurePolicy Ignore, as the operator's own registration): a release
// created while the operator is down, or before the operator has recorded
// its tenant's shard, is born without the label and stays on the main
// helm-controller (docs/flux-wiring.md says how to hand it over). The CA
// comes from cert-manager, from the operator's own Certificate.
func renderShardLabelWebhook(f *model.Fleet) ([]Object, error) {
	ignore := admissionv1.Ignore
	none := admissionv1.SideEffectClassNone
	equivalent := admissionv1.Equivalent
	never := admissionv1.NeverReinvocationPolicy
	timeout := int32(5)
	path := wire.ShardOperatorWebhookPath
	hooks := admissionv1.MutatingWebhookConfiguration{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        wire.ShardLabelPolicyName,
			Labels:      managedLabels(nil),
			Annotations: map[string]string{wire.CertManagerInjectCA: wire.ShardOperatorCertificate},
		},
		Webhooks: []admissionv1.MutatingWebhook{{
			Name:                    "release-shard.computeplane.dev",
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &ignore,
			MatchPolicy:             &equivalent,
			ReinvocationPolicy:      &never,
			TimeoutSeconds:          &timeout,
			ClientConfig: admissionv1.WebhookClientConfig{
				Service: &admissionv1.ServiceReference{Namespace: wire.ShardOperatorNamespace, Name: wire.ShardOperatorService, Path: &path},
			},
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{
					APIGroups: []string{"helm.toolkit.fluxcd.io"}, APIVersions: []string{"*"}, Resources: []string{"helmreleases"},
				},
			}},
			ObjectSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{wire.ManagedByLabel: wire.ManagedByValue},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: wire.ShardingLabel, Operator: metav1.LabelSelectorOpDoesNotExist},
				},
			},
		}},
	}
	return platformObjects(f, &hooks)
}
