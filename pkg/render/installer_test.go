package render_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacvalidation "k8s.io/component-helpers/auth/rbac/validation"
	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// sharedChart is a chart's templates in ../shared/third_party (crdtest.SharedDir).
func sharedChart(t *testing.T, path ...string) string {
	return filepath.Join(append([]string{crdtest.SharedDir(t), "third_party"}, path...)...)
}

// chartResources names the resource of every kind the chart's templates
// create or look up, and whether it is cluster-scoped.
var chartResources = map[string]struct {
	resource string
	cluster  bool
}{
	"Certificate": {"certificates", false}, "CiliumNetworkPolicy": {"ciliumnetworkpolicies", false},
	"Cluster": {"clusters", false}, "ClusterRole": {"clusterroles", true}, "ClusterRoleBinding": {"clusterrolebindings", true},
	"ConfigMap": {"configmaps", false}, "Deployment": {"deployments", false}, "HelmRelease": {"helmreleases", false},
	"Ingress": {"ingresses", false}, "Issuer": {"issuers", false}, "Job": {"jobs", false},
	"KamajiControlPlane": {"kamajicontrolplanes", false}, "KeycloakClient": {"keycloakclients", false},
	"KeycloakClientScope": {"keycloakclientscopes", false}, "KubevirtCluster": {"kubevirtclusters", false},
	"KubevirtMachineTemplate": {"kubevirtmachinetemplates", false}, "MachineDeployment": {"machinedeployments", false},
	"MachineHealthCheck": {"machinehealthchecks", false}, "Role": {"roles", false}, "RoleBinding": {"rolebindings", false},
	"Secret": {"secrets", false}, "Service": {"services", false}, "ServiceAccount": {"serviceaccounts", false},
	"WorkloadMonitor": {"workloadmonitors", false}, "MachineSet": {"machinesets", false},
	"StorageClass": {"storageclasses", true}, "Namespace": {"namespaces", true}, "VirtualMachineClusterInstancetype": {"virtualmachineclusterinstancetypes", true},
}

var (
	// wholeLineActions are template actions (comments, ifs, ranges) that
	// fill their lines, over several lines too; inlineAction any other.
	wholeLineActions = regexp.MustCompile(`(?ms)^[ \t]*\{\{.*?\}\}[ \t]*\n`)
	inlineAction     = regexp.MustCompile(`\{\{.*?\}\}`)
	lookupCall       = regexp.MustCompile(`lookup "([^"]*)" "([^"]*)" ([^ ]+) ([^ }]+)`)
)

// templated stands for a template action in what readChart reads: upper
// case, so never part of an object's name.
const templated = "TEMPLATED"

// chartObject is a top-level document of a template, its actions blanked.
type chartObject struct {
	file       string
	APIVersion string                           `json:"apiVersion"`
	Kind       string                           `json:"kind"`
	Metadata   struct{ Name, Namespace string } `json:"metadata"`
	Rules      []rbacv1.PolicyRule              `json:"rules"`
	// byName: a lookup of one object by name (a get), not of a list.
	byName bool
}

// readChart reads the documents the chart's templates write (template
// actions that fill their lines dropped, other actions replaced by a word)
// and the lookups they make.
func readChart(t *testing.T) (objs []chartObject, lookups []chartObject) {
	// The apps/kubernetes chart of Cozystack 3c780acd.
	return readChartAt(t, sharedChart(t, "cozystack", "packages", "apps", "kubernetes", "templates"), 50)
}

// readChartAt reads the objects and lookups of the chart in dir, at least
// least of them.
func readChartAt(t *testing.T, dir string, least int) (objs []chartObject, lookups []chartObject) {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the chart %s is not here (%v): ../shared/third_party is needed", dir, err)
	}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range lookupCall.FindAllStringSubmatch(string(data), -1) {
			group, _, _ := strings.Cut(m[1], "/")
			if !strings.Contains(m[1], "/") {
				group = ""
			}
			o := chartObject{file: p, APIVersion: group, Kind: m[2]}
			// A lookup by name is a get; by "" a list. The release's
			// namespace is that of the installer checkInstallerHolds asks
			// of, tenant-acme.
			o.byName = m[4] != `""`
			if m[4] == ".Release.Namespace" {
				o.Metadata.Name = "tenant-acme"
			}
			lookups = append(lookups, o)
		}
		text := inlineAction.ReplaceAllString(wholeLineActions.ReplaceAllString(string(data), ""), templated)
		for _, doc := range strings.Split(text, "\n---") {
			var o chartObject
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil || o.Kind == "" {
				continue // a comment, or a document only templates make sense of
			}
			o.file = p
			objs = append(objs, o)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) < least {
		t.Fatalf("read only %d objects from the chart %s", len(objs), dir)
	}
	return objs, lookups
}

func groupOf(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

// TestInstallerHoldsWhatTheChartCreates: the installer's rights are exactly
// what apps/kubernetes creates, looks up and grants in its Roles and
// ClusterRoles, read from the chart's templates: every kind it creates in
// its namespace, in kube-system and cluster-wide is covered (RBAC's own
// comparison, k8s.io/component-helpers), and every rule of the installer's
// namespaced ClusterRole is used by the chart.
func TestInstallerHoldsWhatTheChartCreates(t *testing.T) {
	objs, lookups := readChart(t)
	checkInstallerHolds(t, objs, lookups, nil, false, true)
}

// TestInstallerHoldsWhatTheSplitClusterChartCreates: on the SplitPools
// line (and under poolMigration: Pin, before it) the installer upgrades
// the split apps/kubernetes of cozystack#3315 and holds what it creates
// and looks up: its upgrade looks up the release's Namespace.
func TestInstallerHoldsWhatTheSplitClusterChartCreates(t *testing.T) {
	objs, lookups := readChartAt(t, sharedChart(t, "cozystack-pools", "packages", "apps", "kubernetes", "templates"), 40)
	checkInstallerHolds(t, objs, lookups, []string{"kubernetes-nodes-computeplane-md0"}, true, false)
}

// TestInstallerHoldsWhatThePoolChartCreates: on the SplitPools line the
// installer also installs the pools, Cozystack's apps/kubernetes-nodes at
// cozystack#3315, and holds what that chart creates, the talos-reconcile
// ClusterRole and ClusterRoleBinding of each pool by name.
func TestInstallerHoldsWhatThePoolChartCreates(t *testing.T) {
	// apps/kubernetes-nodes at cozystack#3315's merge.
	objs, lookups := readChartAt(t, sharedChart(t, "cozystack-pools", "packages", "apps", "kubernetes-nodes", "templates"), 10)
	checkInstallerHolds(t, objs, lookups, []string{"kubernetes-nodes-computeplane-md0"}, true, false)
}

// checkInstallerHolds: the installer of a cluster with the given pool
// releases covers every object and lookup of a chart; allUsed: and every
// namespaced rule it holds is used by the chart.
func checkInstallerHolds(t *testing.T, objs, lookups []chartObject, pools []string, splitChart, allUsed bool) {
	t.Helper()
	namespaced, kubeSystem, cluster := render.InstallerRules(), render.InstallerKubeSystemRules("computeplane", "tenant-acme"), render.InstallerClusterRules("computeplane", "tenant-acme", pools, splitChart)
	covers := func(where string, owner []rbacv1.PolicyRule, need rbacv1.PolicyRule, file string) {
		if ok, missing := rbacvalidation.Covers(owner, []rbacv1.PolicyRule{need}); !ok {
			t.Errorf("%s: the installer lacks %v in %s", file, missing, where)
		}
	}
	used := map[string]bool{} // group/resource of the namespaced rules
	for _, o := range objs {
		r, ok := chartResources[o.Kind]
		if !ok {
			t.Errorf("%s: kind %s is not in this test's table", o.file, o.Kind)
			continue
		}
		need := rbacv1.PolicyRule{APIGroups: []string{groupOf(o.APIVersion)}, Resources: []string{r.resource}, Verbs: []string{"create"}}
		switch {
		case r.cluster:
			covers("cluster scope", cluster, need, o.file)
		case o.Metadata.Namespace == "kube-system":
			covers("kube-system", kubeSystem, need, o.file)
		default:
			covers("its namespace", namespaced, need, o.file)
			used[groupOf(o.APIVersion)+"/"+r.resource] = true
		}
		for _, rule := range o.Rules {
			// A name the chart templates is the release's; a rule held
			// without names covers it, and one with literal names only
			// those.
			rule.ResourceNames = slices.DeleteFunc(rule.ResourceNames, func(n string) bool { return strings.Contains(n, templated) })
			if o.Kind == "ClusterRole" {
				covers("cluster scope (what its ClusterRole "+o.file+" grants)", cluster, rule, o.file)
				continue
			}
			covers("its namespace (what its Role grants)", namespaced, rule, o.file)
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					used[g+"/"+res] = true
				}
			}
		}
	}
	for _, l := range lookups {
		r, ok := chartResources[l.Kind]
		if !ok {
			t.Errorf("%s: lookup of kind %s is not in this test's table", l.file, l.Kind)
			continue
		}
		need := rbacv1.PolicyRule{APIGroups: []string{l.APIVersion}, Resources: []string{r.resource}, Verbs: []string{"get", "list"}}
		if l.byName {
			need.Verbs = []string{"get"}
			if l.Metadata.Name != "" {
				need.ResourceNames = []string{l.Metadata.Name}
			}
		}
		if r.cluster {
			covers("cluster scope (a lookup)", cluster, need, l.file)
		} else {
			covers("its namespace (a lookup)", namespaced, need, l.file)
			used[l.APIVersion+"/"+r.resource] = true
		}
	}
	for _, rule := range namespaced {
		for _, g := range rule.APIGroups {
			for _, res := range rule.Resources {
				if allUsed && !used[g+"/"+res] {
					t.Errorf("the installer holds %s/%s in its namespace, which the chart neither creates nor grants", g, res)
				}
			}
		}
	}
}

// TestInstallerCannotEscalate: outside its namespace the installer may
// touch only its own cluster's objects by name, and bind only those roles.
func TestInstallerCannotEscalate(t *testing.T) {
	for _, rules := range [][]rbacv1.PolicyRule{render.InstallerClusterRules("computeplane", "tenant-acme", nil, false), render.InstallerClusterRules("computeplane", "tenant-acme", []string{"kubernetes-nodes-computeplane-md0"}, true), render.InstallerKubeSystemRules("computeplane", "tenant-acme")} {
		for _, r := range rules {
			if slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
				t.Errorf("a wildcard rule outside the namespace: %v", r)
			}
			for _, v := range r.Verbs {
				if (v == "bind" || v == "escalate" || v == "update" || v == "delete" || v == "patch") && len(r.ResourceNames) == 0 {
					t.Errorf("%s without resourceNames outside the namespace: %v", v, r)
				}
			}
			if slices.Contains(r.Resources, "secrets") {
				t.Errorf("Secrets outside the namespace: %v", r)
			}
		}
	}
}

// TestFleetEscalatesOnlyItsRoles: the fleet's account may escalate and bind
// only by name, and the names are exactly the roles and cluster roles the
// render writes on the management cluster (Direct: the installers'; in
// every mode its own). A rule without resourceNames would let the fleet
// make itself cluster-admin.
func TestFleetEscalatesOnlyItsRoles(t *testing.T) {
	for _, spec := range []string{"{delivery: Direct}", "{delivery: Platform}"} {
		t.Run(spec, func(t *testing.T) {
			written := map[string][]string{}
			var rules []rbacv1.PolicyRule
			for _, o := range renderGuardFleet(t, spec) {
				if o.Kind != "ClusterRole" && o.Kind != "Role" {
					continue
				}
				written[o.Kind] = append(written[o.Kind], o.Name)
				if o.Kind == "ClusterRole" && o.Name == render.FleetAccountRole {
					var role rbacv1.ClusterRole
					if err := yaml.Unmarshal(objectJSON(t, o), &role); err != nil {
						t.Fatal(err)
					}
					rules = role.Rules
				}
			}
			if rules == nil {
				t.Fatalf("no ClusterRole %s in the render", render.FleetAccountRole)
			}
			granted := map[string][]string{}
			for _, r := range rules {
				for _, v := range r.Verbs {
					if v != "escalate" && v != "bind" && v != "*" {
						continue
					}
					if len(r.ResourceNames) == 0 {
						t.Errorf("%s without resourceNames: %v", v, r)
					}
					if v == "escalate" {
						for _, res := range r.Resources {
							kind := map[string]string{"clusterroles": "ClusterRole", "roles": "Role"}[res]
							granted[kind] = append(granted[kind], r.ResourceNames...)
						}
					}
				}
			}
			for _, kind := range []string{"ClusterRole", "Role"} {
				slices.Sort(written[kind])
				slices.Sort(granted[kind])
				if !slices.Equal(slices.Compact(written[kind]), slices.Compact(granted[kind])) {
					t.Errorf("escalate on %ss %v, the render writes %v", kind, granted[kind], written[kind])
				}
			}
		})
	}
}

// TestChartAccounts: the ServiceAccounts the guard keeps out of VMs
// (model.ChartServiceAccounts) are exactly those apps/kubernetes creates,
// read from the chart's templates.
func TestChartAccounts(t *testing.T) {
	objs, _ := readChart(t)
	var got []string
	for _, o := range objs {
		if o.Kind != "ServiceAccount" {
			continue
		}
		name, ok := strings.CutPrefix(o.Metadata.Name, templated+"-")
		if !ok {
			t.Errorf("%s: ServiceAccount %q is not named <release>-...", o.file, o.Metadata.Name)
			continue
		}
		got = append(got, "computeplane-"+name)
	}
	slices.Sort(got)
	if diff := cmp.Diff(model.ChartServiceAccounts("computeplane"), slices.Compact(got)); diff != "" {
		t.Errorf("the chart's ServiceAccounts (-model.ChartServiceAccounts +chart):\n%s", diff)
	}
}
