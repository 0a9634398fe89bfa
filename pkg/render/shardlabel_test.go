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
// apply it) is rendered, below it (the default 1.33) neither; under
// Rendered the cluster release carries tenants (the apps what their
// definitions say: none here) and no policy is rendered. The fleet may
// apply and prune the policy under every value on 1.36.
func TestShardLabelAdmission(t *testing.T) {
	for _, c := range []struct {
		spec, label string
		policy      bool
		spec136     bool // the platform serves MutatingAdmissionPolicy
	}{
		{"{}", "-", false, false},
		{"{releases: {shardLabel: Omitted}}", "-", false, false},
		{"{releases: {shardLabel: Rendered}}", wire.ShardingTenants, false, false},
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
