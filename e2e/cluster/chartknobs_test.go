package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"bytes"
	"os/exec"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// TestKnobsThatChangeTheChart: the knob strings the function refuses are
// ones that change the structure of what the real apps/kubernetes chart
// renders, by Helm's own engine (helm.sh/helm/v4, the library
// helm-controller renders with): the function's render of
// testdata/realchart gives the values, one node-group string is set to a
// refused value, and the rendered documents then have keys or shapes they
// do not have with an admitted value of the same field. Each refused value
// is also refused by the function, naming the field (in the ComputePlane
// object's knobs). storageClass is not among them: the chart quotes it
// (storageClassName: {{ . | quote }}), so no value changes the structure;
// the function refuses what is no StorageClass name all the same. Nor is
// instanceType: the chart looks the instance type up by that name
// (lookup) and fails to render without it, so a value that is no name
// never reaches the template; the function refuses it before the install
// would fail.
func TestKnobsThatChangeTheChart(t *testing.T) {
	third := os.Getenv("E2E_THIRD_PARTY")
	fn := os.Getenv("E2E_COMPUTEPLANE_FN")
	if third == "" || fn == "" {
		t.Fatal("E2E_THIRD_PARTY and E2E_COMPUTEPLANE_FN are not set: run the suite with `make e2e`")
	}
	cozy := filepath.Join(third, "cozystack")
	chart := loadClusterChart(t, cozy)
	lookups := instanceTypeLookups(t, cozy)
	objs := harness.Generated(harness.Render(t, fn, fleetDir(t, "realchart"), "config.yaml"))
	hr := find(objs, "HelmRelease", realTenant, realCluster)
	if hr == nil {
		t.Fatalf("testdata/realchart renders no HelmRelease %s/%s", realTenant, realCluster)
	}
	rendered, _, _ := unstructured.NestedMap(hr.Object, "spec", "values")

	cases := []struct {
		name, field   string // field below nodeGroups.md0, or "" for the group's name
		admitted, bad any
	}{
		{"a GPU name that adds a nodeSelector", "gpus", []any{map[string]any{"name": "nvidia.com/AD102GL_L40S"}},
			[]any{map[string]any{"name": "nvidia.com/AD102GL_L40S\n                nodeSelector: {node-role.kubernetes.io/control-plane: ''}"}}},
		{"a GPU name of flow YAML", "gpus", []any{map[string]any{"name": "nvidia.com/AD102GL_L40S"}}, []any{map[string]any{"name": "{a: b}"}}},
		{"a role that adds a label", "roles", []any{"ingress-nginx", "gpu"}, []any{"ingress-nginx", "gpu: \"\"\n        kamaji.clastix.io/name: other"}},
		{"a group name that adds a key", "", "md0", "md0: x\n  evil"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			shape := func(v any) map[string]bool {
				t.Helper()
				values := mergeValues(jsonRoundTrip(cozystackValues(realTenant)), jsonRoundTrip(rendered))
				groups := values["nodeGroups"].(map[string]any)
				if tc.field == "" {
					groups[v.(string)] = groups["md0"]
					delete(groups, "md0")
				} else {
					groups["md0"].(map[string]any)[tc.field] = v
				}
				return chartShape(t, chart, values, lookups)
			}
			admitted, bad := shape(tc.admitted), shape(tc.bad)
			var added []string
			for k := range bad {
				if !admitted[k] {
					added = append(added, k)
				}
			}
			sort.Strings(added)
			if len(added) == 0 {
				t.Errorf("with %q the chart renders no key or shape it does not render with %q: the function refuses it for nothing", tc.bad, tc.admitted)
			}
			t.Logf("%q adds %d paths to the chart's output, such as %v", tc.bad, len(added), added[:min(3, len(added))])
			refusedByFunction(t, fn, tc.field, tc.bad)
		})
	}
}

// instanceTypeLookups answers the chart's lookups of
// VirtualMachineClusterInstancetypes with those of Cozystack's
// kubevirt-instancetypes chart, from client-go's fake dynamic client (no
// API server runs for this test).
func instanceTypeLookups(t *testing.T, cozy string) engine.ClientProvider {
	t.Helper()
	p := filepath.Join(cozy, "packages", "system", "kubevirt-instancetypes", "templates", "instancetypes.yaml")
	all, err := harness.DecodeFiles(p)
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, o := range all {
		if o.GetKind() == "VirtualMachineClusterInstancetype" {
			objs = append(objs, o)
		}
	}
	if len(objs) == 0 {
		t.Fatalf("%s defines no VirtualMachineClusterInstancetype", p)
	}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{
			instanceTypes:                        "VirtualMachineClusterInstancetypeList",
			{Version: "v1", Resource: "secrets"}: "SecretList",
			{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"}:                                  "StorageClassList",
			{Group: "cluster.x-k8s.io", Version: "v1beta1", Resource: "machinesets"}:                              "MachineSetList",
			{Group: "infrastructure.cluster.x-k8s.io", Version: "v1alpha1", Resource: "kubevirtmachinetemplates"}: "KubevirtMachineTemplateList",
		}, objs...)
	return lookupClient{client}
}

// plural is the resource suffix of the kinds the chart looks up.
func plural(kind string) string {
	if strings.HasSuffix(kind, "s") {
		return "es"
	}
	return "s"
}

var instanceTypes = schema.GroupVersionResource{Group: "instancetype.kubevirt.io", Version: "v1beta1", Resource: "virtualmachineclusterinstancetypes"}

type lookupClient struct{ dynamic.Interface }

// GetClientFor serves the instance types, and every other kind the chart
// looks up (the Secrets, MachineSets and machine templates it would keep
// from an earlier install, StorageClasses) as none: a first install.
func (c lookupClient) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	if apiVersion == instanceTypes.GroupVersion().String() && kind == "VirtualMachineClusterInstancetype" {
		return c.Resource(instanceTypes), false, nil
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false, err
	}
	return c.Resource(gv.WithResource(strings.ToLower(kind) + plural(kind))), kind != "StorageClass", nil
}

// loadClusterChart loads apps/kubernetes with cozy-lib as its subchart, as
// source-watcher packs it.
func loadClusterChart(t *testing.T, cozy string) *chartv2.Chart {
	t.Helper()
	files, err := harness.ReadChartTree(filepath.Join(cozy, "packages", "apps", "kubernetes"), "kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for p, data := range files {
		harness.WriteFile(t, filepath.Join(dir, p), data)
	}
	c, err := loader.Load(filepath.Join(dir, "kubernetes"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chartShape renders the chart with values as release computeplane in the
// tenant's namespace and returns the shape of its output: every key path
// of every document, with the kind of what it holds (map, list or scalar),
// and not the scalars' values.
func chartShape(t *testing.T, c *chartv2.Chart, values map[string]any, lookups engine.ClientProvider) map[string]bool {
	t.Helper()
	vals, err := chartutil.ToRenderValues(c, values, common.ReleaseOptions{Name: realCluster, Namespace: realTenant, IsInstall: true}, common.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.RenderWithClientProvider(c, vals, lookups)
	if err != nil {
		t.Fatal(err)
	}
	shape := map[string]bool{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range out {
			if !yield(k) {
				return
			}
		}
	}) {
		for i, doc := range strings.Split(out[name], "\n---") {
			var v any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				shape[fmt.Sprintf("%s#%d: not YAML", name, i)] = true
				continue
			}
			walkShape(fmt.Sprintf("%s#%d", name, i), v, shape)
		}
	}
	return shape
}

func walkShape(at string, v any, shape map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		shape[at+": map"] = true
		for k, w := range v {
			walkShape(at+"."+k, w, shape)
		}
	case []any:
		shape[at+": list"] = true
		for i, w := range v {
			walkShape(fmt.Sprintf("%s[%d]", at, i), w, shape)
		}
	default:
		shape[at+": scalar"] = true
	}
}

// refusedByFunction runs the function on testdata/realchart with the
// ComputePlane's md0 field (or its name) set to bad: it must exit 1 and
// name the field, and write nothing on stdout.
func refusedByFunction(t *testing.T, fn, field string, bad any) {
	t.Helper()
	dir := fleetDir(t, "realchart")
	path := filepath.Join(dir, "tenants.yaml")
	docs, err := harness.DecodeFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "spec.nodeGroups"
	for _, d := range docs {
		if d.GetKind() != "ComputePlane" {
			continue
		}
		groups, _, _ := unstructured.NestedMap(d.Object, "spec", "nodeGroups")
		if field == "" {
			groups[bad.(string)] = groups["md0"]
			delete(groups, "md0")
		} else {
			groups["md0"].(map[string]any)[field] = bad
			want += ".md0." + field
		}
		_ = unstructured.SetNestedMap(d.Object, groups, "spec", "nodeGroups")
	}
	var text []byte
	for _, d := range docs {
		data, err := yaml.Marshal(d.Object)
		if err != nil {
			t.Fatal(err)
		}
		text = append(append(text, "---\n"...), data...)
	}
	harness.WriteFile(t, path, text)
	cmd := exec.Command(fn, "config.yaml")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatal(err)
	}
	if code != 1 || stdout.Len() > 0 || !strings.Contains(stderr.String(), want) {
		t.Errorf("the function with %q at %s: exit %d, %d bytes on stdout, stderr:\n%s\nwant exit 1, nothing on stdout, a problem at %s", bad, want, code, stdout.Len(), stderr.String(), want)
	}
}
