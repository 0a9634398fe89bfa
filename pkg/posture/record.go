package posture

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Kind says what a Record was read from.
type Kind string

// The objects that carry posture.
const (
	// KindCluster is a Direct ComputePlane's cluster HelmRelease.
	KindCluster Kind = "cluster"
	// KindPool is a worker pool's HelmRelease of a Direct ComputePlane on
	// the SplitPools line: one node group (NodeGroups holds it alone).
	KindPool Kind = "pool"
	// KindAdmission is the computeplane-admission ConfigMap.
	KindAdmission Kind = "admission"
	// KindEgress is the computeplane-egress CiliumNetworkPolicy.
	KindEgress Kind = "egress"
	// KindApp is an app's HelmRelease.
	KindApp Kind = "app"
	// KindGuard is the computeplane-guard ValidatingAdmissionPolicy.
	KindGuard Kind = "guard"
	// KindGrant is a ClusterRoleBinding of the in-cluster baseline: an
	// operator's grant to the account of routed apps.
	KindGrant Kind = "grant"
	// KindRole is a ClusterRole the in-cluster baseline defines with the
	// rules of a grant (spec.routing.grants[].rules).
	KindRole Kind = "role"
	// KindBaseline is the in-cluster baseline delivered as a HelmRelease
	// (the stream and the flat fleet folder): the objects it carries are
	// its InCluster records.
	KindBaseline Kind = "baseline"
	// KindOther is any other object: it carries no posture, but its
	// namespace shows that the tenant is there.
	KindOther Kind = "other"
)

// Key names an object: its kind, namespace and name.
type Key struct {
	Kind, Namespace, Name string
}

// Record is what one object says about a tenant's posture.
type Record struct {
	Key  Key
	Kind Kind
	// NodeGroups of a cluster, by name, as "<instanceType>
	// <minReplicas>-<maxReplicas> gpus=<n>".
	NodeGroups map[string]string
	// Level and Exempt of an admission ConfigMap: the enforced Pod
	// Security level and the exempt namespaces, sorted.
	Level  string
	Exempt []string
	// Reachable of an egress policy: the apps ("Kind/name") of the tenant
	// that the policy's deny rules leave open to the VMs, sorted.
	Reachable []string
	// AncestorIngress of an egress policy: "denied" when every ancestor
	// tenant's ingress pods are denied, "allowed" otherwise; "" for the
	// root tenant, which has no ancestors.
	AncestorIngress string
	// App ("Kind/name") and Placement of an app release; for a routed
	// one also the Account helm-controller installs it as inside the
	// ComputePlane (spec.serviceAccountName, "" for the cluster's
	// super-admin) and its TargetNamespace there.
	App             string
	Placement       api.Placement
	Account         string
	TargetNamespace string
	// Account (above) and ClusterRole of a grant.
	ClusterRole string
	// CredentialsWithheld of a cluster release: its post-renderers remove
	// the chart's grant of the cluster's super-admin kubeconfig to the
	// tenant's users (render.DashboardCredentialPatch, to the letter).
	CredentialsWithheld bool
	// FluxIdentities and PlatformIdentities of the guard, sorted.
	FluxIdentities, HelmIdentities, PlatformIdentities []string
	// Routes of the guard: the definitions whose kinds and charts its
	// rule G1 routes (wire.GuardRoutesAnnotation), by kind; RoutesKnown is
	// false for a policy that states them nowhere this package reads.
	Routes      map[string]render.GuardRoute
	RoutesKnown bool
	// Listed of an app release: it carries cozystack-api's lineage labels
	// (apps.cozystack.io/application.*), so Cozystack's API and dashboard
	// list the app and let its users edit it.
	Listed bool
	// Rules of a role: what it allows, one "<apiGroup>/<resource>:<verb>"
	// (with "[<names>]" when the rule names resources, or "<url>:<verb>"
	// for a non-resource URL) per permission, sorted.
	Rules []string
	// InCluster of a baseline release: the records of the objects it
	// installs inside the ComputePlane (its values.objects).
	InCluster []Record
}

// ReadDocument reads one object. Objects that carry no posture give a
// Record of KindOther; a posture object that cannot be read (a hand edit
// that broke it) is an error naming the object and the field.
func ReadDocument(doc *yaml.Node) (Record, error) {
	doc = yamlnode.Resolve(doc)
	md := yamlnode.Get(doc, "metadata")
	r := Record{Kind: KindOther, Key: Key{
		Kind:      scalar(yamlnode.Get(doc, "kind")),
		Namespace: scalar(yamlnode.Get(md, "namespace")),
		Name:      scalar(yamlnode.Get(md, "name")),
	}}
	group, _, _ := strings.Cut(scalar(yamlnode.Get(doc, "apiVersion")), "/")
	var err error
	switch {
	case group == "helm.toolkit.fluxcd.io" && r.Key.Kind == "HelmRelease":
		err = r.readRelease(doc)
	case group == "v1" && r.Key.Kind == "ConfigMap" && r.Key.Name == wire.AdmissionConfigMapName:
		err = r.readAdmission(doc)
	case group == "cilium.io" && r.Key.Kind == "CiliumNetworkPolicy" && r.Key.Name == wire.EgressPolicyName:
		err = r.readEgress(doc)
	case group == "admissionregistration.k8s.io" && r.Key.Kind == "ValidatingAdmissionPolicy" && r.Key.Name == wire.GuardName:
		err = r.readGuard(doc)
	}
	if err != nil {
		return r, fmt.Errorf("failed to read the posture of %s %s: %w", r.Key.Kind, path(r.Key), err)
	}
	return r, nil
}

func path(k Key) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

func (r *Record) readRelease(doc *yaml.Node) error {
	labels := yamlnode.Lookup(doc, "metadata", "labels")
	if pool := scalar(yamlnode.Get(labels, wire.PoolLabel)); pool != "" {
		// Its values are the node group's, as the cluster's nodeGroups
		// holds each on the Combined line.
		r.Kind = KindPool
		var g nodeGroup
		if values := yamlnode.Lookup(doc, "spec", "values"); !yamlnode.IsNull(values) {
			if err := values.Decode(&g); err != nil {
				return fmt.Errorf("spec.values: %w", err)
			}
		}
		r.NodeGroups = map[string]string{pool: g.String()}
		return nil
	}
	if scalar(yamlnode.Get(labels, wire.ComputePlaneLabel)) == "true" {
		r.Kind = KindCluster
		r.CredentialsWithheld = withholdsCredentials(doc, r.Key.Name)
		return r.readNodeGroups(yamlnode.Lookup(doc, "spec", "values", "nodeGroups"))
	}
	kind, name := scalar(yamlnode.Get(labels, wire.RoutedKindLabel)), scalar(yamlnode.Get(labels, wire.RoutedNameLabel))
	listed := kind == ""
	if kind == "" || name == "" {
		kind, name = scalar(yamlnode.Get(labels, wire.ApplicationKindLabel)), scalar(yamlnode.Get(labels, wire.ApplicationNameLabel))
	}
	if kind == "" || name == "" {
		if r.Key.Name == wire.BaselineRelease && !yamlnode.IsNull(yamlnode.Lookup(doc, "spec", "kubeConfig")) {
			return r.readBaselineRelease(doc)
		}
		return nil // a release of no app: nothing to read
	}
	r.Kind, r.App, r.Placement, r.Listed = KindApp, kind+"/"+name, api.PlacementManagementPlane, listed
	if !yamlnode.IsNull(yamlnode.Lookup(doc, "spec", "kubeConfig")) {
		r.Placement = api.PlacementComputePlane
		r.Account = scalar(yamlnode.Lookup(doc, "spec", "serviceAccountName"))
		r.TargetNamespace = cmp.Or(scalar(yamlnode.Lookup(doc, "spec", "targetNamespace")), r.Key.Namespace)
	}
	return nil
}

// InClusterFolder is the folder of a tenant's in-cluster baseline in the
// fleet folder (<namespace>/_baseline/..., below the namespace's wiring group
// with a source per namespace): what is there is applied inside
// the tenant's ComputePlane, never to the management cluster.
const InClusterFolder = "/" + wire.BaselineFolder + "/"

// ReadInCluster reads one object of a tenant's in-cluster baseline. Its
// Record is keyed by the tenant's namespace (its own namespace is one of
// the ComputePlane's), so that it counts for that tenant; a
// ClusterRoleBinding is a grant, everything else carries no posture of its
// own (the routed releases say the rest).
func ReadInCluster(tenantNamespace string, doc *yaml.Node) (Record, error) {
	doc = yamlnode.Resolve(doc)
	md := yamlnode.Get(doc, "metadata")
	kind := scalar(yamlnode.Get(doc, "kind"))
	r := Record{Kind: KindOther, Key: InClusterKey(tenantNamespace, kind, scalar(yamlnode.Get(md, "namespace")), scalar(yamlnode.Get(md, "name")))}
	if kind == "ClusterRole" {
		return r, r.readRole(doc, tenantNamespace)
	}
	if kind != "ClusterRoleBinding" {
		return r, nil
	}
	r.Kind = KindGrant
	r.ClusterRole = scalar(yamlnode.Lookup(doc, "roleRef", "name"))
	subjects := yamlnode.Get(doc, "subjects")
	if subjects == nil || subjects.Kind != yaml.SequenceNode || len(subjects.Content) == 0 {
		return r, fmt.Errorf("failed to read the posture of ClusterRoleBinding %s in the ComputePlane of %s: subjects: no account", r.Key.Name, tenantNamespace)
	}
	r.Account = scalar(yamlnode.Get(subjects.Content[0], "name"))
	return r, nil
}

// readBaselineRelease reads the objects a baseline HelmRelease installs
// inside the tenant's ComputePlane: its spec.values.objects, the same list
// the fleet folder's _baseline holds as files.
func (r *Record) readBaselineRelease(doc *yaml.Node) error {
	r.Kind = KindBaseline
	objects := yamlnode.Lookup(doc, "spec", "values", "objects")
	if yamlnode.IsNull(objects) {
		return nil
	}
	if objects.Kind != yaml.SequenceNode {
		return fmt.Errorf("spec.values.objects: not a list of objects")
	}
	for i, o := range objects.Content {
		in, err := ReadInCluster(r.Key.Namespace, o)
		if err != nil {
			return fmt.Errorf("spec.values.objects[%d]: %w", i, err)
		}
		r.InCluster = append(r.InCluster, in)
	}
	return nil
}

// policyRule is the part of an RBAC rule that says what it allows.
type policyRule struct {
	APIGroups       []string `yaml:"apiGroups"`
	Resources       []string `yaml:"resources"`
	ResourceNames   []string `yaml:"resourceNames"`
	NonResourceURLs []string `yaml:"nonResourceURLs"`
	Verbs           []string `yaml:"verbs"`
}

// readRole reads a ClusterRole's rules as single permissions, so that a
// rule split or merged reads the same, and a wildcard or a dropped
// resourceNames reads as a permission the role did not have.
func (r *Record) readRole(doc *yaml.Node, tenantNamespace string) error {
	r.Kind = KindRole
	var role struct {
		Rules []policyRule `yaml:"rules"`
	}
	if err := doc.Decode(&role); err != nil {
		return fmt.Errorf("failed to read the posture of ClusterRole %s in the ComputePlane of %s: rules: %w", strings.TrimPrefix(r.Key.Name, inClusterKeyPrefix+"/"), tenantNamespace, err)
	}
	var perms []string
	for _, rule := range role.Rules {
		names := ""
		if len(rule.ResourceNames) > 0 {
			names = "[" + strings.Join(sortedSet(rule.ResourceNames), ",") + "]"
		}
		for _, verb := range rule.Verbs {
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					perms = append(perms, g+"/"+res+names+":"+verb)
				}
			}
			for _, url := range rule.NonResourceURLs {
				perms = append(perms, url+":"+verb)
			}
		}
	}
	r.Rules = sortedSet(perms)
	return nil
}

// InClusterKey is the Key of an object inside a tenant's ComputePlane.
func InClusterKey(tenantNamespace, kind, namespace, name string) Key {
	return Key{Kind: kind, Namespace: tenantNamespace, Name: inClusterKeyPrefix + namespace + "/" + name}
}

const inClusterKeyPrefix = "computeplane:"

// nodeGroup is the part of an apps/kubernetes node group the summary names.
type nodeGroup struct {
	InstanceType string `yaml:"instanceType"`
	MinReplicas  int    `yaml:"minReplicas"`
	MaxReplicas  int    `yaml:"maxReplicas"`
	GPUs         []any  `yaml:"gpus"`
}

func (r *Record) readNodeGroups(n *yaml.Node) error {
	r.NodeGroups = map[string]string{}
	if yamlnode.IsNull(n) {
		return nil
	}
	var groups map[string]nodeGroup
	if err := n.Decode(&groups); err != nil {
		return fmt.Errorf("spec.values.nodeGroups: %w", err)
	}
	for name, g := range groups {
		r.NodeGroups[name] = g.String()
	}
	return nil
}

// String is how the summary names a node group: "<instanceType>
// <minReplicas>-<maxReplicas> gpus=<n>".
func (g nodeGroup) String() string {
	return fmt.Sprintf("%s %d-%d gpus=%d", g.InstanceType, g.MinReplicas, g.MaxReplicas, len(g.GPUs))
}

// admissionConfiguration is the part of an apiserver.config.k8s.io/v1
// AdmissionConfiguration with a PodSecurity plugin that says what is
// enforced.
type admissionConfiguration struct {
	Kind    string `json:"kind"`
	Plugins []struct {
		Name          string `json:"name"`
		Configuration struct {
			Defaults struct {
				Enforce string `json:"enforce"`
			} `json:"defaults"`
			Exemptions struct {
				Namespaces []string `json:"namespaces"`
			} `json:"exemptions"`
		} `json:"configuration"`
	} `json:"plugins"`
}

// readAdmission reads the AdmissionConfiguration in the ConfigMap's data;
// with several keys (never rendered so) the first in key order that holds
// one counts. A PodSecurity plugin without a level enforces privileged, as
// the API server defaults it.
func (r *Record) readAdmission(doc *yaml.Node) error {
	data := yamlnode.Get(doc, "data")
	if data == nil || data.Kind != yaml.MappingNode {
		return fmt.Errorf("data: holds no AdmissionConfiguration")
	}
	type entry struct{ key, value string }
	var entries []entry
	for i := 0; i+1 < len(data.Content); i += 2 {
		entries = append(entries, entry{scalar(data.Content[i]), scalar(data.Content[i+1])})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	for _, e := range entries {
		var cfg admissionConfiguration
		if err := sigsyaml.Unmarshal([]byte(e.value), &cfg); err != nil || cfg.Kind != "AdmissionConfiguration" {
			continue
		}
		for _, p := range cfg.Plugins {
			if p.Name != "PodSecurity" {
				continue
			}
			r.Kind = KindAdmission
			r.Level = cmp.Or(p.Configuration.Defaults.Enforce, api.PodSecurityPrivileged)
			r.Exempt = sortedSet(p.Configuration.Exemptions.Namespaces)
			return nil
		}
	}
	return fmt.Errorf("data: holds no AdmissionConfiguration with a PodSecurity plugin")
}

// withholdsCredentials reports whether a cluster release's post-renderers
// hold the patch of its chart's dashboard Role that removes the tenant's
// read of the super-admin kubeconfig.
func withholdsCredentials(doc *yaml.Node, release string) bool {
	renderers := yamlnode.Lookup(doc, "spec", "postRenderers")
	if renderers == nil {
		return false
	}
	want := render.DashboardCredentialPatch(release)
	for _, pr := range renderers.Content {
		patches := yamlnode.Lookup(pr, "kustomize", "patches")
		if patches == nil {
			continue
		}
		for _, p := range patches.Content {
			target := yamlnode.Get(p, "target")
			if scalar(yamlnode.Get(target, "kind")) == "Role" && scalar(yamlnode.Get(target, "name")) == model.DashboardRole(release) &&
				scalar(yamlnode.Get(p, "patch")) == want {
				return true
			}
		}
	}
	return false
}

// readGuard reads the identities of the guard from its annotation
// (wire.GuardIdentitiesAnnotation). A policy rendered before the
// annotation, which a fleet folder may still hold, has them only as its
// variables; they are read from there.
func (r *Record) readGuard(doc *yaml.Node) error {
	r.Kind = KindGuard
	lists := map[string]*[]string{
		wire.GuardFluxIdentitiesVariable:     &r.FluxIdentities,
		wire.GuardHelmIdentitiesVariable:     &r.HelmIdentities,
		wire.GuardPlatformIdentitiesVariable: &r.PlatformIdentities,
	}
	if err := r.readRoutes(doc); err != nil {
		return err
	}
	if a := yamlnode.Lookup(doc, "metadata", "annotations", wire.GuardIdentitiesAnnotation); a != nil {
		var ids map[string][]string
		if err := json.Unmarshal([]byte(scalar(a)), &ids); err != nil {
			return fmt.Errorf("metadata.annotations.%s: not a JSON object of user name lists: %w", wire.GuardIdentitiesAnnotation, err)
		}
		for name, list := range lists {
			*list = sortedSet(ids[name])
		}
		return nil
	}
	vars := yamlnode.Lookup(doc, "spec", "variables")
	if vars == nil {
		return nil
	}
	for i, v := range vars.Content {
		list, ok := lists[scalar(yamlnode.Get(v, "name"))]
		if !ok {
			continue
		}
		var ids []string
		if err := json.Unmarshal([]byte(scalar(yamlnode.Get(v, "expression"))), &ids); err != nil {
			return fmt.Errorf("spec.variables[%d].expression: not a JSON array of user names: %w", i, err)
		}
		*list = sortedSet(ids)
	}
	return nil
}

// readRoutes reads what the guard's G1 routes from its annotation
// (wire.GuardRoutesAnnotation). A policy rendered before the annotation has
// the kinds and charts only in its variables (where the platform keeps
// them; they are inlined below Kubernetes 1.36), without the definitions'
// names; without either the routes are unknown and never compared.
func (r *Record) readRoutes(doc *yaml.Node) error {
	if a := yamlnode.Lookup(doc, "metadata", "annotations", wire.GuardRoutesAnnotation); a != nil {
		var routes []render.GuardRoute
		if err := json.Unmarshal([]byte(scalar(a)), &routes); err != nil {
			return fmt.Errorf("metadata.annotations.%s: not a JSON list of routed definitions: %w", wire.GuardRoutesAnnotation, err)
		}
		r.Routes, r.RoutesKnown = map[string]render.GuardRoute{}, true
		for _, route := range routes {
			r.Routes[route.Kind] = route
		}
		return nil
	}
	vars := yamlnode.Lookup(doc, "spec", "variables")
	if vars == nil {
		return nil
	}
	var kinds []string
	var charts []render.GuardChart
	found := 0
	for i, v := range vars.Content {
		var err error
		switch scalar(yamlnode.Get(v, "name")) {
		case "computePlaneKinds":
			found++
			err = json.Unmarshal([]byte(scalar(yamlnode.Get(v, "expression"))), &kinds)
		case "computePlaneCharts":
			found++
			err = json.Unmarshal([]byte(scalar(yamlnode.Get(v, "expression"))), &charts)
		}
		if err != nil {
			return fmt.Errorf("spec.variables[%d].expression: not the JSON the guard writes: %w", i, err)
		}
	}
	if found < 2 {
		return nil
	}
	// Without the annotation, kinds and charts are two lists: a kind's
	// chart is known only when there is one of each.
	r.Routes, r.RoutesKnown = map[string]render.GuardRoute{}, true
	for _, k := range kinds {
		route := render.GuardRoute{Kind: k}
		if len(kinds) == 1 && len(charts) == 1 {
			route.ChartRef = charts[0]
		}
		r.Routes[k] = route
	}
	return nil
}

func scalar(n *yaml.Node) string {
	n = yamlnode.Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || yamlnode.IsNull(n) {
		return ""
	}
	return n.Value
}

func sortedSet(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
