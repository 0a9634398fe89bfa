package fn_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/fleetgen"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
)

// TestGeneratedFleetStandaloneMatchesKRM renders a generated fleet (the
// shapes of the benchmark: real-sized definitions, nested tenants, knobs,
// values with lists, multi-line strings and quoted scalars) through the
// CLI's writer, which encodes each object with package yamltext, and
// through the KRM function, which hands whole nodes to the library: the
// streams must be byte-identical, with and without keepInputs (whose inputs
// keep their comments and go through the library). Whole nodes of the
// objects (render.Object.Node) must encode the same too.
func TestGeneratedFleetStandaloneMatchesKRM(t *testing.T) {
	dir := t.TempDir()
	p := fleetgen.Defaults(20)
	p.AppsPerTenant = 5
	if _, err := fleetgen.Generate(dir, p); err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{false, true} {
		cfg, err := os.ReadFile(filepath.Join(dir, fleetgen.ConfigFile))
		if err != nil {
			t.Fatal(err)
		}
		if keep {
			cfg = append(cfg, "  keepInputs: true\n"...)
		}
		cfgFile := filepath.Join(dir, "config-test.yaml")
		if err := os.WriteFile(cfgFile, cfg, 0o644); err != nil {
			t.Fatal(err)
		}

		run, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: cfgFile})
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		var standalone bytes.Buffer
		if err := output.Encode(&standalone, run.Objects); err != nil {
			t.Fatal(err)
		}
		// The same objects with whole nodes (render.Object.Node) encode the same.
		built := asNodes(t, run.Objects)
		var fromNodes bytes.Buffer
		if err := output.Encode(&fromNodes, built); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(standalone.String(), fromNodes.String()); diff != "" {
			t.Errorf("keepInputs %v: built objects encode differently (-encoded +built):\n%s", keep, diff)
		}

		// The KRM function gets no items and reads spec.inputs itself, as a
		// kustomize generator does.
		fnConfig, err := yaml.Parse(string(cfg))
		if err != nil {
			t.Fatal(err)
		}
		var rl bytes.Buffer
		w := kio.ByteWriter{Writer: &rl, WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind, FunctionConfig: fnConfig}
		if err := w.Write(nil); err != nil {
			t.Fatal(err)
		}
		krm, krmErr := runKRM(t, dir, rl.Bytes())
		if krmErr != "" {
			t.Fatal(krmErr)
		}
		if diff := cmp.Diff(krm, standalone.String()); diff != "" {
			t.Errorf("keepInputs %v: standalone differs from KRM (-krm +standalone):\n%s", keep, diff)
		}
		if n := strings.Count(standalone.String(), "\nkind: HelmRelease\n"); n < 20*5 {
			t.Errorf("keepInputs %v: only %d HelmReleases rendered", keep, n)
		}
	}
}
