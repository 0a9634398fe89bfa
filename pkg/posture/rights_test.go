package posture_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
)

func routedApp(name, account, target string) posture.Record {
	return posture.Record{Key: posture.Key{Kind: "HelmRelease", Namespace: "tenant-acme", Name: name}, Kind: posture.KindApp,
		App: "JupyterHub/" + name, Placement: api.PlacementComputePlane, Account: account, TargetNamespace: target}
}

func grant(account, role string) posture.Record {
	return posture.Record{Key: posture.InClusterKey("tenant-acme", "ClusterRoleBinding", "", account), Kind: posture.KindGrant, Account: account, ClusterRole: role}
}

// TestRightsAndNamespaces: a routed app's rights inside its ComputePlane and
// per-app namespaces are posture changes; more rights weaken.
func TestRightsAndNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new []posture.Record
		want     []posture.Change
	}{{
		name: "the baseline arrives: super-admin to namespace admin",
		old:  []posture.Record{routedApp("a", "", "tenant-acme")},
		new:  []posture.Record{routedApp("a", "computeplane-apps", "tenant-acme")},
		want: []posture.Change{{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeRights, Subject: "JupyterHub/a", From: posture.RightsSuperAdmin, To: posture.RightsNamespaceAdmin}},
	}, {
		name: "a grant weakens",
		old:  []posture.Record{routedApp("a", "computeplane-app-a", "tenant-acme-a")},
		new:  []posture.Record{routedApp("a", "computeplane-app-a", "tenant-acme-a"), grant("computeplane-app-a", "cluster-admin")},
		want: []posture.Change{{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeRights, Subject: "JupyterHub/a",
			From: posture.RightsNamespaceAdmin, To: posture.RightsNamespaceAdmin + posture.GrantPrefix + "cluster-admin", Weakens: true, Cause: "spec.routing.grants"}},
	}, {
		name: "shared namespaces weaken",
		old:  []posture.Record{routedApp("a", "computeplane-app-a", "tenant-acme-a")},
		new:  []posture.Record{routedApp("a", "computeplane-apps", "tenant-acme")},
		want: []posture.Change{{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeNamespaces, Subject: "tenant-acme", From: api.NamespacesPerApp, To: api.NamespacesShared, Weakens: true, Cause: "spec.routing.namespaces"}},
	}, {
		name: "back to super-admin weakens",
		old:  []posture.Record{routedApp("a", "computeplane-apps", "tenant-acme")},
		new:  []posture.Record{routedApp("a", "", "tenant-acme")},
		want: []posture.Change{{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeRights, Subject: "JupyterHub/a", From: posture.RightsNamespaceAdmin, To: posture.RightsSuperAdmin, Weakens: true}},
	}} {
		got := posture.Compare(posture.Assemble(tc.old), posture.Assemble(tc.new))
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
		for _, c := range got {
			if posture.Sentence(c) == "" || posture.Why(c) == "" {
				t.Errorf("%s: %+v has no words", tc.name, c)
			}
		}
	}
}
