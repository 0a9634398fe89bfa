package render_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// The guard is evaluated here by the API server's own ValidatingAdmissionPolicy
// code (k8s.io/apiserver's CEL compiler and validator, as kube-apiserver
// wires them for a policy: variables composed, validations and message
// expressions compiled in its environment) on admission requests built
// like the API server's. Matching a request to the policy (its
// matchConstraints) and the binding are the API server's part and are
// proven by the real-control-plane suite; here every request is one the
// policy matches.

// guardEvaluator is a compiled guard policy: validator as kube-apiserver
// compiles it (match conditions first), and rules the same policy without
// its match conditions, which every request is also put to.
type guardEvaluator struct {
	policy    *admissionv1.ValidatingAdmissionPolicy
	validator validating.Validator
	rules     validating.Validator
	matcher   matchconditions.Matcher // nil: the policy has no match condition
}

// compileGuard compiles a policy the way kube-apiserver does when it admits
// one (expressions checked as new expressions, which is stricter than the
// stored ones) and fails the test on any compilation error.
func compileGuard(t testing.TB, policy *admissionv1.ValidatingAdmissionPolicy) *guardEvaluator {
	t.Helper()
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	withAuthorizer := plugincel.OptionalVariableDeclarations{HasAuthorizer: true}
	for _, v := range policy.Spec.Variables {
		res := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, withAuthorizer, environment.NewExpressions)
		if res.Error != nil {
			t.Errorf("variable %s: %v", v.Name, res.Error)
		}
	}
	validations := make([]plugincel.ExpressionAccessor, len(policy.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(policy.Spec.Validations))
	for i, v := range policy.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		for what, acc := range map[string]plugincel.ExpressionAccessor{"expression": validations[i], "messageExpression": messages[i]} {
			opts := withAuthorizer
			if what == "messageExpression" {
				opts = plugincel.OptionalVariableDeclarations{}
			}
			if res := compiler.CompileCELExpression(acc, opts, environment.NewExpressions); res.Error != nil {
				t.Errorf("validation %d %s: %v", i, what, res.Error)
			}
		}
	}
	conditions := make([]plugincel.ExpressionAccessor, len(policy.Spec.MatchConditions))
	for i := range policy.Spec.MatchConditions {
		conditions[i] = (*matchconditions.MatchCondition)(&policy.Spec.MatchConditions[i])
		if res := compiler.CompileCELExpression(conditions[i], withAuthorizer, environment.NewExpressions); res.Error != nil {
			t.Errorf("match condition %s: %v", policy.Spec.MatchConditions[i].Name, res.Error)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	validator := func(matcher matchconditions.Matcher) validating.Validator {
		v := validating.NewValidator(
			compiler.CompileCondition(validations, withAuthorizer, environment.StoredExpressions),
			matcher, compiler.CompileCondition(nil, withAuthorizer, environment.StoredExpressions),
			compiler.CompileCondition(messages, plugincel.OptionalVariableDeclarations{}, environment.StoredExpressions),
			policy.Spec.FailurePolicy, nil)
		if err := v.CompileError(); err != nil {
			t.Fatal(err)
		}
		return v
	}
	g := &guardEvaluator{policy: policy, rules: validator(nil)}
	g.validator = g.rules
	if len(conditions) > 0 {
		g.matcher = matchconditions.NewMatcher(compiler.CompileCondition(conditions, withAuthorizer, environment.StoredExpressions),
			policy.Spec.FailurePolicy, "policy", "validate", policy.Name)
		g.validator = validator(g.matcher)
	}
	return g
}

// toRules reports whether the match conditions pass the request on to the
// rules (an error fails the test).
func (g *guardEvaluator) toRules(t *testing.T, r guardRequest) bool {
	t.Helper()
	if g.matcher == nil {
		return true
	}
	va, _ := g.request(t, r)
	m := g.matcher.Match(context.Background(), va, nil, nil)
	if m.Error != nil {
		t.Fatalf("match condition %s: %v", m.FailedConditionName, m.Error)
	}
	return m.Matches
}

// guardRequest is one admission request.
type guardRequest struct {
	op        admission.Operation
	user      string
	groups    []string
	object    string // YAML; "" for none
	oldObject string
	// subresource overrides the kind's (guardResources): "status" for a
	// status write.
	subresource string
}

// guardResource is how the API server names the request of a kind: its
// resource and subresource (a TokenRequest is the token subresource of a
// ServiceAccount, named like it).
type guardResource struct {
	gvr         schema.GroupVersionResource
	subresource string
}

// resources of the kinds the guard matches, by kind.
var guardResources = map[string]guardResource{
	"HelmRelease":                      {gvr: schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}},
	"Kustomization":                    {gvr: schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}},
	"VirtualMachine":                   {gvr: schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachines"}},
	"Pod":                              {gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}},
	"TokenRequest":                     {gvr: schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}, subresource: "token"},
	"Secret":                           {gvr: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}},
	"PersistentVolumeClaim":            {gvr: schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}},
	"RoleBinding":                      {gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}},
	"ClusterRoleBinding":               {gvr: schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}},
	"DataVolume":                       {gvr: schema.GroupVersionResource{Group: "cdi.kubevirt.io", Version: "v1beta1", Resource: "datavolumes"}},
	"DataSource":                       {gvr: schema.GroupVersionResource{Group: "cdi.kubevirt.io", Version: "v1beta1", Resource: "datasources"}},
	"VolumeSnapshot":                   {gvr: schema.GroupVersionResource{Group: "snapshot.storage.k8s.io", Version: "v1", Resource: "volumesnapshots"}},
	"VirtualMachineSnapshot":           {gvr: schema.GroupVersionResource{Group: "snapshot.kubevirt.io", Version: "v1beta1", Resource: "virtualmachinesnapshots"}},
	"VirtualMachineExport":             {gvr: schema.GroupVersionResource{Group: "export.kubevirt.io", Version: "v1beta1", Resource: "virtualmachineexports"}},
	"VirtualMachineInstance":           {gvr: schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}},
	"VirtualMachineInstanceReplicaSet": {gvr: schema.GroupVersionResource{Group: "kubevirt.io", Version: "v1", Resource: "virtualmachineinstancereplicasets"}},
	"VirtualMachinePool":               {gvr: schema.GroupVersionResource{Group: "pool.kubevirt.io", Version: "v1beta1", Resource: "virtualmachinepools"}},
	"VirtualMachineSnapshotContent":    {gvr: schema.GroupVersionResource{Group: "snapshot.kubevirt.io", Version: "v1beta1", Resource: "virtualmachinesnapshotcontents"}},
	"VirtualMachineRestore":            {gvr: schema.GroupVersionResource{Group: "snapshot.kubevirt.io", Version: "v1beta1", Resource: "virtualmachinerestores"}},
	"VirtualMachineClone":              {gvr: schema.GroupVersionResource{Group: "clone.kubevirt.io", Version: "v1beta1", Resource: "virtualmachineclones"}},
	"VirtualMachineBackup":             {gvr: schema.GroupVersionResource{Group: "backup.kubevirt.io", Version: "v1alpha1", Resource: "virtualmachinebackups"}},
	"VirtualMachineBackupTracker":      {gvr: schema.GroupVersionResource{Group: "backup.kubevirt.io", Version: "v1alpha1", Resource: "virtualmachinebackuptrackers"}},
	"GitRepository":                    {gvr: schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}},
	"OCIRepository":                    {gvr: schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"}},
	"Bucket":                           {gvr: schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "buckets"}},
	"ExternalArtifact":                 {gvr: schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "externalartifacts"}},
	"ArtifactGenerator":                {gvr: schema.GroupVersionResource{Group: "source.extensions.fluxcd.io", Version: "v1beta1", Resource: "artifactgenerators"}},
}

// admit evaluates the request and returns the messages of the rules that
// deny it (none: admitted). An evaluation error denies, as failurePolicy
// Fail does, and is reported with its message. The request is put to the
// rules without the match conditions too: a request they skip that a rule
// refuses fails the test.
func (g *guardEvaluator) admit(t *testing.T, r guardRequest) []string {
	t.Helper()
	va, gvr := g.request(t, r)
	denied := decisions(g.validator.Validate(context.Background(), gvr, va, nil, nil, celconfig.RuntimeCELCostBudget, nil))
	if byRules := decisions(g.rules.Validate(context.Background(), gvr, va, nil, nil, celconfig.RuntimeCELCostBudget, nil)); len(denied) == 0 && len(byRules) > 0 {
		t.Errorf("the guard's match conditions skip a request its rules refuse (%s %s by %s): %s", r.op, gvr.Resource, r.user, strings.Join(byRules, " | "))
	}
	return denied
}

// request builds the admission request the API server would put to the
// policy.
func (g *guardEvaluator) request(t testing.TB, r guardRequest) (*admission.VersionedAttributes, schema.GroupVersionResource) {
	t.Helper()
	obj, old := guardObject(t, r.object), guardObject(t, r.oldObject)
	some := obj
	if some == nil {
		some = old
	}
	gvk := some.GroupVersionKind()
	res, ok := guardResources[gvk.Kind]
	if !ok {
		t.Fatalf("no resource for kind %s", gvk.Kind)
	}
	gvr := res.gvr
	if r.subresource != "" {
		res.subresource = r.subresource
	}
	var objRT, oldRT runtime.Object
	if obj != nil {
		objRT = obj
	}
	if old != nil {
		oldRT = old
	}
	attr := admission.NewAttributesRecord(objRT, oldRT, gvk, some.GetNamespace(), some.GetName(), gvr, res.subresource, r.op, nil, false,
		&user.DefaultInfo{Name: r.user, Groups: r.groups})
	return &admission.VersionedAttributes{Attributes: attr, VersionedKind: gvk, VersionedObject: objRT, VersionedOldObject: oldRT}, gvr
}

// decisions are the messages of the rules that deny a request.
func decisions(result validating.ValidateResult) []string {
	var denied []string
	for _, d := range result.Decisions {
		switch {
		case d.Evaluation == validating.EvalError:
			denied = append(denied, "evaluation error: "+d.Message)
		case d.Action == validating.ActionDeny:
			denied = append(denied, d.Message)
		}
	}
	return denied
}

func guardObject(t testing.TB, text string) *unstructured.Unstructured {
	t.Helper()
	if text == "" {
		return nil
	}
	data, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(data, &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// checkAdmission asserts the outcome of a request: admitted when want is
// "", else denied with a message holding want.
func checkAdmission(t *testing.T, g *guardEvaluator, name string, r guardRequest, want string) {
	t.Helper()
	denied := g.admit(t, r)
	switch {
	case want == "" && len(denied) > 0:
		t.Errorf("%s: denied, want admitted: %s", name, strings.Join(denied, " | "))
	case want != "" && len(denied) == 0:
		t.Errorf("%s: admitted, want denied with %q", name, want)
	case want != "" && !strings.Contains(strings.Join(denied, " | "), want):
		t.Errorf("%s: denied with %q, want a message holding %q", name, strings.Join(denied, " | "), want)
	}
	for _, m := range denied {
		if strings.HasPrefix(m, "evaluation error") {
			t.Errorf("%s: %s", name, m)
		}
	}
}

// eachGuardForm runs test on the guard of each form the render has: for
// Kubernetes 1.33 (the default; the variables inlined) and for 1.36 (with
// variables), platform being the config's spec that names it.
func eachGuardForm(t *testing.T, test func(t *testing.T, platform string)) {
	for _, version := range []string{"1.33", "1.36"} {
		t.Run("kubernetes-"+version, func(t *testing.T) {
			test(t, `{platform: {kubernetesVersion: "`+version+`"}}`)
		})
	}
}
