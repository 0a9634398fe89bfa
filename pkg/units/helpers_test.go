package units_test

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	kusttypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/units"
)

// fleetConfig is a config with spec.fleet set to the defaults, tuned by
// the given function.
func fleetConfig(tune func(*api.FleetConfig)) *api.Config {
	fc := &api.FleetConfig{
		SourceRef:         api.FleetSourceRef{Kind: "GitRepository", Name: "fleet", Namespace: "flux-system"},
		Path:              "fleet",
		Interval:          api.DefaultFleetInterval,
		MaxObjectsPerUnit: api.DefaultMaxObjectsPerUnit,
		Shards:            api.DefaultFleetShards,
		WiringNamespace:   api.DefaultWiringNamespace,
		WiringPath:        api.DefaultWiringPath,
		WiringGroups:      api.DefaultWiringGroups,
	}
	if tune != nil {
		tune(fc)
	}
	return &api.Config{
		Ref:   api.ObjectRef{APIVersion: api.ConfigAPIVersion, Kind: api.ConfigKind, Name: "fleet"},
		Fleet: fc,
	}
}

// helmRelease makes an app release the way render does, small.
func helmRelease(ns, name string) render.Object {
	return object("helm.toolkit.fluxcd.io/v2", "HelmRelease", ns, name, false, `spec:
  interval: 5m
  chartRef: {kind: ExternalArtifact, name: cozystack-postgres, namespace: cozy-system}
  values: {size: 10Gi, replicas: 2, enabled: "on"}
  valuesFrom:
  - kind: Secret
    name: cozystack-values
`)
}

func object(apiVersion, kind, ns, name string, platform bool, body string) render.Object {
	meta := "  name: " + name + "\n"
	if ns != "" {
		meta += "  namespace: " + ns + "\n"
	}
	text := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata:\n%s  labels:\n    app.kubernetes.io/managed-by: computeplane-fn\n%s", apiVersion, kind, meta, body)
	n, err := yaml.Parse(text)
	if err != nil {
		panic(err)
	}
	tenant := ""
	if strings.HasPrefix(ns, "tenant-") {
		tenant = ns
	}
	return render.Object{Body: render.NodeBody(n.YNode()), APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name,
		Platform: platform, Generated: true, Tenant: tenant}
}

// fleetAccount is the fleet's own account, as render.RenderFleetAccount
// marks it.
func fleetAccount() []render.Object {
	objs := []render.Object{
		object("v1", "ServiceAccount", "flux-system", "computeplane-fleet", true, ""),
		object("rbac.authorization.k8s.io/v1", "ClusterRole", "", "computeplane-fleet", true, "rules: []\n"),
		object("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "", "computeplane-fleet", true,
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: computeplane-fleet}\n"),
	}
	for i := range objs {
		objs[i].Account = true
	}
	return objs
}

// sampleFleet is a fleet with every kind of unit: the platform (a source
// and a cluster-scoped object), tenants of various sizes, a tenant large
// enough to be split at the given bound, and an object passing through in a
// namespace of no tenant.
func sampleFleet(tenants, big int) []render.Object {
	objs := append(fleetAccount(),
		object("source.extensions.fluxcd.io/v1beta1", "ArtifactGenerator", "cozy-system", "computeplane-application", true, "spec: {}\n"),
		object("cozystack.io/v1alpha1", "ApplicationDefinition", "", "postgres", false, "spec: {release: {prefix: postgres-}}\n"),
		object("v1", "ConfigMap", "default", "passthrough", false, "data: {a: b}\n"),
	)
	for t := range tenants {
		ns := fmt.Sprintf("tenant-t%d", t)
		objs = append(objs, object("helm.toolkit.fluxcd.io/v2", "HelmRelease", ns, "computeplane", false,
			"spec: {interval: 5m, releaseName: computeplane}\n"))
		for a := range t % 7 {
			objs = append(objs, helmRelease(ns, fmt.Sprintf("postgres-db%d", a)))
		}
	}
	for a := range big {
		objs = append(objs, helmRelease("tenant-big", fmt.Sprintf("redis-cache%04d", a)))
	}
	return objs
}

// build runs kustomize on one folder of the files the way kustomize-controller
// does: no plugins, no remote bases, nothing loaded from outside the folder.
func build(t testing.TB, fs filesys.FileSystem, dir string) resmap.ResMap {
	t.Helper()
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = kusttypes.LoadRestrictionsRootOnly
	opts.PluginConfig = kusttypes.DisabledPluginConfig()
	m, err := krusty.MakeKustomizer(opts).Run(fs, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	return m
}

// writeFS puts the files in an in-memory file system under /fleet.
func writeFS(t testing.TB, files []units.File) filesys.FileSystem {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for _, f := range files {
		if err := fs.WriteFile(path.Join("/fleet", f.Path), f.Data); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// kustomizeDirs lists the folders that hold a kustomization.yaml, sorted.
func kustomizeDirs(files []units.File) []string {
	var dirs []string
	for _, f := range files {
		if path.Base(f.Path) == units.KustomizationFile {
			dirs = append(dirs, path.Dir(f.Path))
		}
	}
	slices.Sort(dirs)
	return dirs
}

// asMap turns a rendered object into what kustomize should build from it.
func asMap(t testing.TB, o render.Object) map[string]any {
	t.Helper()
	data, err := output.EncodeOne(o)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := sigsyaml.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// normalise passes a built object through JSON, so that numbers compare
// like those of asMap.
func normalise(t testing.TB, m map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func idOf(apiVersion, kind, ns, name string) string {
	return apiVersion + " " + kind + " " + ns + "/" + name
}

// timeIt returns how long f takes.
func timeIt(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}
