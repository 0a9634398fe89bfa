package cluster

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// The guard is never absent (issue 40): a fleet of the previous form, its
// platform unit split into a chain of parts with the guard in a part after
// the first (testdata/layoutupgrade/fleet, the folder the binary of main
// before the star, d6beec5^, rendered from testdata/fleet), is reconciled,
// then the render of this version (the guard in the account's unit), while
// a tenant's user asks the API server every second to admit a VM with the
// ComputePlane's admin kubeconfig in a volume (a server-side dry run). Every
// one of those requests, from before the new revision is published until
// every Kustomization has applied it, must be refused by the guard, and the
// guard must not have been deleted and created again.

// layoutUpgradeProbe is what the probe asks for: a VM of tenant-gamma that
// hands its guest the cluster's admin kubeconfig (G3d).
func layoutUpgradeProbe() *unstructured.Unstructured {
	return vm("tenant-gamma", "guard-probe", nil, map[string]any{"app": "probe"},
		[]any{map[string]any{"name": "kc", "secret": map[string]any{"secretName": "computeplane-admin-kubeconfig"}}}, nil)
}

// probeResult counts the probe's answers.
type probeResult struct {
	mu                       sync.Mutex
	asked, refused, admitted int
	other                    []string // refusals by anything but the guard
}

func (p *probeResult) record(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked++
	switch {
	case err == nil:
		p.admitted++
	case strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+guardPolicy+"'"):
		p.refused++
	default:
		if len(p.other) < 5 {
			p.other = append(p.other, err.Error())
		}
	}
}

func (e *env) testLayoutUpgrade(t *testing.T) {
	e.ensureFlux(t)
	e.ensurePlatform(t)
	if err := harness.ApplyCRDs(e.ctx, e.admin, guardCRDs...); err != nil {
		t.Fatal(err)
	}
	f := &fleetRepo{e: e, work: e.fleetDir(t, "fleet"), repo: filepath.Join(t.TempDir(), "repo")}
	for _, ns := range []string{"tenant-gamma", "tenant-delta", "tenant-epsilon"} {
		e.namespaces(ns)
		e.writeCozystackValues(t, ns)
	}
	for _, ns := range []string{"tenant-gamma", "tenant-delta"} {
		e.standInComputePlane(t, ns)
	}

	// The previous form, as committed.
	old, err := harness.ReadTree(filepath.Join("testdata", "layoutupgrade", "fleet"), "")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(f.repo, "fleet")
	for p, data := range old {
		harness.WriteFile(t, filepath.Join(out, p), data)
	}
	f.index(t, out)
	f.upload(t)
	e.bootstrapFleet(t, f.all())
	e.applyAll(t, e.admin, []*unstructured.Unstructured{e.fleetRoot()}, false)
	before := f.waitReconciled(t)
	policyKey := harness.ObjectKey(obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", guardPolicy, nil))
	bindingKey := harness.ObjectKey(obj("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", "", guardPolicy, nil))
	oldHome := f.unitOf[policyKey]
	if !strings.HasPrefix(oldHome, "computeplane-platform-part") {
		t.Fatalf("the previous form holds the guard in %q; the stage wants it in a part of the chain after the first (computeplane-platform-partN)", oldHome)
	}
	t.Logf("the previous form: %d objects in %d Kustomizations, the guard in %s", len(before), len(f.kustomizations()), oldHome)

	// The tenant's user may create VMs in its namespace, so that what
	// refuses the probe is the guard.
	role := obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "e2e-vm-writer", map[string]any{
		"rules": []any{map[string]any{"apiGroups": []any{"kubevirt.io"}, "resources": []any{"virtualmachines"}, "verbs": []any{"*"}}},
	})
	binding := obj("rbac.authorization.k8s.io/v1", "RoleBinding", "tenant-gamma", "e2e-vm-writer", map[string]any{
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "e2e-vm-writer"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": tenantUser}},
	})
	e.applyAll(t, e.admin, []*unstructured.Unstructured{role, binding}, false)
	tenant := harness.MustClient(t, e.mgmt, tenantUser, e.mgmt.Impersonating(tenantUser, tenantGroups...))
	probe := layoutUpgradeProbe()
	ask := func() error {
		_, _, err := tenant.Apply(e.ctx, probe, harness.ApplyOptions{DryRun: true})
		return err
	}
	// RBAC and the guard take a moment: the probe starts once the guard
	// refuses it.
	if err := harness.Poll(e.ctx, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		err := ask()
		return err != nil && strings.Contains(err.Error(), guardPolicy), "probe: " + errString(err)
	}); err != nil {
		t.Fatalf("the previous form's guard does not refuse the probe: %v", err)
	}
	var res probeResult
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			res.record(ask())
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { stop(); <-done })

	// This version's render of the same fleet.
	start := time.Now()
	f.publish(t)
	after := f.waitReconciled(t)
	stop()
	<-done
	res.record(ask()) // once more, after the last Kustomization applied

	res.mu.Lock()
	defer res.mu.Unlock()
	t.Logf("the new form at %s after %s: %d objects in %d Kustomizations; the probe asked %d times: %d refused by %s, %d admitted, %d refused otherwise",
		f.revision, time.Since(start).Round(time.Second), len(after), len(f.kustomizations()), res.asked, res.refused, guardPolicy, res.admitted, len(res.other))
	if res.admitted > 0 {
		t.Errorf("the guard was not in force during the layout upgrade: %d of %d probes admitted", res.admitted, res.asked)
	}
	if len(res.other) > 0 {
		t.Errorf("probes refused by something else than %s: %s", guardPolicy, strings.Join(res.other, " | "))
	}
	if res.asked < 5 {
		t.Errorf("the probe asked %d times; the stage wants one a second through the upgrade", res.asked)
	}
	for _, key := range []string{policyKey, bindingKey} {
		if home := f.unitOf[key]; home != "computeplane-fleet-account" {
			t.Errorf("the new form holds %s in %q, want computeplane-fleet-account", key, home)
		}
		if before[key] != after[key] {
			t.Errorf("%s was deleted and created again (UID %s, then %s)", key, before[key], after[key])
		}
	}
	var recreated []string
	for k, u := range before {
		if a, ok := after[k]; ok && a != u {
			recreated = append(recreated, k)
		}
	}
	if len(recreated) > 0 {
		t.Logf("objects created again by the upgrade (not the guard): %s", strings.Join(recreated, ", "))
	}
}

func errString(err error) string {
	if err == nil {
		return "admitted"
	}
	return err.Error()
}
