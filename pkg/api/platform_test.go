package api

import (
	"strings"
	"testing"
)

// TestClusterChartLine: the line and the step of the pool migration are
// taken together only as the move goes (Pin with Combined, Adopt with
// SplitPools, both under delivery: Direct); a line the function cannot
// serve is refused with the reason; the default is Combined.
func TestClusterChartLine(t *testing.T) {
	for _, c := range []struct {
		name     string
		delivery string
		chart    string
		step     string
		field    string // "" when taken
		words    string
	}{
		{name: "default", field: ""},
		{name: "SplitPools", chart: "SplitPools"},
		{name: "Pin with Combined", chart: "Combined", step: "Pin"},
		{name: "Adopt with SplitPools", chart: "SplitPools", step: "Adopt"},
		{name: "SplitPools under Platform", delivery: "Platform", chart: "SplitPools"},
		{name: "Pin with SplitPools", chart: "SplitPools", step: "Pin", field: "spec.platform.poolMigration", words: "needs clusterChart: Combined"},
		{name: "Adopt with Combined", chart: "Combined", step: "Adopt", field: "spec.platform.poolMigration", words: "needs clusterChart: SplitPools"},
		{name: "Pin under Platform", delivery: "Platform", step: "Pin", field: "spec.platform.poolMigration", words: "computeplane module owns the cluster"},
		{name: "Adopt under Platform", delivery: "Platform", chart: "SplitPools", step: "Adopt", field: "spec.platform.poolMigration", words: "computeplane module owns the cluster"},
		{name: "SplitPoolsByConvention", chart: "SplitPoolsByConvention", field: "spec.platform.clusterChart", words: "cannot serve this line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			platform := map[string]any{}
			if c.chart != "" {
				platform["clusterChart"] = c.chart
			}
			if c.step != "" {
				platform["poolMigration"] = c.step
			}
			spec := map[string]any{"platform": platform}
			if c.delivery != "" {
				spec["delivery"] = c.delivery
			}
			cfg, problems := decodeSpecMap(t, spec)
			if c.field == "" {
				if len(problems) > 0 {
					t.Fatalf("refused: %v", problems)
				}
				want := ClusterChart(c.chart)
				if want == "" {
					want = ClusterChartCombined
				}
				if cfg.Platform.ClusterChart != want || cfg.Platform.PoolMigration != PoolMigration(c.step) {
					t.Errorf("clusterChart %q, poolMigration %q", cfg.Platform.ClusterChart, cfg.Platform.PoolMigration)
				}
				return
			}
			got := problems[c.field]
			if len(got) != 1 || !strings.Contains(got[0], c.words) {
				t.Errorf("%s: %v, want one problem saying %q (all: %v)", c.field, got, c.words, problems)
			}
		})
	}
}
