package render_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/fleetgen"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

func encode(t *testing.T, n *yaml.Node) string {
	t.Helper()
	out, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// reference renders an app's release in one piece, the whole HelmRelease
// through toNode, as RenderRelease did before it shared the spec of a
// definition's releases.
func reference(t *testing.T, f *model.Fleet, app *model.App) *yaml.Node {
	t.Helper()
	routed := app.Placement == api.PlacementComputePlane
	hr := helmv2.HelmRelease{
		TypeMeta: metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{
			Name: app.Release, Namespace: app.Namespace,
			Labels: render.ReleaseLabels(f, app), Annotations: render.ReleaseAnnotations(app),
		},
		Spec: render.ReleaseSpec(f, app.Definition, routed, app.Values != nil),
	}
	if routed {
		hr.Spec.TargetNamespace, hr.Spec.ReleaseName = f.AppNamespace(app), app.Release
		hr.Spec.ServiceAccountName = f.AppAccount(app)
		hr.Spec.StorageNamespace = f.AppNamespace(app)
	}
	n, err := render.TypedNode(&hr)
	if err != nil {
		t.Fatal(err)
	}
	if app.Values != nil {
		values, err := yamltext.DecodeValues(app.Values)
		if err != nil {
			t.Fatal(err)
		}
		yamlnode.SetKey(yamlnode.Get(n, "spec"), "values", values)
	}
	return n
}

// TestRenderReleaseMatchesReference renders every app of a generated fleet,
// routed and not, editable or not, and compares each release with the one
// rendered in one piece.
func TestRenderReleaseMatchesReference(t *testing.T) {
	dir := t.TempDir()
	p := fleetgen.Defaults(40)
	p.AppsPerTenant = 5
	if _, err := fleetgen.Generate(dir, p); err != nil {
		t.Fatal(err)
	}
	for _, editable := range []bool{false, true} {
		cfgObjs, err := input.Read([]string{fleetgen.ConfigFile}, input.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		cfg, problems := api.DecodeConfig(cfgObjs[0])
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		cfg.Routing.EditableThroughAPI = editable
		objs, err := input.Read(cfg.Inputs, input.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		f, problems := model.Build(cfg, model.Reader{Config: cfg, EncodeValues: yamltext.EncodeValues}.ReadAll(objs))
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		for _, app := range f.Apps {
			got := render.RenderRelease(f, app)
			if diff := cmp.Diff(encode(t, reference(t, f, app)), encode(t, nodeOf(t, got))); diff != "" {
				t.Fatalf("release of %s %s/%s differs (-reference +got):\n%s", app.Kind, app.Namespace, app.Name, diff)
			}
		}
	}
}

// TestObjectMetaMatchesToNode builds metadata directly and through the
// upstream ObjectMeta and JSON, with keys and values that JSON escapes or
// YAML quotes.
func TestObjectMetaMatchesToNode(t *testing.T) {
	words := []string{"", "a", "app.kubernetes.io/name", "<tag>", "a&b", "é", "日本", "true", "5", "null", "x: y", "- z", `quo"te`, "back\\slash", "multi\nline", " padded ", "\u2028"}
	r := rand.New(rand.NewPCG(7, 8))
	randomMap := func() map[string]string {
		if r.IntN(4) == 0 {
			return nil
		}
		m := map[string]string{}
		for range r.IntN(6) {
			m[words[r.IntN(len(words))]+fmt.Sprint(r.IntN(3))] = words[r.IntN(len(words))]
		}
		return m
	}
	for range 2000 {
		name, namespace := words[r.IntN(3)], words[r.IntN(3)]
		labels, annotations := randomMap(), randomMap()
		om := metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels, Annotations: annotations}
		want, err := render.TypedNode(&om)
		if err != nil {
			t.Fatal(err)
		}
		got := render.ObjectMeta(name, namespace, labels, annotations)
		if diff := cmp.Diff(encode(t, want), encode(t, got)); diff != "" {
			t.Fatalf("metadata differs (-toNode +direct):\n%s", diff)
		}
	}
}
