package pipeline_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// sharedFleet writes a fleet around the real Cozystack ApplicationDefinitions
// in ../shared/cozystack: a tenant tree with and without ComputePlanes and one
// app of every declared kind in each tenant. routed names the kinds that get
// the placement annotation. It returns the folder and the config path.
func sharedFleet(t *testing.T, delivery api.Delivery, routed ...string) (string, string) {
	t.Helper()
	shared := crdtest.SharedDir(t)
	defs, err := input.Read([]string{filepath.Join(shared, "cozystack", "applicationdefinitions")}, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var defDocs, tenants, apps []string
	tenantNS := []string{"tenant-root", "tenant-acme", "tenant-acme-dev", "tenant-beta"}
	tenants = append(tenants,
		tenant("root", "tenant-root", true),
		tenant("acme", "tenant-root", true),
		tenant("dev", "tenant-acme", false),
		tenant("beta", "tenant-root", true))
	for _, d := range defs {
		kind := yamlnode.Lookup(d.Node, "spec", "application", "kind").Value
		if kind == api.KnobsKind && delivery == api.Direct {
			continue
		}
		if slices.Contains(routed, kind) {
			md := yamlnode.Get(d.Node, "metadata")
			ann := yamlnode.Get(md, "annotations")
			if ann == nil {
				ann = yamlnode.Map()
				yamlnode.SetKey(md, "annotations", ann)
			}
			yamlnode.SetKey(ann, api.PlacementAnnotation, yamlnode.String(string(api.PlacementComputePlane)))
		}
		raw, err := yamlEncode(d)
		if err != nil {
			t.Fatal(err)
		}
		defDocs = append(defDocs, raw)
		if kind == api.TenantKind || kind == api.KnobsKind {
			continue
		}
		for _, ns := range tenantNS {
			if slices.Contains(routed, kind) && ns == "tenant-acme-dev" {
				continue // no ComputePlane there: refused, tested elsewhere
			}
			apps = append(apps, fmt.Sprintf("apiVersion: apps.cozystack.io/v1alpha1\nkind: %s\nmetadata:\n  name: app%d\n  namespace: %s\n  labels:\n    owner: team-a\n  annotations:\n    example.com/note: hello\nspec:\n  replicas: 2\n  nested:\n    list: [a, b]\n", kind, len(apps), ns))
		}
	}
	write(t, dir, "definitions.yaml", strings.Join(defDocs, "---\n"))
	write(t, dir, "tenants.yaml", strings.Join(tenants, "---\n"))
	write(t, dir, "apps.yaml", strings.Join(apps, "---\n"))
	write(t, dir, "config.yaml", fmt.Sprintf("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata:\n  name: fleet\nspec:\n  delivery: %s\n  inputs: [definitions.yaml, tenants.yaml, apps.yaml]\n", delivery))
	return dir, filepath.Join(dir, "config.yaml")
}

func tenant(name, ns string, cp bool) string {
	return fmt.Sprintf("apiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n  computeplane: %t\n", name, ns, cp)
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func yamlEncode(o api.Object) (string, error) {
	var b strings.Builder
	err := output.Encode(&b, []render.Object{{Body: render.NodeBody(o.Node)}})
	return b.String(), err
}

// TestRealDefinitionsValidateAgainstCRDs renders a fleet from the real
// Cozystack definitions, in both deliveries and with routed kinds, and
// validates every output object against the real CRDs the way an API server
// would: known kind and version, metadata, and the schema with unknown
// fields refused and the CEL rules evaluated.
func TestRealDefinitionsValidateAgainstCRDs(t *testing.T) {
	registry := crdtest.LoadShared(t)
	for _, tc := range []struct {
		delivery api.Delivery
		routed   []string
	}{
		{api.Direct, nil},
		{api.Direct, []string{"Redis", "Postgres"}},
		{api.Platform, []string{"Kubernetes", "Etcd"}},
	} {
		t.Run(fmt.Sprintf("%s-%s", tc.delivery, strings.Join(tc.routed, "+")), func(t *testing.T) {
			dir, cfg := sharedFleet(t, tc.delivery, tc.routed...)
			run, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: cfg})
			if len(problems) > 0 {
				t.Fatalf("refused:\n%v", problems)
			}
			objs := run.Objects
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.Kind]++
				v, err := yamlnode.ToValue(nodeOf(t, o), yamlnode.DefaultBudget)
				if err != nil {
					t.Fatal(err)
				}
				var violations []crdtest.Violation
				switch o.APIVersion {
				case "v1":
					// A core kind has no CRD; its metadata obeys the same rules.
					violations = crdtest.ValidateMetadata(v.(map[string]any)["metadata"], true)
				case "admissionregistration.k8s.io/v1", "rbac.authorization.k8s.io/v1":
					// The guard and the accounts' RBAC: built-in kinds, checked
					// against their upstream Go types (unknown fields refused);
					// the guard's CEL is compiled and run in package render's
					// tests, the RBAC applied by the real-control-plane suite.
					violations = crdtest.ValidateMetadata(v.(map[string]any)["metadata"], o.Kind == "Role" || o.Kind == "RoleBinding")
					data, err := json.Marshal(v)
					if err != nil {
						t.Fatal(err)
					}
					into, ok := map[string]any{
						"ValidatingAdmissionPolicy":        &admissionv1.ValidatingAdmissionPolicy{},
						"ValidatingAdmissionPolicyBinding": &admissionv1.ValidatingAdmissionPolicyBinding{},
						"MutatingAdmissionPolicy":          &admissionv1.MutatingAdmissionPolicy{},
						"MutatingAdmissionPolicyBinding":   &admissionv1.MutatingAdmissionPolicyBinding{},
						"MutatingWebhookConfiguration":     &admissionv1.MutatingWebhookConfiguration{},
						"ClusterRole":                      &rbacv1.ClusterRole{},
						"ClusterRoleBinding":               &rbacv1.ClusterRoleBinding{},
						"Role":                             &rbacv1.Role{},
						"RoleBinding":                      &rbacv1.RoleBinding{},
					}[o.Kind]
					if !ok {
						t.Fatalf("%s %s: a built-in kind this test does not know", o.Kind, o.Name)
					}
					if err := sigsyaml.UnmarshalStrict(data, into); err != nil {
						t.Errorf("%s %s: %v", o.Kind, o.Name, err)
					}
				default:
					violations = registry.Validate(v.(map[string]any))
				}
				for _, viol := range violations {
					t.Errorf("%s %s/%s: %s", o.Kind, o.Namespace, o.Name, viol)
				}
			}
			if kinds["HelmRelease"] < 10 {
				t.Errorf("expected many HelmReleases, got %v", kinds)
			}
			if tc.delivery == api.Direct && kinds["ArtifactGenerator"] != 1 {
				t.Errorf("expected one ArtifactGenerator, got %v", kinds)
			}
			// Three tenants have a ComputePlane: each gets its egress policy
			// under both deliveries, its Pod Security ConfigMap under
			// delivery: Direct only.
			wantAdmission := map[api.Delivery]int{api.Direct: 3, api.Platform: 0}[tc.delivery]
			if kinds["CiliumNetworkPolicy"] != 3 || kinds["ConfigMap"] != wantAdmission {
				t.Errorf("expected 3 egress policies and %d admission ConfigMaps, got %v", wantAdmission, kinds)
			}
		})
	}
}

// nodeOf returns an object's node tree.
func nodeOf(t testing.TB, o render.Object) *yaml.Node {
	t.Helper()
	n, err := o.Node()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
