package render_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/admission"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// BenchmarkGuard is what the guard costs kube-apiserver's admission for
// the requests a reconcile of the fleet makes, in each form of the guard
// (Kubernetes 1.33: the variables inlined; 1.36: with variables): the
// policy as rendered (its match condition first), and its rules alone,
// timed in turn on the same requests. The metric "ratio" is the first over
// the second. The API server plans a rule's CEL program again for every
// evaluation, so a request's cost follows the size of every rule it is put
// to; the requests are the ones the fleet makes at each reconcile of every
// unit: a dry-run apply, as the fleet, of each kind of rendered object,
// and a request to reconcile a Kustomization (a metadata change).
func BenchmarkGuard(b *testing.B) {
	for _, version := range []string{"1.33", "1.36"} {
		out := renderGuardFleet(b, `{platform: {kubernetesVersion: "`+version+`"}}`)
		policy, _ := guardObjects(b, out)
		g := compileGuard(b, policy)
		for _, c := range guardBenchCases(b, out) {
			b.Run("kubernetes-"+version+"/"+c.name, func(b *testing.B) {
				va, gvr := g.request(b, c.request)
				ctx := context.Background()
				var asRendered, rulesAlone time.Duration
				for b.Loop() {
					start := time.Now()
					g.validator.Validate(ctx, gvr, va, nil, nil, celconfig.RuntimeCELCostBudget, nil)
					mid := time.Now()
					g.rules.Validate(ctx, gvr, va, nil, nil, celconfig.RuntimeCELCostBudget, nil)
					rulesAlone += time.Since(mid)
					asRendered += mid.Sub(start)
				}
				b.ReportMetric(float64(asRendered.Nanoseconds())/float64(b.N), "ns/request")
				b.ReportMetric(float64(rulesAlone.Nanoseconds())/float64(b.N), "ns/request-rules-alone")
				b.ReportMetric(float64(asRendered)/float64(rulesAlone), "ratio")
			})
		}
	}
}

type guardBenchCase struct {
	name    string
	request guardRequest
}

// guardBenchCases are one request of each kind from the rendered objects
// out: the fleet's dry-run apply (an UPDATE that changes nothing) of an
// app's release, of a routed release, of a unit's Kustomization and of a
// RoleBinding, and a person's request to reconcile that Kustomization.
func guardBenchCases(b *testing.B, out []render.Object) []guardBenchCase {
	var cases []guardBenchCase
	seen := map[string]bool{}
	for _, o := range out {
		text := string(objectJSON(b, o))
		var name string
		switch {
		case o.Kind == "HelmRelease" && strings.Contains(text, wire.RoutedKindLabel):
			name = "fleet-applies-a-routed-release"
		case o.Kind == "HelmRelease" && strings.Contains(text, wire.ApplicationKindLabel):
			name = "fleet-applies-an-app-release"
		case o.Kind == "RoleBinding":
			name = "fleet-applies-a-rolebinding"
		default:
			continue
		}
		if !seen[name] {
			seen[name] = true
			cases = append(cases, guardBenchCase{name, guardRequest{op: admission.Update, user: fleetAccount, object: text, oldObject: text}})
		}
	}
	unit := `{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"Kustomization","metadata":{"name":"tenant-acme","namespace":"flux-system"},` +
		`"spec":{"interval":"10m","path":"./fleet/tenant-acme","prune":true,"serviceAccountName":"computeplane-fleet","sourceRef":{"kind":"GitRepository","name":"fleet"}}}`
	annotated := strings.Replace(unit, `"metadata":{`, `"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"now"},`, 1)
	cases = append(cases,
		guardBenchCase{"fleet-applies-a-kustomization", guardRequest{op: admission.Update, user: fleetAccount, object: unit, oldObject: unit}},
		guardBenchCase{"admin-requests-a-reconcile", guardRequest{op: admission.Update, user: admin, groups: []string{"system:masters"}, object: annotated, oldObject: unit}})
	if len(cases) != 5 {
		b.Fatalf("the guard's fleet lacks a kind of object the benchmark needs: %d cases", len(cases))
	}
	return cases
}
