package render

import (
	"errors"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/fleet"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Labels and prefixes of app releases, as cozystack-api writes them.
const (
	// AppLabelPrefix is glued onto every key of the app's own labels and
	// annotations when they are copied to its HelmRelease.
	AppLabelPrefix = "apps.cozystack.io-"

	ApplicationKindLabel  = "apps.cozystack.io/application.kind"
	ApplicationGroupLabel = "apps.cozystack.io/application.group"
	ApplicationNameLabel  = "apps.cozystack.io/application.name"

	// Routed releases carry these instead of the three above, so that
	// cozystack-api does not list them as editable apps.
	RoutedKindLabel = "computeplane.dev/application.kind"
	RoutedNameLabel = "computeplane.dev/application.name"

	// ValuesSecret is the platform Secret every release takes values from.
	ValuesSecret = "cozystack-values"
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
func RenderRelease(f *fleet.Fleet, app *fleet.App) (Object, error) {
	def := app.Definition
	routed := app.Placement == api.ComputePlane

	labels := make(map[string]string, len(def.Labels)+len(app.Labels)+4)
	for k, v := range def.Labels {
		labels[k] = v
	}
	for k, v := range app.Labels {
		labels[AppLabelPrefix+k] = v
	}
	if routed && !f.Config.Routing.EditableThroughAPI {
		labels[RoutedKindLabel] = app.Kind
		labels[RoutedNameLabel] = app.Name
	} else {
		labels[ApplicationKindLabel] = app.Kind
		labels[ApplicationGroupLabel] = api.AppsGroup
		labels[ApplicationNameLabel] = app.Name
	}
	var annotations map[string]string
	if len(app.Annotations) > 0 {
		annotations = make(map[string]string, len(app.Annotations))
		for k, v := range app.Annotations {
			annotations[AppLabelPrefix+k] = v
		}
	}

	maxHistory := releaseMaxHistory
	hr := helmv2.HelmRelease{
		TypeMeta: metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:        app.Release,
			Namespace:   app.Namespace,
			Labels:      managedLabels(labels),
			Annotations: annotations,
		},
		Spec: helmv2.HelmReleaseSpec{
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
			ValuesFrom: []helmv2.ValuesReference{{Kind: "Secret", Name: ValuesSecret}},
		},
	}
	for _, hc := range def.HealthCheckExprs {
		hr.Spec.HealthCheckExprs = append(hr.Spec.HealthCheckExprs, kustomize.CustomHealthCheck{
			APIVersion: hc.APIVersion,
			Kind:       hc.Kind,
			HealthCheckExpressions: kustomize.HealthCheckExpressions{
				Current: hc.Current, InProgress: hc.InProgress, Failed: hc.Failed,
			},
		})
	}
	switch {
	case def.WaitStrategy != "":
		hr.Spec.WaitStrategy = &helmv2.WaitStrategy{Name: helmv2.WaitStrategyName(def.WaitStrategy)}
	case len(def.HealthCheckExprs) > 0:
		// Health checks are only evaluated by the poller strategy.
		hr.Spec.WaitStrategy = &helmv2.WaitStrategy{Name: "poller"}
	}
	if routed {
		cluster := f.ClusterRelease()
		hr.Spec.KubeConfig = &meta.KubeConfigReference{
			SecretRef: &meta.SecretKeyReference{Name: fleet.KubeconfigSecret(cluster), Key: fleet.KubeconfigKey},
		}
		hr.Spec.Install.CreateNamespace = true
		hr.Spec.DependsOn = []helmv2.DependencyReference{{Name: cluster}}
	}
	if app.Spec != nil || app.Values != nil {
		// A placeholder keeps the field's place; the app's spec is copied
		// in as written below.
		hr.Spec.Values = &apiextensionsv1.JSON{Raw: []byte("{}")}
	}

	n, err := toNode(&hr)
	if err != nil {
		return Object{}, err
	}
	o := releaseObject(app)
	switch {
	case app.Values != nil:
		if app.Values.Err != nil {
			return Object{}, valuesProblem(app.App, app.Values.Err)
		}
		yamlnode.SetKey(yamlnode.Get(n, "spec"), "values", yamlnode.Placeholder())
		o.Values = app.Values
	case app.Spec != nil:
		values, err := yamlnode.Copy(app.Spec, yamlnode.DefaultBudget)
		if err != nil {
			return Object{}, valuesProblem(app.App, err)
		}
		yamlnode.SetKey(yamlnode.Get(n, "spec"), "values", values)
	}
	o.Node = n
	return o, nil
}

// releaseObject is the identity of an app's HelmRelease, without its node.
func releaseObject(app *fleet.App) Object {
	tenant := ""
	if app.Tenant != nil {
		tenant = app.Tenant.Namespace
	}
	return Object{
		APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind, Namespace: app.Namespace, Name: app.Release,
		Generated: true, From: app.Ref, Origin: app.Origin, Tenant: tenant,
	}
}

// PlanRelease is RenderRelease put off until the release is written: it
// returns the release's identity, with what Object.Build needs to render it.
// Only apps whose values were encoded ahead (App.Values) are put off, since
// rendering them can then fail on nothing the user wrote; the problem of
// values that could not be encoded is returned here.
func PlanRelease(f *fleet.Fleet, app *fleet.App) (Object, error) {
	if app.Values == nil {
		return RenderRelease(f, app)
	}
	if app.Values.Err != nil {
		return Object{}, valuesProblem(app.App, app.Values.Err)
	}
	o := releaseObject(app)
	o.pending = &pendingRelease{fleet: f, app: app}
	return o, nil
}

// valuesProblem reports why an app's spec cannot be copied into its release.
func valuesProblem(app *api.App, err error) api.Problem {
	field := "spec"
	if pe, ok := err.(*yamlnode.PathError); ok && pe.Path != "" {
		field += "." + pe.Path
	}
	return api.Errorf(app.Ref, app.Origin, field, "%v", unwrapPath(err))
}

// unwrapPath drops the path of a yamlnode.PathError, which the caller has
// already put in the field.
func unwrapPath(err error) error {
	var pe *yamlnode.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
