package render_test

import (
	"slices"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// shardLabels are the sharding.fluxcd.io/key labels of the rendered
// HelmReleases ("-" for none), by name.
func shardLabels(t *testing.T, out []render.Object) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, o := range out {
		if o.Kind != "HelmRelease" {
			continue
		}
		var hr struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(objectJSON(t, o), &hr); err != nil {
			t.Fatal(err)
		}
		v, ok := hr.Metadata.Labels[wire.ShardingLabel]
		if !ok {
			v = "-"
		}
		got[o.Namespace+"/"+o.Name] = v
	}
	return got
}

// TestShardLabelAdmission: by default no release carries the shard label;
// on Kubernetes 1.36 the policy that gives it (and the fleet's right to
// apply it) is rendered, below it (the default 1.33) the webhook
// configuration instead (TestShardLabelWebhook); under Rendered the
// cluster release carries tenants (the apps what their definitions say:
// none here) and no policy is rendered. The fleet may apply and prune the
// policy under every value on 1.36.
func TestShardLabelAdmission(t *testing.T) {
	for _, c := range []struct {
		spec, label string
		policy      bool
		spec136     bool // the platform serves MutatingAdmissionPolicy
	}{
		{"{}", "-", false, false},
		{"{releases: {shardLabel: Omitted}}", "-", false, false},
		{"{releases: {shardLabel: Rendered}}", wire.ShardingTenants, false, false},
		{"{platform: {shardOperator: Absent}}", wire.ShardingTenants, false, false},
		{`{platform: {kubernetesVersion: "1.36"}}`, "-", true, true},
		{`{platform: {kubernetesVersion: "1.36"}, releases: {shardLabel: Admission}}`, "-", true, true},
		{`{platform: {kubernetesVersion: "1.36"}, releases: {shardLabel: Omitted}}`, "-", false, true},
		{`{platform: {kubernetesVersion: "1.36"}, releases: {shardLabel: Rendered}}`, wire.ShardingTenants, false, true},
	} {
		out := renderGuardFleet(t, c.spec)
		labels := shardLabels(t, out)
		if len(labels) == 0 {
			t.Fatalf("%s: no HelmRelease rendered", c.spec)
		}
		for name, v := range labels {
			want := "-"
			if name == "tenant-acme/computeplane" {
				want = c.label
			}
			if v != want {
				t.Errorf("%s: HelmRelease %s has %s %q, want %q", c.spec, name, wire.ShardingLabel, v, want)
			}
		}
		if _, ok := labels["tenant-acme/computeplane"]; !ok {
			t.Fatalf("%s: no cluster release tenant-acme/computeplane among %v", c.spec, labels)
		}
		var policy *admissionv1.MutatingAdmissionPolicy
		var binding *admissionv1.MutatingAdmissionPolicyBinding
		var fleetRole *rbacv1.ClusterRole
		for _, o := range out {
			var into any
			switch {
			case o.Kind == "MutatingAdmissionPolicy":
				policy = &admissionv1.MutatingAdmissionPolicy{}
				into = policy
			case o.Kind == "MutatingAdmissionPolicyBinding":
				binding = &admissionv1.MutatingAdmissionPolicyBinding{}
				into = binding
			case o.Kind == "ClusterRole" && o.Name == "computeplane-fleet":
				fleetRole = &rbacv1.ClusterRole{}
				into = fleetRole
			default:
				continue
			}
			if o.Name != wire.ShardLabelPolicyName && o.Kind != "ClusterRole" || !o.Platform {
				t.Errorf("%s: %s %s (platform %v), want %s, a platform object", c.spec, o.Kind, o.Name, o.Platform, wire.ShardLabelPolicyName)
			}
			if err := yaml.UnmarshalStrict(objectJSON(t, o), into); err != nil {
				t.Fatalf("%s: %s: %v", c.spec, o.Kind, err)
			}
		}
		if (policy != nil) != c.policy || (binding != nil) != c.policy {
			t.Fatalf("%s: policy %v, binding %v, want %v", c.spec, policy != nil, binding != nil, c.policy)
		}
		if fleetRole == nil {
			t.Fatalf("%s: no ClusterRole computeplane-fleet", c.spec)
		}
		mayApply := slices.ContainsFunc(fleetRole.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.Resources, "mutatingadmissionpolicies") && slices.Contains(r.Resources, "mutatingadmissionpolicybindings")
		})
		// Under every value where the platform serves the kind: a switch
		// away from Admission prunes the policy. Nowhere else: the fleet
		// holds no right on a kind the server does not serve.
		if mayApply != c.spec136 {
			t.Errorf("%s: the fleet may apply (and prune) MutatingAdmissionPolicies: %v, want %v", c.spec, mayApply, c.spec136)
		}
		if !c.policy {
			continue
		}
		if binding.Spec.PolicyName != wire.ShardLabelPolicyName {
			t.Errorf("binding names policy %q", binding.Spec.PolicyName)
		}
		sel := policy.Spec.MatchConstraints.ObjectSelector
		if sel.MatchLabels["app.kubernetes.io/managed-by"] != "computeplane-fn" || len(sel.MatchExpressions) != 1 ||
			sel.MatchExpressions[0].Key != wire.ShardingLabel || sel.MatchExpressions[0].Operator != "DoesNotExist" {
			t.Errorf("object selector %+v: want the function's releases without a shard label", sel)
		}
		rules := policy.Spec.MatchConstraints.ResourceRules
		if len(rules) != 1 || !slices.Equal(rules[0].Resources, []string{"helmreleases"}) ||
			!slices.Equal(rules[0].Operations, []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}) {
			t.Errorf("resource rules %+v: want helmreleases on CREATE and UPDATE", rules)
		}
		want := "Object{metadata: Object.metadata{labels: {\n  \"sharding.fluxcd.io/key\": \"tenants\"}}}"
		if len(policy.Spec.Mutations) != 1 || policy.Spec.Mutations[0].ApplyConfiguration == nil ||
			policy.Spec.Mutations[0].ApplyConfiguration.Expression != want {
			t.Errorf("mutations %+v: want the apply configuration %s", policy.Spec.Mutations, want)
		}
	}
}

// TestShardLabelWebhook: below 1.36 with flux-shard-operator (the
// default), no release carries the shard label and the render holds the
// MutatingWebhookConfiguration that sends the create of such a release to
// the operator's webhook, as Cozystack deploys the operator, with its CA
// from the operator's Certificate, failing open as the operator's own
// registration does; the fleet may apply and prune webhook configurations
// wherever the operator runs (a switch away prunes this one), and nowhere
// else. Without the operator Webhook is refused.
func TestShardLabelWebhook(t *testing.T) {
	for _, c := range []struct {
		spec    string
		webhook bool
		mayEdit bool
	}{
		{"{}", true, true},
		{"{releases: {shardLabel: Webhook}}", true, true},
		{`{platform: {kubernetesVersion: "1.35"}}`, true, true},
		{"{releases: {shardLabel: Omitted}}", false, true},
		{`{platform: {kubernetesVersion: "1.36"}}`, false, true},
		{"{platform: {shardOperator: Absent}}", false, false},
	} {
		out := renderGuardFleet(t, c.spec)
		for name, v := range shardLabels(t, out) {
			if v != "-" && name != "tenant-acme/computeplane" {
				t.Errorf("%s: HelmRelease %s has %s %q, want none", c.spec, name, wire.ShardingLabel, v)
			}
		}
		var hooks *admissionv1.MutatingWebhookConfiguration
		mayEdit := false
		for _, o := range out {
			switch {
			case o.Kind == "MutatingWebhookConfiguration":
				if o.Name != wire.ShardLabelPolicyName || !o.Platform {
					t.Errorf("%s: %s %s (platform %v), want %s, a platform object", c.spec, o.Kind, o.Name, o.Platform, wire.ShardLabelPolicyName)
				}
				hooks = &admissionv1.MutatingWebhookConfiguration{}
				if err := yaml.UnmarshalStrict(objectJSON(t, o), hooks); err != nil {
					t.Fatalf("%s: %v", c.spec, err)
				}
			case o.Kind == "ClusterRole" && o.Name == "computeplane-fleet":
				var role rbacv1.ClusterRole
				if err := yaml.UnmarshalStrict(objectJSON(t, o), &role); err != nil {
					t.Fatal(err)
				}
				mayEdit = slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
					return slices.Contains(r.Resources, "mutatingwebhookconfigurations")
				})
			}
		}
		if mayEdit != c.mayEdit {
			t.Errorf("%s: the fleet may apply (and prune) MutatingWebhookConfigurations: %v, want %v", c.spec, mayEdit, c.mayEdit)
		}
		if (hooks != nil) != c.webhook {
			t.Fatalf("%s: webhook configuration rendered: %v, want %v", c.spec, hooks != nil, c.webhook)
		}
		if hooks == nil {
			continue
		}
		if got := hooks.Annotations["cert-manager.io/inject-ca-from"]; got != "cozy-fluxcd/flux-shard-operator" {
			t.Errorf("%s: inject-ca-from %q, want the operator's Certificate cozy-fluxcd/flux-shard-operator", c.spec, got)
		}
		if len(hooks.Webhooks) != 1 {
			t.Fatalf("%s: %d webhooks, want 1", c.spec, len(hooks.Webhooks))
		}
		h := hooks.Webhooks[0]
		svc := h.ClientConfig.Service
		if svc == nil || svc.Namespace != "cozy-fluxcd" || svc.Name != "flux-shard-operator" || svc.Path == nil || *svc.Path != "/mutate-helmrelease-shard" || svc.Port != nil {
			t.Errorf("%s: client config %+v, want the operator's Service cozy-fluxcd/flux-shard-operator, path /mutate-helmrelease-shard, its port 443", c.spec, h.ClientConfig)
		}
		if len(h.ClientConfig.CABundle) != 0 || h.ClientConfig.URL != nil {
			t.Errorf("%s: client config carries a CA bundle or URL; cert-manager injects the CA", c.spec)
		}
		if *h.FailurePolicy != admissionv1.Ignore || *h.SideEffects != admissionv1.SideEffectClassNone {
			t.Errorf("%s: failurePolicy %s, sideEffects %s; want Ignore (as the operator's own registration) and None (dry-runs call it)", c.spec, *h.FailurePolicy, *h.SideEffects)
		}
		if len(h.Rules) != 1 || !slices.Equal(h.Rules[0].Resources, []string{"helmreleases"}) ||
			!slices.Equal(h.Rules[0].Operations, []admissionv1.OperationType{admissionv1.Create}) {
			t.Errorf("%s: rules %+v: want helmreleases on CREATE (the operator mutates nothing else)", c.spec, h.Rules)
		}
		sel := h.ObjectSelector
		if sel == nil || sel.MatchLabels["app.kubernetes.io/managed-by"] != "computeplane-fn" || len(sel.MatchExpressions) != 1 ||
			sel.MatchExpressions[0].Key != wire.ShardingLabel || sel.MatchExpressions[0].Operator != "DoesNotExist" {
			t.Errorf("%s: object selector %+v: want the function's releases without a shard label", c.spec, sel)
		}
	}
}
