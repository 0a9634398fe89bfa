package fleetgen_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/fleetgen"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
)

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGenerateIsDeterministic generates the same fleet twice, and a bigger
// one: the same parameters give the same bytes, and a tenant's files do not
// depend on how many tenants follow it.
func TestGenerateIsDeterministic(t *testing.T) {
	a, b, big := t.TempDir(), t.TempDir(), t.TempDir()
	p := fleetgen.Defaults(12)
	stats, err := fleetgen.Generate(a, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fleetgen.Generate(b, p); err != nil {
		t.Fatal(err)
	}
	if _, err := fleetgen.Generate(big, fleetgen.Defaults(40)); err != nil {
		t.Fatal(err)
	}
	ta, tb, tbig := readTree(t, a), readTree(t, b), readTree(t, big)
	if len(ta) != stats.Files+1 { // and fleet.json
		t.Errorf("%d files written, %d counted", len(ta), stats.Files)
	}
	for name, data := range ta {
		if tb[name] != data {
			t.Errorf("%s differs between two runs", name)
		}
		if strings.HasPrefix(name, "/apps/") && tbig[name] != data {
			t.Errorf("%s differs in a bigger fleet", name)
		}
	}
	if stats.Tenants != 12 || stats.ComputePlanes != 6 || stats.Apps != 120 || stats.Definitions != 30 {
		t.Errorf("unexpected stats %+v", stats)
	}
	if _, err := fleetgen.Generate(a, p); err == nil {
		t.Error("generated into a folder that is not empty")
	}
}

func TestParamsValidate(t *testing.T) {
	p := fleetgen.Defaults(10)
	p.RoutedShare, p.MaxDepth = 1.5, 7
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "routedShare") || !strings.Contains(err.Error(), "maxDepth") {
		t.Errorf("Validate: %v", err)
	}
}

// TestAppsMatchTheirSchemas: every generated app is valid against its
// definition's openAPISchema, as Cozystack's are, so the benchmark renders
// a clean fleet and measures the check of app values as it costs there.
func TestAppsMatchTheirSchemas(t *testing.T) {
	dir := t.TempDir()
	if _, err := fleetgen.Generate(dir, fleetgen.Defaults(60)); err != nil {
		t.Fatal(err)
	}
	r, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, fleetgen.ConfigFile)})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(r.Fleet.Apps) < 500 {
		t.Fatalf("%d apps generated, want 600", len(r.Fleet.Apps))
	}
	for _, w := range r.Warnings {
		if strings.Contains(w.Message, "openAPISchema") {
			t.Errorf("a generated app breaks its schema: %v", w)
		}
	}
}
