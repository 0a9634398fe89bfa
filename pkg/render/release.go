package render

import (
	"slices"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Release settings of cozystack-api v1.6 (its flag defaults).
const (
	releaseInterval      = 5 * time.Minute
	releaseMaxHistory    = 5
	releaseRetryInterval = 30 * time.Second
)

// RenderRelease builds the HelmRelease of one app, field for field what
// cozystack-api makes from it; with placement ComputePlane it is routed onto
// the tenant's cluster through the cluster's admin kubeconfig.
func RenderRelease(f *model.Fleet, app *model.App) Object {
	return newReleases(f).render(app)
}

// releaseLabels are the labels of an app's release: the definition's, the
// app's own (prefixed), and the lineage labels that make cozystack-api list
// the release as the app, or, routed, the ones that keep it from doing so.
func releaseLabels(f *model.Fleet, app *model.App) map[string]string {
	def := app.Definition
	labels := make(map[string]string, len(def.Labels)+len(app.Labels)+4)
	for k, v := range def.Labels {
		if k == wire.ShardingLabel && !shardLabelRendered(f, v) {
			continue
		}
		labels[k] = v
	}
	for k, v := range app.Labels {
		labels[wire.ReleaseKeyPrefix+k] = v
	}
	if app.Placement == api.PlacementComputePlane && !f.Config.Routing.EditableThroughAPI {
		labels[wire.RoutedKindLabel] = app.Kind
		labels[wire.RoutedNameLabel] = app.Name
	} else {
		labels[wire.ApplicationKindLabel] = app.Kind
		labels[wire.ApplicationGroupLabel] = api.AppsGroup
		labels[wire.ApplicationNameLabel] = app.Name
	}
	return managedLabels(labels)
}

// releaseAnnotations are the app's own annotations, prefixed; nil when it
// has none.
func releaseAnnotations(app *model.App) map[string]string {
	if len(app.Annotations) == 0 {
		return nil
	}
	annotations := make(map[string]string, len(app.Annotations))
	for k, v := range app.Annotations {
		annotations[wire.ReleaseKeyPrefix+k] = v
	}
	return annotations
}

// releaseSpec is the spec of a release of definition def, routed or not,
// with or without values (a placeholder then keeps the field's place). It
// takes no app on purpose: everything of a release that depends on the app
// itself is in its metadata and values, so the spec is rendered once per
// definition and routing and shared by every app of that kind (see
// releases).
func releaseSpec(f *model.Fleet, def *api.Definition, routed, values bool) helmv2.HelmReleaseSpec {
	maxHistory := releaseMaxHistory
	spec := helmv2.HelmReleaseSpec{
		ChartRef: &helmv2.CrossNamespaceSourceReference{
			Kind:      def.ChartRef.Kind,
			Name:      def.ChartRef.Name,
			Namespace: def.ChartRef.Namespace,
		},
		Interval:   metav1.Duration{Duration: releaseInterval},
		MaxHistory: &maxHistory,
		Install: &helmv2.Install{
			Timeout:     &metav1.Duration{Duration: def.InstallTimeout},
			Strategy:    &helmv2.InstallStrategy{Name: "RetryOnFailure", RetryInterval: &metav1.Duration{Duration: releaseRetryInterval}},
			DisableWait: def.DisableWait,
		},
		Upgrade: &helmv2.Upgrade{
			Timeout:     &metav1.Duration{Duration: def.UpgradeTimeout},
			Strategy:    &helmv2.UpgradeStrategy{Name: "RetryOnFailure", RetryInterval: &metav1.Duration{Duration: releaseRetryInterval}},
			DisableWait: def.DisableWait,
		},
		ValuesFrom: []helmv2.ValuesReference{{Kind: "Secret", Name: wire.ValuesSecret}},
	}
	for _, hc := range def.HealthCheckExprs {
		spec.HealthCheckExprs = append(spec.HealthCheckExprs, kustomize.CustomHealthCheck{
			APIVersion: hc.APIVersion,
			Kind:       hc.Kind,
			HealthCheckExpressions: kustomize.HealthCheckExpressions{
				Current: hc.Current, InProgress: hc.InProgress, Failed: hc.Failed,
			},
		})
	}
	switch {
	case def.WaitStrategy != "":
		spec.WaitStrategy = &helmv2.WaitStrategy{Name: helmv2.WaitStrategyName(def.WaitStrategy)}
	case len(def.HealthCheckExprs) > 0:
		// Health checks are only evaluated by the poller strategy.
		spec.WaitStrategy = &helmv2.WaitStrategy{Name: "poller"}
	}
	if routed {
		cluster := f.ClusterRelease()
		spec.KubeConfig = &meta.KubeConfigReference{
			SecretRef: &meta.SecretKeyReference{Name: model.KubeconfigSecret(cluster), Key: model.KubeconfigKey},
		}
		// helm-controller creates only a target namespace, and a fresh
		// cluster has no tenant namespace; with a target namespace it names
		// the Helm release <targetNamespace>-<name> unless releaseName says
		// otherwise. The target namespace is the one the in-cluster baseline
		// creates for the app (model.AppNamespace), and helm-controller
		// installs as the app's account there (model.AppAccount), which it
		// impersonates inside the cluster: the account may not create
		// namespaces, so install.createNamespace stays off. All three are
		// the app's own and set per app (routedPlaceholder keeps their
		// place among the sorted keys).
		// Helm keeps its release records in the storage namespace, which
		// defaults to the HelmRelease's own namespace, not the target one:
		// with per-app namespaces the account may not read Secrets there,
		// so the records go where the app installs.
		spec.TargetNamespace = routedPlaceholder
		spec.StorageNamespace = routedPlaceholder
		spec.ReleaseName = routedPlaceholder
		spec.ServiceAccountName = routedPlaceholder
		// Helm's client-side check of the rendered manifest against the
		// cluster's OpenAPI document fetches and parses that document on
		// every install and upgrade, through a client made for that
		// reconcile: about half of helm-controller's CPU per install
		// (make e2e-bench, docs/performance.md "The helm side"), and a
		// download from the tenant's API server each time. Helm applies
		// with fieldValidation=Strict, so the API server still refuses an
		// unknown or malformed field; only the all-or-nothing check before
		// the first object is given up. A management-plane release keeps
		// cozystack-api's spec (it makes no such field).
		spec.Install.DisableOpenAPIValidation = true
		spec.Upgrade.DisableOpenAPIValidation = true
		// The cluster release never waits (apps/kubernetes' addons cannot
		// be Ready before its workers exist), so it is Ready long before
		// the cluster can take an app. The cluster's CNI addon release is
		// Ready only then; helm-controller re-checks a dependency on a
		// fixed interval (--requeue-dependency), whereas an install that
		// fails on the missing kubeconfig Secret backs off exponentially.
		spec.DependsOn = []helmv2.DependencyReference{{Name: cluster}, {Name: model.ReadyAddonRelease(cluster)}}
		if f.Config.Fleet == nil {
			// The stream's baseline is a release (RenderBaselineRelease);
			// the fleet folder's is a Kustomization, which the routed
			// releases' unit waits for instead.
			spec.DependsOn = append(spec.DependsOn, helmv2.DependencyReference{Name: wire.BaselineRelease})
		}
	}
	if values {
		spec.Values = &apiextensionsv1.JSON{Raw: []byte("{}")}
	}
	return spec
}

// routedPlaceholder holds the place of a routed release's targetNamespace,
// releaseName and serviceAccountName in the shared spec of a definition, until render sets the
// app's own.
const routedPlaceholder = "placeholder"

// releases renders the releases of one run. The parts of a release that are
// the same for every app of a definition (apiVersion, kind and the spec but
// its values) are converted to YAML once per definition and routing, through
// the upstream API types, and shared by every release over them; each
// release then gets its own metadata and values. Safe for concurrent use:
// writers render releases on all cores.
type releases struct {
	f         *model.Fleet
	mu        sync.Mutex
	templates map[templateKey]*yaml.Node
}

type templateKey struct {
	def            *api.Definition
	routed, values bool
}

func newReleases(f *model.Fleet) *releases {
	return &releases{f: f, templates: map[templateKey]*yaml.Node{}}
}

// template returns the release of an app of def without metadata.
func (r *releases) template(key templateKey) (*yaml.Node, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.templates[key]; ok {
		return t, nil
	}
	hr := helmv2.HelmRelease{
		TypeMeta: metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		Spec:     releaseSpec(r.f, key.def, key.routed, key.values),
	}
	t, err := TypedNode(&hr)
	if err != nil {
		return nil, err
	}
	r.templates[key] = t
	return t, nil
}

// render plans the release of an app: it is rendered only when it is
// written (releaseBody).
func (r *releases) render(app *model.App) Object {
	o := releaseObject(app)
	o.Body = releaseBody{releases: r, app: app}
	return o
}

// node builds the release of an app with the given node at spec.values
// (none when nil): the template of its definition and routing, its own
// metadata, and, routed, its own target namespace and release name. The
// release shares the template's nodes.
func (r *releases) node(app *model.App, values *yaml.Node) (*yaml.Node, error) {
	routed := app.Placement == api.PlacementComputePlane
	t, err := r.template(templateKey{app.Definition, routed, values != nil})
	if err != nil {
		return nil, err
	}
	md := objectMeta(app.Release, app.Namespace, releaseLabels(r.f, app), releaseAnnotations(app))
	// The template's top level: apiVersion, kind, metadata, spec.
	n := &yaml.Node{Kind: t.Kind, Tag: t.Tag, Content: make([]*yaml.Node, len(t.Content))}
	for i := 0; i+1 < len(t.Content); i += 2 {
		k, v := t.Content[i], t.Content[i+1]
		switch {
		case k.Value == "metadata":
			v = md
		case k.Value == "spec" && (values != nil || routed):
			spec := &yaml.Node{Kind: v.Kind, Tag: v.Tag, Content: slices.Clone(v.Content)}
			if values != nil {
				yamlnode.SetKey(spec, "values", values)
			}
			if routed {
				yamlnode.SetKey(spec, "releaseName", yamlnode.String(app.Release))
				yamlnode.SetKey(spec, "serviceAccountName", yamlnode.String(r.f.AppAccount(app)))
				yamlnode.SetKey(spec, "storageNamespace", yamlnode.String(r.f.AppNamespace(app)))
				yamlnode.SetKey(spec, "targetNamespace", yamlnode.String(r.f.AppNamespace(app)))
			}
			v = spec
		}
		n.Content[i], n.Content[i+1] = k, v
	}
	return n, nil
}

// releaseObject is the identity of an app's HelmRelease, without its node.
func releaseObject(app *model.App) Object {
	tenant := ""
	if app.Tenant != nil {
		tenant = app.Tenant.Namespace
	}
	return Object{
		APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind, Namespace: app.Namespace, Name: app.Release,
		Generated: true, From: app.Ref, Origin: app.Origin, Tenant: tenant,
		Routed: app.Placement == api.PlacementComputePlane,
	}
}
