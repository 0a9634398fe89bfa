package api_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

func decodeGuard(t *testing.T, spec string) (api.GuardConfig, []string) {
	t.Helper()
	cfg, msgs := decodeSpec(t, spec)
	if cfg == nil {
		return api.GuardConfig{}, msgs
	}
	return cfg.Guard, msgs
}

func TestGuardConfig(t *testing.T) {
	fleetAccount := []string{"system:serviceaccount:flux-system:computeplane-fleet"}
	defaults := api.GuardConfig{Enabled: true, FluxIdentities: fleetAccount, HelmIdentities: api.DefaultHelmIdentities(), PlatformIdentities: api.DefaultPlatformIdentities(), SourceIdentities: api.DefaultSourceIdentities()}
	for _, c := range []struct {
		name, spec string
		want       api.GuardConfig
	}{
		{"absent", "{}", defaults},
		{"empty", "{guard: {}}", defaults},
		{"null", "{guard: null}", defaults},
		{"off", "{guard: {enabled: false}}", api.GuardConfig{FluxIdentities: defaults.FluxIdentities, HelmIdentities: defaults.HelmIdentities, PlatformIdentities: defaults.PlatformIdentities, SourceIdentities: defaults.SourceIdentities}},
		{"sorted, once", `{guard: {fluxIdentities: [z, "system:serviceaccount:cozy-fluxcd:flux", z], helmIdentities: [], platformIdentities: [b, a], sourceIdentities: [d, c, d]}}`,
			api.GuardConfig{Enabled: true, FluxIdentities: []string{"system:serviceaccount:cozy-fluxcd:flux", "z"}, HelmIdentities: []string{}, PlatformIdentities: []string{"a", "b"}, SourceIdentities: []string{"c", "d"}}},
		{"the fleet's account follows spec.fleet", `{fleet: {sourceRef: {kind: GitRepository, name: fleet}, path: fleet, wiringNamespace: cozy-fluxcd, serviceAccountName: fleet}}`,
			api.GuardConfig{Enabled: true, FluxIdentities: []string{"system:serviceaccount:cozy-fluxcd:fleet"}, HelmIdentities: defaults.HelmIdentities, PlatformIdentities: defaults.PlatformIdentities, SourceIdentities: defaults.SourceIdentities}},
	} {
		got, problems := decodeGuard(t, c.spec)
		if len(problems) > 0 {
			t.Errorf("%s: %v", c.name, problems)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}
	// The defaults are sorted and unique, as the policy writes them.
	for _, ids := range [][]string{api.DefaultHelmIdentities(), api.DefaultPlatformIdentities(), api.DefaultSourceIdentities()} {
		for i := 1; i < len(ids); i++ {
			if ids[i-1] >= ids[i] {
				t.Errorf("defaults not sorted and unique: %v", ids)
			}
		}
	}
}

func TestGuardConfigRefused(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"{guard: {enable: true}}", "spec.guard.enable: unknown field; known fields here: enabled, fluxIdentities, helmIdentities, platformIdentities, sourceIdentities"},
		{"{guard: [x]}", "spec.guard: must be a map, not a list"},
		{`{guard: {enabled: "yes"}}`, `spec.guard.enabled: must be true or false, not the string "yes"`},
		{"{guard: {fluxIdentities: []}}", "spec.guard.fluxIdentities: must name at least one user: with none, Flux itself could not apply the routed releases"},
		{"{guard: {platformIdentities: []}}", "spec.guard.platformIdentities: must name at least one user: with none, the platform's controllers could not scale, repair or delete a ComputePlane's VMs"},
		{"{guard: {sourceIdentities: []}}", "spec.guard.sourceIdentities: must name at least one user: with none, Flux could not write the fleet's sources' artifacts"},
		{"{guard: {sourceIdentities: [system:masters]}}", `spec.guard.sourceIdentities[0]: "system:masters" is a group, not a user name`},
		{"{guard: {fluxIdentities: null}}", "spec.guard.fluxIdentities: must be a list of user names; leave it out for the defaults"},
		{"{guard: {fluxIdentities: flux}}", `spec.guard.fluxIdentities: must be a list of user names, not the string "flux"`},
		{`{guard: {fluxIdentities: [""]}}`, "spec.guard.fluxIdentities[0]: must not be empty"},
		{"{guard: {fluxIdentities: [1]}}", "spec.guard.fluxIdentities[0]: must be a string, not the number 1"},
		{`{guard: {fluxIdentities: [" flux"]}}`, `spec.guard.fluxIdentities[0]: " flux" holds leading or trailing spaces or control characters; no user name does`},
		{"{guard: {platformIdentities: [\"system:serviceaccounts:cozy-kubevirt\"]}}", `spec.guard.platformIdentities[0]: "system:serviceaccounts:cozy-kubevirt" is a group, not a user name`},
		{"{guard: {platformIdentities: [system:masters]}}", `spec.guard.platformIdentities[0]: "system:masters" is a group, not a user name`},
		{"{guard: {platformIdentities: [\"system:serviceaccount:cozy-cluster-api\"]}}", `spec.guard.platformIdentities[0]: "system:serviceaccount:cozy-cluster-api" is not a service account's user name: system:serviceaccount:<namespace>:<name>`},
		{"{guard: {platformIdentities: [\"system:serviceaccount:Cozy:capk\"]}}", `is not a service account's user name`},
	} {
		_, problems := decodeGuard(t, c.spec)
		found := false
		for _, p := range problems {
			if strings.Contains(p, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problems %q, want one holding %q", c.spec, problems, c.want)
		}
	}
}
