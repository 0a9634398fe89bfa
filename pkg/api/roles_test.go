package api_test

import (
	"strings"
	"testing"
)

// TestConfigRefusesMixedRoles: a namespace or identity in two roles the
// guard tells apart is refused with the field and why (issue 40); the
// same fields with roles of their own are accepted.
func TestConfigRefusesMixedRoles(t *testing.T) {
	const fleet = "sourceRef: {kind: GitRepository, name: fleet}, path: fleet"
	for _, c := range []struct {
		name, spec, want string // want "": accepted
	}{
		{"wiring namespace of a tenant", "{fleet: {" + fleet + ", wiringNamespace: tenant-acme}}",
			`spec.fleet.wiringNamespace: "tenant-acme" is a tenant's namespace`},
		{"wiring namespace of the root tenant", "{fleet: {" + fleet + ", wiringNamespace: tenant-root}}",
			`spec.fleet.wiringNamespace: "tenant-root" is a tenant's namespace`},
		{"the fleet's source in a tenant's namespace", "{fleet: {sourceRef: {kind: GitRepository, name: fleet, namespace: tenant-acme}, path: fleet}}",
			`spec.fleet.sourceRef.namespace: "tenant-acme" is a tenant's namespace`},
		{"the fleet's account is the installer's", "{fleet: {" + fleet + ", serviceAccountName: computeplane-installer}}",
			`spec.fleet.serviceAccountName: "computeplane-installer" is the account of every tenant's cluster installer`},
		{"the fleet's account is the apps'", "{fleet: {" + fleet + ", serviceAccountName: computeplane-apps}}",
			`spec.fleet.serviceAccountName: "computeplane-apps" is named like the account routed apps install as`},
		{"the fleet's account is an app's", "{fleet: {" + fleet + ", serviceAccountName: computeplane-app-jupyterhub-x}}",
			`is named like the account routed apps install as`},
		{"the baseline's source in a tenant's namespace", "{baseline: {namespace: tenant-acme}}",
			`spec.baseline.namespace: "tenant-acme" is a tenant's namespace`},
		{"the fleet is Cozystack's Flux", "{guard: {fluxIdentities: [system:serviceaccount:cozy-fluxcd:flux]}}",
			`spec.guard.fluxIdentities[0]: "system:serviceaccount:cozy-fluxcd:flux" is also in spec.guard.helmIdentities`},
		{"the fleet is an installer", "{guard: {fluxIdentities: [system:serviceaccount:flux-system:computeplane-installer]}}",
			`spec.guard.fluxIdentities[0]: "system:serviceaccount:flux-system:computeplane-installer" is a cluster installer`},
		{"the fleet is a tenant's account", "{guard: {fluxIdentities: [system:serviceaccount:flux-system:computeplane-fleet, system:serviceaccount:tenant-acme:deployer]}}",
			`spec.guard.fluxIdentities[1]: "system:serviceaccount:tenant-acme:deployer" is an account in a tenant's namespace`},
		{"the platform's helm-controller as a VM controller", "{guard: {platformIdentities: [system:serviceaccount:cozy-cluster-api:capk-manager, system:serviceaccount:cozy-fluxcd:flux]}}",
			`spec.guard.platformIdentities[1]: "system:serviceaccount:cozy-fluxcd:flux" is also in spec.guard.helmIdentities`},
		// Roles of their own.
		{"wiring beside Cozystack's Flux", "{fleet: {" + fleet + ", wiringNamespace: cozy-fluxcd, serviceAccountName: fleet}}", ""},
		{"a namespace that only starts like a tenant's word", "{fleet: {" + fleet + ", wiringNamespace: tenants-fleet}}", ""},
		{"Cozystack's Flux as the fleet, with helmIdentities of stock Flux only", "{guard: {fluxIdentities: [system:serviceaccount:cozy-fluxcd:flux], helmIdentities: [system:serviceaccount:flux-system:helm-controller]}}", ""},
		{"an account called like an installer's elsewhere", "{fleet: {" + fleet + ", serviceAccountName: computeplane-installers}}", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, problems := decodeSpec(t, c.spec)
			got := strings.Join(problems, "\n")
			switch {
			case c.want == "" && len(problems) > 0:
				t.Errorf("refused: %s", got)
			case c.want != "" && !strings.Contains(got, c.want):
				t.Errorf("problems %q, want one holding %q", got, c.want)
			}
		})
	}
}
