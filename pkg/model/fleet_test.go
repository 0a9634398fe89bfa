package model_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamltext"
)

func TestTenantNamespace(t *testing.T) {
	for _, tc := range []struct{ parent, name, want string }{
		{"tenant-root", "foo", "tenant-foo"},
		{"tenant-foo", "bar", "tenant-foo-bar"},
		{"tenant-foo-bar", "baz", "tenant-foo-bar-baz"},
		{"tenant-root", "root", "tenant-root"},
		{"tenant-foo", "root", "tenant-foo-root"},
	} {
		if got := model.TenantNamespace(tc.parent, tc.name); got != tc.want {
			t.Errorf("TenantNamespace(%q, %q) = %q, want %q", tc.parent, tc.name, got, tc.want)
		}
	}
}

const defs = `
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: lab}
spec:
  application: {kind: Lab}
  release: {prefix: lab-, chartRef: {kind: ExternalArtifact, name: lab}}
  placement: ComputePlane
---
apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: db}
spec:
  application: {kind: DB}
  release: {prefix: db-, chartRef: {kind: ExternalArtifact, name: db}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: a, namespace: tenant-root}
spec: {computeplane: true}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: b, namespace: tenant-a}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata: {name: c, namespace: tenant-a-b}
spec: {computeplane: true}
`

func build(t *testing.T, delivery api.Delivery, extra string) (*model.Fleet, api.Problems) {
	t.Helper()
	objs, err := input.Decode([]byte(defs+"---\n"+extra), "in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &api.Config{Delivery: delivery}
	return model.Build(cfg, model.Reader{Config: cfg, EncodeValues: yamltext.EncodeValues}.ReadAll(objs))
}

func TestTree(t *testing.T) {
	f, problems := build(t, api.Direct, "")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	c := f.Tenants["tenant-a-b-c"]
	if c == nil {
		t.Fatal("tenant-a-b-c missing")
	}
	var ancestors []string
	for _, a := range c.Ancestors() {
		ancestors = append(ancestors, a.Namespace)
	}
	if diff := cmp.Diff([]string{"tenant-a-b", "tenant-a", "tenant-root"}, ancestors); diff != "" {
		t.Errorf("ancestors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"tenant-a", "tenant-a-b", "tenant-a-b-c"}, f.Tenants["tenant-root"].Descendants()); diff != "" {
		t.Errorf("descendants (-want +got):\n%s", diff)
	}
	if f.Tenants["tenant-root"].ComputePlane {
		t.Error("the implicit root tenant has a ComputePlane")
	}
}

// TestRules checks each routing rule on its own: the app, the delivery and
// a fragment the single problem's message must hold ("" = accepted).
func TestRules(t *testing.T) {
	app := func(kind, name, ns string) string {
		return "apiVersion: apps.cozystack.io/v1alpha1\nkind: " + kind + "\nmetadata: {name: " + name + ", namespace: " + ns + "}\nspec: {}\n"
	}
	for _, tc := range []struct {
		name     string
		delivery api.Delivery
		extra    string
		want     string
	}{
		{"routed app in a tenant with a ComputePlane", api.Direct, app("Lab", "x", "tenant-a"), ""},
		{"routed app in a grandchild with its own ComputePlane", api.Direct, app("Lab", "x", "tenant-a-b-c"), ""},
		{"routed app in a child without one: no fallback to the parent", api.Direct, app("Lab", "x", "tenant-a-b"), "an ancestor's ComputePlane is never used"},
		{"routed app in the root without one", api.Direct, app("Lab", "x", "tenant-root"), "has none"},
		{"routed app in an unknown namespace", api.Direct, app("Lab", "x", "tenant-zzz"), "not the namespace of any tenant in the inputs"},
		{"management app in an unknown namespace", api.Direct, app("DB", "x", "tenant-zzz"), "every app belongs to a tenant"},
		{"undeclared kind", api.Direct, app("Cache", "x", "tenant-a"), "no ApplicationDefinition in the inputs declares kind Cache"},
		{"release name at 53", api.Direct, app("DB", strings.Repeat("a", 50), "tenant-a"), ""},
		{"release name at 54", api.Direct, app("DB", strings.Repeat("a", 51), "tenant-a"), "at most 53"},
		{"app named like the Direct cluster", api.Direct, "apiVersion: cozystack.io/v1alpha1\nkind: ApplicationDefinition\nmetadata: {name: t}\nspec:\n  application: {kind: T}\n  release: {prefix: '', chartRef: {kind: ExternalArtifact, name: t}}\n---\n" + app("T", "computeplane", "tenant-a"), "reserved"},
		{"app named like the Platform cluster", api.Platform, "apiVersion: cozystack.io/v1alpha1\nkind: ApplicationDefinition\nmetadata: {name: t}\nspec:\n  application: {kind: T}\n  release: {prefix: '', chartRef: {kind: ExternalArtifact, name: t}}\n---\n" + app("T", "computeplane-cluster", "tenant-a"), "reserved"},
		{"app named like the Platform module", api.Platform, "apiVersion: cozystack.io/v1alpha1\nkind: ApplicationDefinition\nmetadata: {name: t}\nspec:\n  application: {kind: T}\n  release: {prefix: '', chartRef: {kind: ExternalArtifact, name: t}}\n---\n" + app("T", "computeplane", "tenant-a"), "reserved"},
		{"unsupported apps.cozystack.io version", api.Direct, "apiVersion: apps.cozystack.io/v1beta1\nkind: DB\nmetadata: {name: x, namespace: tenant-a}\n", "only apps.cozystack.io/v1alpha1"},
		{"definition name used twice", api.Direct, "apiVersion: cozystack.io/v1alpha1\nkind: ApplicationDefinition\nmetadata: {name: db}\nspec:\n  application: {kind: Other}\n  release: {prefix: o-, chartRef: {kind: ExternalArtifact, name: o}}\n", "defined twice"},
		{"tenant defined twice", api.Direct, "apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: b, namespace: tenant-a}\n", "defined twice"},
		{"root tenant enables its ComputePlane", api.Direct, "apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: root, namespace: tenant-root}\nspec: {computeplane: true}\n---\n" + app("Lab", "x", "tenant-root"), ""},
		{"a Tenant of the wrong type: its own problem only", api.Direct, "apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: z, namespace: tenant-root}\nspec: {computeplane: \"yes\"}\n---\napiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata: {name: child, namespace: tenant-z}\n---\napiVersion: apps.cozystack.io/v1alpha1\nkind: ComputePlane\nmetadata: {name: computeplane, namespace: tenant-z}\n---\n" + app("Lab", "x", "tenant-z") + "---\n" + app("DB", "y", "tenant-z"), "must be true or false"},
		{"two knob objects for one tenant", api.Direct, "apiVersion: apps.cozystack.io/v1alpha1\nkind: ComputePlane\nmetadata: {name: computeplane, namespace: tenant-a}\n---\napiVersion: apps.cozystack.io/v1alpha1\nkind: ComputePlane\nmetadata: {name: computeplane, namespace: tenant-a}\n", "already has a ComputePlane object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := build(t, tc.delivery, tc.extra)
			if tc.want == "" {
				if len(problems) > 0 {
					t.Fatalf("refused: %v", problems)
				}
				return
			}
			if len(problems) != 1 {
				t.Fatalf("want one problem containing %q, got %d: %v", tc.want, len(problems), problems)
			}
			if !strings.Contains(problems[0].Message, tc.want) || problems[0].File != "in.yaml" || problems[0].Field == "" {
				t.Errorf("problem %q lacks %q, the file or the field", problems[0].Error(), tc.want)
			}
		})
	}
}

func TestGeneratedAndConfigObjectsAreNotInputs(t *testing.T) {
	f, problems := build(t, api.Direct, `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: old, namespace: tenant-a, labels: {app.kubernetes.io/managed-by: computeplane-fn}}
---
apiVersion: fn.computeplane.dev/v1alpha1
kind: ComputePlaneGenerator
metadata: {name: fleet}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: keep, namespace: tenant-a}
`)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if len(f.Passthrough) != 1 || f.Passthrough[0].Name != "keep" {
		t.Errorf("passthrough = %v, want only the ConfigMap", f.Passthrough)
	}
}
