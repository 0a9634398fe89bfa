package units_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// TestRoutedUnitWaitsForBaseline: a tenant's routed releases are applied
// by a unit of their own (<namespace>/_routed, split like any unit) that
// depends on the tenant's baseline Kustomization, which the namespace's base
// unit applies with the cluster; the baseline's objects are in
// <namespace>/_baseline, built by its own kustomization.yaml and listed by
// no unit.
func TestRoutedUnitWaitsForBaseline(t *testing.T) {
	var b strings.Builder
	b.WriteString(`apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: jupyterhub}
spec:
  application: {kind: JupyterHub, plural: jupyterhubs, singular: jupyterhub, openAPISchema: "{}"}
  release: {prefix: jupyterhub-, chartRef: {kind: ExternalArtifact, name: jupyterhub, namespace: cozy-system}}
  placement: ComputePlane
---
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: postgres}
spec:
  application: {kind: Postgres, plural: postgreses, singular: postgres, openAPISchema: "{}"}
  release: {prefix: postgres-, chartRef: {kind: ExternalArtifact, name: postgres, namespace: cozy-system}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: acme, namespace: tenant-root}
spec: {computeplane: true}
`)
	for i := range 25 {
		fmt.Fprintf(&b, "---\napiVersion: apps.cozystack.io/v1alpha1\nkind: JupyterHub\nmetadata: {name: hub%d, namespace: tenant-acme}\n", i)
		fmt.Fprintf(&b, "---\napiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata: {name: db%d, namespace: tenant-acme}\n", i)
	}
	objs, err := input.Decode([]byte(b.String()), "fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := fleetConfig(func(fc *api.FleetConfig) { fc.MaxObjectsPerUnit = 10; fc.WiringGroups = 4 })
	cfg.Delivery = api.Platform
	cfg.Routing.Namespaces = api.NamespacesShared
	run, problems := pipeline.Run(pipeline.Options{Config: cfg, Items: objs})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	plan, ps := units.NewPlan(cfg, run.Objects)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	routed := 0
	for _, u := range plan.Units {
		ks := plan.UnitKustomization(u)
		var baseline bool
		for _, d := range ks.Spec.DependsOn {
			if d.Name == wire.BaselineKustomization && d.Namespace == "tenant-acme" {
				baseline = true
			}
		}
		isRouted := strings.HasPrefix(u.Folder, "tenant-acme/"+units.RoutedFolder)
		if isRouted != baseline {
			t.Errorf("unit %s (%s): waits for the baseline %v", u.Name, u.Folder, baseline)
		}
		for _, o := range u.Objects {
			if o.Routed != isRouted {
				t.Errorf("%s %s/%s (routed %v) is in unit %s", o.Kind, o.Namespace, o.Name, o.Routed, u.Folder)
			}
			if o.Kind == "Kustomization" && o.Name == wire.BaselineKustomization {
				if u.Part != 0 {
					t.Errorf("the baseline Kustomization is in part %d of %s", u.Part, u.Folder)
				}
				// Under Platform the module's cluster is computeplane-cluster.
				if n, err := o.Node(); err != nil || !strings.Contains(encodeNode(t, n), "name: computeplane-cluster-admin-kubeconfig") {
					t.Errorf("the Platform baseline does not use computeplane-cluster-admin-kubeconfig (%v)", err)
				}
			}
		}
		if isRouted {
			routed += len(u.Objects)
			if u.Part == 0 && !strings.HasPrefix(u.Name, units.RoutedUnitPrefix+"tenant-acme") {
				t.Errorf("routed unit named %s", u.Name)
			}
		}
	}
	if routed != 25 {
		t.Errorf("the routed units hold %d releases, want 25", routed)
	}
	files, ferr := plan.Files()
	if ferr != nil {
		t.Fatal(ferr)
	}
	var baselineFiles []string
	for _, f := range files {
		if rest, ok := strings.CutPrefix(f.Path, "tenant-acme/"+wire.BaselineFolder+"/"); ok {
			baselineFiles = append(baselineFiles, rest)
		}
		if f.Path == "tenant-acme/"+units.KustomizationFile && strings.Contains(string(f.Data), wire.BaselineFolder) {
			t.Errorf("the unit's kustomization.yaml lists the baseline:\n%s", f.Data)
		}
	}
	want := []string{
		"_cluster/namespace-tenant-acme.yaml",
		"kustomization.yaml",
		"tenant-acme/networkpolicy-computeplane-deny-other-namespaces.yaml",
		"tenant-acme/rolebinding-computeplane-apps.yaml",
		"tenant-acme/serviceaccount-computeplane-apps.yaml",
	}
	if d := cmp.Diff(want, baselineFiles); d != "" {
		t.Errorf("baseline files (-want +got):\n%s", d)
	}
	fs := writeFS(t, files)
	if m := build(t, fs, "/fleet/tenant-acme/"+wire.BaselineFolder); m.Size() != 4 {
		t.Errorf("the baseline builds %d objects, want 4", m.Size())
	}
}

func encodeNode(t *testing.T, n *yaml.Node) string {
	t.Helper()
	out, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
