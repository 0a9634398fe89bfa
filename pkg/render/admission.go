package render

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// RenderAdmission builds the ConfigMap computeplane-admission of a tenant's
// ComputePlane: the AdmissionConfiguration its API server loads.
func RenderAdmission(a *model.Admission, t *model.Tenant) (Object, error) {
	cm := corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: hardeningMeta(wire.AdmissionConfigMapName, t),
		Data:       map[string]string{a.FileName: a.Config},
	}
	n, err := TypedNode(&cm)
	if err != nil {
		return Object{}, err
	}
	return keptObject(tenantObject(t, n, cm.APIVersion, cm.Kind, cm.Name)), nil
}

// hardeningMeta is the metadata of an object that hardens a tenant's
// cluster. It is kept with the cluster it protects: when a ComputePlane
// leaves Git, Flux keeps the live cluster, and so this too.
func hardeningMeta(name string, t *model.Tenant) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   t.Namespace,
		Labels:      managedLabels(nil),
		Annotations: map[string]string{wire.PruneAnnotation: wire.PruneDisabled},
	}
}
