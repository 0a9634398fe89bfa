package cluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/computeplane-dev/computeplane-fn/e2e/cluster/harness"
)

// writeAdmissionConfig lays out the rendered computeplane-admission
// ConfigMap the way the cluster's API server pod mounts it (the cluster
// release's extraVolumes and extraVolumeMounts) and returns the file its
// --admission-control-config-file argument names, in that layout.
func (e *env) writeAdmissionConfig(t *testing.T, cm *unstructured.Unstructured, objs []*unstructured.Unstructured, cluster string) string {
	t.Helper()
	hr := find(objs, "HelmRelease", cm.GetNamespace(), cluster)
	if hr == nil {
		t.Fatalf("no cluster HelmRelease %s/%s next to %s", cm.GetNamespace(), cluster, harness.Describe(cm))
	}
	api, _, _ := unstructured.NestedMap(hr.Object, "spec", "values", "controlPlane", "apiServer")
	volumes, _, _ := unstructured.NestedSlice(api, "extraVolumes")
	mounts, _, _ := unstructured.NestedSlice(api, "extraVolumeMounts")
	args, _, _ := unstructured.NestedStringSlice(api, "extraArgs")
	volume := ""
	for _, v := range volumes {
		m, _ := v.(map[string]any)
		if name, _, _ := unstructured.NestedString(m, "configMap", "name"); name == cm.GetName() {
			volume, _ = m["name"].(string)
		}
	}
	mountPath := ""
	for _, v := range mounts {
		m, _ := v.(map[string]any)
		if m["name"] == volume && volume != "" {
			mountPath, _ = m["mountPath"].(string)
		}
	}
	file := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--admission-control-config-file="); ok {
			file = v
		}
	}
	if volume == "" || mountPath == "" || file == "" || !strings.HasPrefix(file, mountPath+"/") {
		t.Fatalf("%s does not wire %s into its API server: volume %q, mount %q, --admission-control-config-file %q",
			harness.Describe(hr), harness.Describe(cm), volume, mountPath, file)
	}
	dir := filepath.Join(e.dir, "mounts", cm.GetNamespace()+"-"+cluster)
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	for k, v := range data {
		harness.WriteFile(t, filepath.Join(dir, k), []byte(v))
	}
	path := filepath.Join(dir, strings.TrimPrefix(file, mountPath+"/"))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("--admission-control-config-file=%s names no key of %s: %v", file, harness.Describe(cm), err)
	}
	return path
}

// exemptNamespaces reads the exempt namespaces of a rendered admission
// configuration.
func exemptNamespaces(t *testing.T, path string) []string {
	t.Helper()
	objs, err := harness.DecodeFiles(path)
	if err != nil || len(objs) != 1 {
		t.Fatalf("failed to read %s: %v", path, err)
	}
	plugins, _, _ := unstructured.NestedSlice(objs[0].Object, "plugins")
	for _, p := range plugins {
		m, _ := p.(map[string]any)
		if m["name"] == "PodSecurity" {
			ns, _, _ := unstructured.NestedStringSlice(m, "configuration", "exemptions", "namespaces")
			return ns
		}
	}
	t.Fatalf("%s has no PodSecurity plugin", path)
	return nil
}

func (e *env) testPodSecurity(t *testing.T) {
	for _, level := range []string{"restricted", "baseline"} {
		t.Run(level, func(t *testing.T) {
			dir := fleetDir(t, "direct")
			if level != "restricted" {
				cfg, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				harness.WriteFile(t, filepath.Join(dir, "config.yaml"),
					append(cfg, []byte("  cluster:\n    podSecurity: "+level+"\n")...))
			}
			objs := e.render(t, dir)
			cm := find(objs, "ConfigMap", "tenant-acme", "computeplane-admission")
			if cm == nil {
				t.Fatalf("podSecurity %s rendered no computeplane-admission ConfigMap", level)
			}
			path := e.writeAdmissionConfig(t, cm, objs, "computeplane")
			cp := harness.StartAPIServer(t, harness.APIServerOptions{
				Name: e.serverName(level), Bin: e.bins.apiserver, Etcd: e.etcd, Dir: e.dir, AdmissionConfigFile: path,
			})
			c := harness.MustClient(t, cp, harness.Admin, cp.Config(harness.Admin))
			exempt := exemptNamespaces(t, path)
			if len(exempt) == 0 {
				t.Fatalf("%s exempts no namespace; the cluster's addons need some", path)
			}
			// tenant-acme is where the tenant's routed releases install;
			// workloads is any namespace a workload of the cluster makes.
			checked := []string{"tenant-acme", "workloads"}
			for _, ns := range append(append([]string{}, checked...), exempt...) {
				if _, _, err := c.Apply(e.ctx, namespace(ns), harness.ApplyOptions{}); err != nil {
					t.Fatal(err)
				}
				// No controller-manager runs: make the service account the
				// ServiceAccount admission plugin looks for.
				if _, _, err := c.Apply(e.ctx, obj("v1", "ServiceAccount", ns, "default", nil), harness.ApplyOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			refused := func(p *unstructured.Unstructured) {
				t.Helper()
				_, err := c.Create(e.ctx, p)
				if err == nil {
					t.Errorf("%s admitted under %s", harness.Describe(p), level)
					return
				}
				if !strings.Contains(err.Error(), `violates PodSecurity "`+level) {
					t.Errorf("%s refused, but not by Pod Security %s: %v", harness.Describe(p), level, err)
				}
			}
			admitted := func(p *unstructured.Unstructured) {
				t.Helper()
				if _, err := c.Create(e.ctx, p); err != nil {
					t.Errorf("%s refused under %s: %v", harness.Describe(p), level, err)
				}
			}
			for _, ns := range checked {
				refused(privilegedPod(ns, "privileged"))
				refused(hostPathPod(ns, "hostpath"))
				admitted(restrictedPod(ns, "restricted"))
				if level == "restricted" {
					refused(pod(ns, "baseline-only", nil))
				} else {
					admitted(pod(ns, "baseline-only", nil))
				}
			}
			for _, ns := range exempt {
				admitted(privilegedPod(ns, "privileged"))
				admitted(hostPathPod(ns, "hostpath"))
			}
		})
	}
}
