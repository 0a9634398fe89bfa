package cluster

import (
	"context"
	"path/filepath"
	"slices"
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
//
// LayoutUpgradeBeforeAccount does the same from the form before the
// account's unit (testdata/layoutupgrade/preaccount/fleet, by the binary of
// 7c1932d^): there no unit waits for the account's, so the guard's and the
// account's move is out of order, and this version's render is refused with
// the step to take first. The stage takes it as a user does: it runs the
// kubectl commands the refusal prints, renders again with
// --allow-guard-move, and once every Kustomization has applied the new
// revision, runs the commands that remove the annotation.

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
	e.layoutUpgrade(t, filepath.Join("testdata", "layoutupgrade", "fleet"), false, layoutUpgradeProbe())
}

// The guard of 7c1932d^ has no rule on credential volumes (G3d came later),
// so the probe of the form before the account's unit asks for what both
// forms refuse: a VM that mounts a ComputePlane worker's system disk.
func (e *env) testLayoutUpgradeBeforeAccount(t *testing.T) {
	e.layoutUpgrade(t, filepath.Join("testdata", "layoutupgrade", "preaccount", "fleet"), true,
		vm("tenant-gamma", "guard-probe", nil, map[string]any{"app": "probe"}, pvcVolume(workerDisk), nil))
}

// layoutUpgrade reconciles the fleet folder of an earlier form, from, then
// this version's render of testdata/fleet, asking for probe throughout;
// refused says the render is refused at first and the step must be taken.
func (e *env) layoutUpgrade(t *testing.T, from string, refused bool, probe *unstructured.Unstructured) {
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
	old, err := harness.ReadTree(from, "")
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
	hadAccount := slices.Contains(f.kustomizations(), "computeplane-fleet-account")
	if hadAccount == refused {
		t.Fatalf("the previous form has the account's unit: %v; the stage wants %v", hadAccount, !refused)
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
	var undo [][]string
	if refused {
		code, stderr := harness.RenderFolderStatus(t, e.bins.fn, f.work, out, "config.yaml")
		if code != 1 || !strings.Contains(stderr, "refusing to move the guard") {
			t.Fatalf("the render from the form before the account's unit: exit %d, want 1 refusing the guard's move\n%s", code, stderr)
		}
		t.Logf("refused as it should be:\n%s", stderr)
		if now, err := harness.ReadTree(out, ""); err != nil || len(now) != len(old) {
			t.Fatalf("the refused render changed the fleet folder: %d files, then %d (%v)", len(old), len(now), err)
		}
		// The step, as printed.
		var steps int
		for _, line := range strings.Split(stderr, "\n") {
			if !strings.HasPrefix(line, "  kubectl ") {
				continue
			}
			args := strings.Fields(line)[1:]
			if strings.HasSuffix(line, "=disabled") {
				if outText, errText, err := e.kubectl(t, "", nil, args...); err != nil {
					t.Fatalf("%s: %v\n%s%s", strings.TrimSpace(line), err, outText, errText)
				}
				steps++
			} else {
				undo = append(undo, args)
			}
		}
		if steps != 3 || len(undo) != 3 {
			t.Fatalf("the refusal prints %d commands to annotate and %d to undo; want 3 of each (the guard, the account's roles, its ServiceAccount)", steps, len(undo))
		}
		harness.RenderFolder(t, e.bins.fn, f.work, out, "--allow-guard-move", "config.yaml")
		f.index(t, out)
		f.upload(t)
	} else {
		f.publish(t)
	}
	after := f.waitReconciled(t)
	for _, args := range undo {
		if outText, errText, err := e.kubectl(t, "", nil, args...); err != nil {
			t.Errorf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, outText, errText)
		}
	}
	if len(undo) > 0 {
		// The annotation gone, a reconcile of every Kustomization (as
		// `flux reconcile` asks for one) must keep the guard.
		at := time.Now().UTC().Format(time.RFC3339Nano)
		patch := []byte(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":"` + at + `"}}}`)
		names := append([]string{fleetRoot}, f.kustomizations()...)
		for _, name := range names {
			if _, err := e.admin.MergePatch(e.ctx, kustomizeV1, "Kustomization", e.mode.fleetNamespace, name, patch); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range names {
			e.waitFor(t, e.admin, kustomizeV1, "Kustomization", e.mode.fleetNamespace, name, 2*time.Minute,
				func(u *unstructured.Unstructured) (bool, string) {
					if u == nil {
						return false, "not found"
					}
					got, _, _ := unstructured.NestedString(u.Object, "status", "lastHandledReconcileAt")
					return got == at, "lastHandledReconcileAt " + got + ", want " + at
				})
		}
		after = f.waitReconciled(t)
	}
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
	account := []string{
		harness.ObjectKey(obj("v1", "ServiceAccount", e.mode.fleetNamespace, "computeplane-fleet", nil)),
		harness.ObjectKey(obj("rbac.authorization.k8s.io/v1", "ClusterRole", "", "computeplane-fleet", nil)),
		harness.ObjectKey(obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "computeplane-fleet", nil)),
	}
	for _, key := range append([]string{policyKey, bindingKey}, account...) {
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
