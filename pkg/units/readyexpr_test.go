package units_test

import (
	"context"
	"testing"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// TestPlatformReadyExpr evaluates the readyExpr of a unit's wait for the
// platform unit as kustomize-controller does (v1.8.0,
// KustomizationReconciler.evalReadyExpr): self and dep are the two
// Kustomizations converted to unstructured by the converter it uses, from
// the typed Kustomization, so that empty fields are missing as they are
// there. The bench (make e2e-bench) runs it in the real controller.
func TestPlatformReadyExpr(t *testing.T) {
	expr := fluxExpression(t, units.PlatformReadyExpr)
	ready := func(status metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: reason}
	}
	platform := func(generation, observed int64, applied string, conds ...metav1.Condition) *kustomizev1.Kustomization {
		ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: units.PlatformUnitName, Namespace: "flux-system", Generation: generation}}
		ks.Status.ObservedGeneration = observed
		ks.Status.LastAppliedRevision = applied
		ks.Status.Conditions = conds
		return ks
	}
	const rev = "latest@sha256:0123"
	for _, tc := range []struct {
		name string
		dep  *kustomizev1.Kustomization
		want bool
	}{
		{"ready", platform(2, 2, rev, ready("True", "ReconciliationSucceeded")), true},
		{"reconciling after an apply", platform(2, 2, rev, ready("Unknown", "Progressing")), true},
		{"reconciling, never applied", platform(1, 1, "", ready("Unknown", "Progressing")), false},
		{"never reconciled", platform(1, 0, ""), false},
		{"a new generation", platform(3, 2, rev, ready("True", "ReconciliationSucceeded")), false},
		{"a new generation, reconciling", platform(3, 2, rev, ready("Unknown", "Progressing")), false},
		{"failed", platform(2, 2, rev, ready("False", "ReconciliationFailed")), false},
		{"health check failed", platform(2, 2, rev, ready("False", "HealthCheckFailed")), false},
		{"waiting for its own dependency after an apply", platform(2, 2, rev, ready("False", "DependencyNotReady")), true},
		{"waiting for its own dependency, never applied", platform(1, 1, "", ready("False", "DependencyNotReady")), false},
		{"a new generation, waiting for its own dependency", platform(3, 2, rev, ready("False", "DependencyNotReady")), false},
		{"unknown for another reason", platform(2, 2, rev, ready("Unknown", "SomethingElse")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			self, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "computeplane-tenant-a"}})
			if err != nil {
				t.Fatal(err)
			}
			dep, err := runtime.DefaultUnstructuredConverter.ToUnstructured(tc.dep)
			if err != nil {
				t.Fatal(err)
			}
			val, _, err := expr.ContextEval(context.Background(), map[string]any{"self": self, "dep": dep})
			if err != nil {
				t.Fatalf("kustomize-controller would fail to evaluate the readyExpr: %v", err)
			}
			if got, ok := val.(celtypes.Bool); !ok || bool(got) != tc.want {
				t.Errorf("ready = %v, want %v", got, tc.want)
			}
		})
	}
}

// fluxExpression compiles a readyExpr in the environment Flux's CEL package
// (github.com/fluxcd/pkg/runtime/cel v0.100.2, the version
// kustomize-controller v1.8.0 links) builds for it: variables of type
// google.protobuf.Struct, these options, a bool result. That package itself
// cannot be a dependency here: it imports kubectl's scheme, which needs a
// k8s.io/api older than the one this module builds with. So its options are
// repeated, and the real controller evaluates the same expression in the
// bench.
func fluxExpression(t *testing.T, expr string) cel.Program {
	t.Helper()
	env, err := cel.NewEnv(
		cel.HomogeneousAggregateLiterals(),
		cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(),
		ext.Sets(),
		ext.Encoders(),
		cel.Variable("self", cel.ObjectType("google.protobuf.Struct")),
		cel.Variable("dep", cel.ObjectType("google.protobuf.Struct")),
	)
	if err != nil {
		t.Fatal(err)
	}
	ast, issues := env.Compile(expr)
	if issues != nil {
		t.Fatalf("kustomize-controller would not compile the readyExpr: %s", issues)
	}
	if ast.OutputType() != cel.BoolType {
		t.Fatalf("the readyExpr gives %s, kustomize-controller wants a bool", ast.OutputType())
	}
	prog, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
	if err != nil {
		t.Fatal(err)
	}
	return prog
}
