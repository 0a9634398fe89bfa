package render_test

import (
	"testing"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// TestAdmissionConfigMap: the ConfigMap holds the file the API server flag
// names, and nothing else.
func TestAdmissionConfigMap(t *testing.T) {
	a, err := model.NewAdmission(api.PodSecurityRestricted, api.DefaultClusterValues())
	if err != nil {
		t.Fatal(err)
	}
	tenant := &model.Tenant{Name: "acme", Namespace: "tenant-acme", ComputePlane: true}
	o, err := render.RenderAdmission(a, tenant)
	if err != nil {
		t.Fatal(err)
	}
	v, err := yamlnode.ToValue(nodeOf(t, o), yamlnode.DefaultBudget)
	if err != nil {
		t.Fatal(err)
	}
	cm := v.(map[string]any)
	for _, viol := range crdtest.ValidateMetadata(cm["metadata"], true) {
		t.Error(viol)
	}
	data := cm["data"].(map[string]any)
	if data[a.FileName] != a.Config || len(data) != 1 {
		t.Errorf("ConfigMap data = %v, want only %s", data, a.FileName)
	}
	if o.Name != wire.AdmissionConfigMapName || o.Namespace != "tenant-acme" || cm["apiVersion"] != "v1" || cm["kind"] != "ConfigMap" {
		t.Errorf("ConfigMap is %s %s/%s", cm["kind"], o.Namespace, o.Name)
	}
}
