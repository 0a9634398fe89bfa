package cluster

import (
	"slices"
	"strconv"
	"testing"
)

// TestStageOrder pins which stages each layout runs (as before the stages
// became independent) and that E2E_SHUFFLE permutes them: the same stages,
// the same order for the same seed, another order for some seed. It needs
// no component.
func TestStageOrder(t *testing.T) {
	want := map[string][]string{
		"FluxInstall":     {"ServerSideApply", "PodSecurity", "Releases", "Fleet", "Guard", "LayoutUpgrade", "LayoutUpgradeBeforeAccount", "Stream"},
		"Cozystack":       {"RealChart", "RealChartPools", "RealChartPoolsMove", "Releases", "Fleet", "FleetArtifacts", "Guard", "Stream", "InCluster", "ShardOperator", "CozystackAPI"},
		"CozystackWiring": {"Releases", "Fleet", "Guard", "Stream"},
		"CozystackNewest": {"Releases", "Fleet", "Guard", "Stream", "ShardOperator"},
	}
	names := func(ss []stage) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = s.name
		}
		return out
	}
	if len(fluxModes) != len(want) {
		t.Fatalf("%d layouts, want %d", len(fluxModes), len(want))
	}
	for i, m := range fluxModes {
		t.Setenv("E2E_SHUFFLE", "")
		plain := names(stageOrder(t, i, m))
		if !slices.Equal(plain, want[m.name]) {
			t.Errorf("%s runs %v, want %v", m.name, plain, want[m.name])
		}
		t.Setenv("E2E_SHUFFLE", "7")
		a, b := names(stageOrder(t, i, m)), names(stageOrder(t, i, m))
		if !slices.Equal(a, b) {
			t.Errorf("%s: E2E_SHUFFLE=7 gave %v, then %v", m.name, a, b)
		}
		sorted, sortedPlain := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(plain))
		if !slices.Equal(sorted, sortedPlain) {
			t.Errorf("%s: E2E_SHUFFLE=7 runs %v, want a permutation of %v", m.name, a, plain)
		}
		moved := false
		for seed := 1; seed <= 20 && !moved; seed++ {
			t.Setenv("E2E_SHUFFLE", strconv.Itoa(seed))
			moved = !slices.Equal(names(stageOrder(t, i, m)), plain)
		}
		if !moved {
			t.Errorf("%s: no seed of 1 to 20 changed the order %v", m.name, plain)
		}
	}
}
