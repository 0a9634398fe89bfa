package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// RootNamespace is the namespace of the implicit root tenant.
const RootNamespace = "tenant-root"

// MaxReleaseName is the longest Helm release name (Helm's own limit).
const MaxReleaseName = 53

// InstallerAccount is the service account, in the namespace of each tenant
// with a cluster under delivery: Direct, that the cluster HelmRelease names
// in spec.serviceAccountName: helm-controller installs the cluster's chart
// as it. The management-plane guard admits a kubeConfig naming a
// ComputePlane's credentials only from the fleet and from this account of
// the credentials' own namespace.
const InstallerAccount = wire.InstallerAccount

// Fleet is the checked model of all inputs.
type Fleet struct {
	Config *api.Config
	// Cluster holds the values of every ComputePlane cluster under
	// delivery: Direct, every tenant's knobs checked against it; nil under
	// delivery: Platform, where the platform's module sets them.
	Cluster *ClusterPlan
	// Definitions by the app kind they declare.
	Definitions map[string]*api.Definition
	// Tenants by namespace, including the implicit root.
	Tenants map[string]*Tenant
	// Apps in input order; render sorts its output.
	Apps []*App
	// Inputs are the objects consumed as inputs (kept with keepInputs).
	Inputs []api.Object
	// Passthrough are the objects that are not inputs of this function.
	Passthrough []api.Object

	// valueWarnings are the warnings of the check of the apps' values
	// against their definitions (checkAppValues).
	valueWarnings api.Problems

	// unread are the namespaces of Tenants refused while decoding: their
	// own problems are reported, and what follows from their absence (a
	// child, knobs or apps of no known tenant) is not.
	unread map[string]bool
}

// Tenant is one node of the tenant tree.
type Tenant struct {
	// Object is the Tenant object; nil for the implicit root.
	Object       *api.Tenant
	Name         string
	Namespace    string
	Parent       *Tenant
	Children     []*Tenant
	ComputePlane bool
	Knobs        *api.Knobs
	// Apps are the apps in this tenant's namespace.
	Apps []*App
}

// App is an app object with what routing it needs.
type App struct {
	*api.App
	// Values are the app's spec, the Helm values of its release, held as
	// the text they take there (Reader.EncodeValues), which the model reads
	// back only to check it against its definition's schema
	// (checkAppValues); nil when the app has no spec.
	Values     []byte
	Definition *api.Definition
	// Tenant owns the app's namespace; nil when no known tenant does.
	Tenant    *Tenant
	Placement api.Placement
	// Release is the HelmRelease name: definition prefix + app name.
	Release string
}

// ClusterRelease is the Helm release name of every ComputePlane cluster
// under the configured delivery.
func (f *Fleet) ClusterRelease() string {
	if f.Config.Delivery == api.Platform {
		return wire.PlatformClusterRelease
	}
	return wire.DirectClusterRelease
}

// KubeconfigSecret is the Secret in which apps/kubernetes (through Kamaji)
// writes the admin kubeconfig of a cluster with the given release name.
func KubeconfigSecret(release string) string { return release + "-admin-kubeconfig" }

// ReadyAddonRelease is the HelmRelease that says a cluster with the given
// release name can take apps: apps/kubernetes creates it in the cluster's
// namespace (the CNI addon, <release>-cilium, installed into the cluster
// through the same kubeconfig Secret), and it becomes Ready only once
// Kamaji's API server is up, the Secret exists and Cilium runs on the
// cluster's nodes. Every other addon of the chart waits for it too.
func ReadyAddonRelease(release string) string { return release + "-cilium" }

// DashboardRole is the chart's Role <release>-dashboard-resources
// (templates/dashboard-resourcemap.yaml at Cozystack 3c780acd), bound to
// the tenant's use, admin and super-admin groups and their ancestors'. It
// lets the dashboard show the cluster's objects; its second rule reads the
// cluster's super-admin kubeconfig.
func DashboardRole(release string) string { return release + "-dashboard-resources" }

// KubeconfigKey is the key of that Secret that reaches the cluster's API
// server from inside the management cluster.
const KubeconfigKey = "super-admin.svc"

// Ancestors returns the tenant's ancestors, nearest first.
func (t *Tenant) Ancestors() []*Tenant {
	var out []*Tenant
	for p := t.Parent; p != nil; p = p.Parent {
		out = append(out, p)
	}
	return out
}

// Descendants returns the namespaces of the tenant's descendants, sorted.
func (t *Tenant) Descendants() []string {
	var out []string
	var walk func(*Tenant)
	walk = func(n *Tenant) {
		for _, c := range n.Children {
			out = append(out, c.Namespace)
			walk(c)
		}
	}
	walk(t)
	slices.Sort(out)
	return out
}

// TenantNamespace is Cozystack's namespace for tenant name whose object lives
// in parent: tenant-<name> under the root, <parent>-<name> below it.
func TenantNamespace(parent, name string) string {
	if parent == RootNamespace {
		if name == "root" {
			return RootNamespace
		}
		return "tenant-" + name
	}
	return parent + "-" + name
}

// SortedTenants returns the tenants ordered by namespace.
func (f *Fleet) SortedTenants() []*Tenant {
	out := make([]*Tenant, 0, len(f.Tenants))
	for _, t := range f.Tenants {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b *Tenant) int { return cmp.Compare(a.Namespace, b.Namespace) })
	return out
}

// Build indexes and checks the inputs, each read by Reader.Read, which gave
// it its role. It returns every problem found, sorted, and no fleet when
// there is any.
func Build(cfg *api.Config, inputs []*Input) (*Fleet, api.Problems) {
	f := &Fleet{Config: cfg, Definitions: map[string]*api.Definition{}, Tenants: map[string]*Tenant{}, Inputs: make([]api.Object, 0, len(inputs))}
	var problems api.Problems
	var tenants []*api.Tenant
	var knobs []*api.Knobs
	apps := make([]*Input, 0, len(inputs))

	// Work in one order whatever the input order, so that messages about
	// two objects (duplicates, collisions) read the same on every run.
	inputs = slices.Clone(inputs)
	slices.SortStableFunc(inputs, compareInputs)

	// Definitions first: they say which kinds are apps.
	byName := map[string]*api.Definition{}
	for _, in := range inputs {
		if in.Role != DefinitionInput {
			continue
		}
		def, ps := api.DecodeDefinition(in.Object)
		problems = append(problems, ps...)
		f.Inputs = append(f.Inputs, in.Object)
		if def == nil || def.Kind == "" {
			continue
		}
		if prev, dup := byName[def.Ref.Name]; dup {
			problems = append(problems, api.Errorf(def.Ref, def.Origin, "metadata.name",
				"ApplicationDefinition %q is defined twice (also in %s); one name, one definition", def.Ref.Name, prev.Origin.Describe()))
			continue
		}
		byName[def.Ref.Name] = def
		if prev, dup := f.Definitions[def.Kind]; dup {
			problems = append(problems, api.Errorf(def.Ref, def.Origin, "spec.application.kind",
				"kind %s is already declared by ApplicationDefinition %q (%s); one kind, one definition", def.Kind, prev.Ref.Name, prev.Origin.Describe()))
			continue
		}
		f.Definitions[def.Kind] = def
	}
	for _, in := range inputs {
		o := in.Object
		switch in.Role {
		case DefinitionInput, EarlierOutput:
		case ConfigInput:
			// kpt in place deletes the files of items a function drops, so
			// there keepInputs must keep it.
			f.Inputs = append(f.Inputs, o)
		case UnsupportedInput:
			f.Inputs = append(f.Inputs, o)
			problems = append(problems, api.Errorf(o.Ref(), o.Origin, "apiVersion", "only %s is supported, not %s", api.AppsAPIVersion, o.APIVersion))
		case TenantInput:
			f.Inputs = append(f.Inputs, o)
			problems = append(problems, in.problems...)
			if len(in.problems) == 0 {
				in.tenant.Origin = o.Origin
				tenants = append(tenants, in.tenant)
			} else if in.tenant != nil && in.tenant.Name != "" {
				if f.unread == nil {
					f.unread = map[string]bool{}
				}
				f.unread[TenantNamespace(in.tenant.Parent, in.tenant.Name)] = true
			}
		case KnobsInput:
			f.Inputs = append(f.Inputs, o)
			problems = append(problems, in.problems...)
			if len(in.problems) == 0 {
				in.knobs.Origin = o.Origin
				knobs = append(knobs, in.knobs)
			}
		case AppInput:
			f.Inputs = append(f.Inputs, o)
			apps = append(apps, in)
		default:
			problems = append(problems, api.CheckObject(o)...)
			problems = append(problems, CheckKubeconfigReferences(o)...)
			f.Passthrough = append(f.Passthrough, o)
		}
	}

	if cfg.KeepInputs {
		for _, o := range f.Inputs {
			problems = append(problems, CheckKubeconfigReferences(o)...)
		}
	}
	problems = append(problems, f.checkDelivery()...)
	problems = append(problems, f.buildTenants(tenants)...)
	problems = append(problems, f.attachKnobs(knobs)...)
	problems = append(problems, f.buildApps(apps)...)
	problems = append(problems, f.checkClusters()...)
	if len(problems) == 0 {
		problems = append(problems, f.checkRouting()...)
	}
	if len(problems) == 0 {
		problems = append(problems, f.checkCopies()...)
	}
	if len(problems) > 0 {
		return nil, problems.Compact()
	}
	return f, nil
}

func compareInputs(a, b *Input) int {
	x, y := &a.Object, &b.Object
	return cmp.Or(
		cmp.Compare(x.APIVersion, y.APIVersion),
		cmp.Compare(x.Kind, y.Kind),
		cmp.Compare(x.Namespace, y.Namespace),
		cmp.Compare(x.Name, y.Name),
		cmp.Compare(x.Origin.File, y.Origin.File),
		cmp.Compare(x.Origin.Index, y.Origin.Index),
	)
}

// checkDelivery refuses a Direct delivery next to the platform's own
// ComputePlane module: both would own HelmRelease computeplane.
func (f *Fleet) checkDelivery() api.Problems {
	def, ok := f.Definitions[api.KnobsKind]
	if !ok || f.Config.Delivery != api.Direct {
		return nil
	}
	return api.Problems{api.Errorf(def.Ref, def.Origin, "spec.application.kind",
		"the platform ships the ComputePlane module (this definition declares kind ComputePlane), whose HelmRelease %q would collide with the cluster that delivery: Direct emits; set spec.delivery: Platform in the function config, or leave this definition out of the inputs",
		wire.DirectClusterRelease)}
}

func (f *Fleet) buildTenants(tenants []*api.Tenant) api.Problems {
	var problems api.Problems
	root := &Tenant{Name: "root", Namespace: RootNamespace}
	f.Tenants[RootNamespace] = root
	// Namespaces depend only on name and parent namespace, so every
	// namespace is known before parents are resolved.
	byNS := map[string]*api.Tenant{}
	for _, t := range tenants {
		ns := TenantNamespace(t.Parent, t.Name)
		if t.Parent != RootNamespace && !api.ValidDNSLabel(t.Parent) {
			problems = append(problems, api.Errorf(t.Ref, t.Origin, "metadata.namespace",
				"%q is not a valid namespace name", t.Parent))
			continue
		}
		if len(ns) > 63 {
			problems = append(problems, api.Errorf(t.Ref, t.Origin, "metadata.name",
				"tenant namespace %q is %d characters long; Kubernetes allows at most 63", ns, len(ns)))
			continue
		}
		if prev, dup := byNS[ns]; dup {
			problems = append(problems, api.Errorf(t.Ref, t.Origin, "metadata.name",
				"tenant %q in %s is defined twice (also in %s)", t.Name, t.Parent, prev.Origin.Describe()))
			continue
		}
		byNS[ns] = t
		if ns == RootNamespace {
			root.Object = t
			root.ComputePlane = t.ComputePlane
			continue
		}
		f.Tenants[ns] = &Tenant{Object: t, Name: t.Name, Namespace: ns, ComputePlane: t.ComputePlane}
	}
	for ns, node := range f.Tenants {
		if ns == RootNamespace {
			continue
		}
		parent, ok := f.Tenants[node.Object.Parent]
		if !ok && f.unread[node.Object.Parent] {
			continue
		}
		if !ok {
			problems = append(problems, api.Errorf(node.Object.Ref, node.Object.Origin, "metadata.namespace",
				"%q is not the namespace of any known tenant; a Tenant lives in its parent tenant's namespace (tenant-root for top-level tenants)", node.Object.Parent))
			continue
		}
		node.Parent = parent
		parent.Children = append(parent.Children, node)
	}
	for _, t := range f.Tenants {
		slices.SortFunc(t.Children, func(a, b *Tenant) int { return cmp.Compare(a.Namespace, b.Namespace) })
	}
	return problems
}

func (f *Fleet) attachKnobs(knobs []*api.Knobs) api.Problems {
	var problems api.Problems
	for _, k := range knobs {
		if f.Config.Delivery == api.Platform {
			problems = append(problems, api.Errorf(k.Ref, k.Origin, "kind",
				"ComputePlane knob objects are for delivery: Direct; under delivery: Platform the tenant sets its cluster through the platform's ComputePlane app, so remove this object from the inputs"))
			continue
		}
		t, ok := f.Tenants[k.Namespace]
		switch {
		case !ok && f.unread[k.Namespace]:
		case !ok:
			problems = append(problems, api.Errorf(k.Ref, k.Origin, "metadata.namespace",
				"%q is not the namespace of any known tenant", k.Namespace))
		case !t.ComputePlane:
			problems = append(problems, api.Errorf(k.Ref, k.Origin, "metadata.namespace",
				"tenant %q (%s) has no ComputePlane: set spec.computeplane: true on its Tenant object to use these knobs", t.Name, t.Namespace))
		case t.Knobs != nil:
			problems = append(problems, api.Errorf(k.Ref, k.Origin, "metadata.name",
				"tenant %s already has a ComputePlane object (%s); one per tenant", t.Namespace, t.Knobs.Origin.Describe()))
		default:
			t.Knobs = k
		}
	}
	return problems
}

func (f *Fleet) buildApps(inputs []*Input) api.Problems {
	var problems api.Problems
	read := make([]readApp, 0, len(inputs))
	f.Apps = make([]*App, 0, len(inputs))
	cluster := f.ClusterRelease()
	for _, in := range inputs {
		o := in.Object
		def, ok := f.Definitions[o.Kind]
		if !ok {
			problems = append(problems, api.Errorf(o.Ref(), o.Origin, "kind",
				"no ApplicationDefinition in the inputs declares kind %s; add its definition to the inputs (known kinds: %s)", o.Kind, f.knownKinds()))
			continue
		}
		problems = append(problems, in.problems...)
		if len(in.problems) > 0 {
			continue
		}
		a := in.app
		a.Origin = o.Origin
		app := &App{App: a, Values: in.values, Definition: def, Placement: def.Placement, Release: def.Prefix + a.Name, Tenant: f.Tenants[a.Namespace]}
		if len(app.Release) > MaxReleaseName {
			problems = append(problems, api.Errorf(a.Ref, a.Origin, "metadata.name",
				"release name %q (prefix %q + name) is %d characters long; Helm allows at most %d, so the name may have at most %d",
				app.Release, def.Prefix, len(app.Release), MaxReleaseName, MaxReleaseName-len(def.Prefix)))
			continue
		}
		if f.Config.Delivery == api.Platform && app.Release == wire.PlatformModuleRelease {
			problems = append(problems, api.Errorf(a.Ref, a.Origin, "metadata.name",
				"release name %q is reserved for the tenant's ComputePlane in every tenant namespace; rename the app", app.Release))
			continue
		}
		if why := ReservedRelease(cluster, app.Release); why != "" {
			problems = append(problems, api.Errorf(a.Ref, a.Origin, "metadata.name",
				"release name %q %s; rename the app", app.Release, why))
			continue
		}
		if field, why := poolClaim(cluster, app); why != "" {
			problems = append(problems, api.Errorf(a.Ref, a.Origin, field, "%s", why))
			continue
		}
		if app.Tenant == nil && f.unread[a.Namespace] {
			continue
		}
		if app.Tenant == nil {
			// Whatever its placement: an app of no tenant is a typo in
			// its namespace or a Tenant left out of the inputs, and either
			// way the run would place it by a tenant it does not have.
			problems = append(problems, api.Errorf(a.Ref, a.Origin, "metadata.namespace",
				"%q is not the namespace of any tenant in the inputs, and every app belongs to a tenant; add its Tenant object to the inputs, or correct the namespace", a.Namespace))
			continue
		}
		if app.Placement == api.PlacementComputePlane {
			switch {
			case !app.Tenant.ComputePlane:
				problems = append(problems, api.Errorf(a.Ref, a.Origin, "metadata.namespace",
					"%s apps run only on a ComputePlane, and tenant %q (%s) has none; set spec.computeplane: true on that Tenant (an ancestor's ComputePlane is never used)", a.Kind, app.Tenant.Name, a.Namespace))
				continue
			}
		}
		app.Tenant.Apps = append(app.Tenant.Apps, app)
		f.Apps = append(f.Apps, app)
		read = append(read, readApp{app, in.shape})
		in.shape = nil
	}
	refused, warned := f.checkAppValues(read)
	f.valueWarnings = warned
	return append(problems, refused...)
}

func (f *Fleet) knownKinds() string {
	kinds := make([]string, 0, len(f.Definitions))
	for k := range f.Definitions {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	if len(kinds) == 0 {
		return "none"
	}
	return strings.Join(kinds, ", ")
}

// String describes the tenant for messages.
func (t *Tenant) String() string { return fmt.Sprintf("tenant %q (%s)", t.Name, t.Namespace) }
