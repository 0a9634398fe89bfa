package order_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/order"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

func obj(platform, generated bool, apiVersion, kind, namespace, name string) render.Object {
	return render.Object{Platform: platform, Generated: generated, APIVersion: apiVersion, Kind: kind, Namespace: namespace, Name: name}
}

func key(o render.Object) string {
	return strings.Join([]string{o.APIVersion, o.Kind, o.Namespace, o.Name}, " ")
}

// TestObjectsOrder: platform objects first, then by namespace, kind, name
// and apiVersion, whatever the input order.
func TestObjectsOrder(t *testing.T) {
	in := []render.Object{
		obj(false, true, "v1", "ConfigMap", "tenant-b", "x"),
		obj(false, true, "helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-a", "b"),
		obj(true, true, "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", "guard"),
		obj(false, true, "helm.toolkit.fluxcd.io/v2", "HelmRelease", "tenant-a", "a"),
		obj(false, true, "v1", "ConfigMap", "tenant-a", "z"),
		obj(true, true, "source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator", "cozy-system", "source"),
	}
	want := []string{
		"admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy  guard",
		"source.extensions.fluxcd.io/v1beta1 ArtifactGenerator cozy-system source",
		"v1 ConfigMap tenant-a z",
		"helm.toolkit.fluxcd.io/v2 HelmRelease tenant-a a",
		"helm.toolkit.fluxcd.io/v2 HelmRelease tenant-a b",
		"v1 ConfigMap tenant-b x",
	}
	for _, others := range [][]render.Object{nil, {}} {
		out, problems := order.Objects(in, others)
		if len(problems) > 0 {
			t.Fatal(problems)
		}
		var got []string
		for _, o := range out {
			got = append(got, key(o))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	}
}

// TestObjectsCollisions: two objects of one identity are refused when one
// of them is generated, whatever their versions; two that only pass through
// are the user's own business.
func TestObjectsCollisions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		generated []render.Object
		others    []render.Object
		want      string
	}{
		{"two generated", []render.Object{obj(false, true, "v1", "ConfigMap", "ns", "a"), obj(false, true, "v1", "ConfigMap", "ns", "a")}, nil, "two inputs must not produce the same object"},
		{"generated and input", []render.Object{obj(false, true, "helm.toolkit.fluxcd.io/v2", "HelmRelease", "ns", "a")}, []render.Object{obj(false, false, "helm.toolkit.fluxcd.io/v2beta2", "HelmRelease", "ns", "a")}, "must not also be among the inputs"},
		{"two inputs", nil, []render.Object{obj(false, false, "v1", "ConfigMap", "ns", "a"), obj(false, false, "v1", "ConfigMap", "ns", "a")}, ""},
		{"other group", []render.Object{obj(false, true, "v1", "ConfigMap", "ns", "a")}, []render.Object{obj(false, false, "example.com/v1", "ConfigMap", "ns", "a")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, problems := order.Objects(tc.generated, tc.others)
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Fatalf("refused: %v", problems)
			case tc.want == "" && len(out) != len(tc.generated)+len(tc.others):
				t.Fatalf("%d objects, want %d", len(out), len(tc.generated)+len(tc.others))
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0].Message, tc.want) || problems[0].Field != "metadata.name"):
				t.Fatalf("problems %v, want one at metadata.name saying %q", problems, tc.want)
			case tc.want != "" && out != nil:
				t.Fatalf("refused objects returned: %v", out)
			}
		})
	}
}
