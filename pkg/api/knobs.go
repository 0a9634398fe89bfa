package api

import (
	_ "embed"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

//go:embed knobs.schema.yaml
var defaultKnobSchema []byte

// DefaultKnobSchema returns the OpenAPI v3 schema of the knobs a tenant may
// set when the config names none: nodeGroups, shaped like apps/kubernetes's.
func DefaultKnobSchema() map[string]any {
	var doc yaml.Node
	if err := yaml.Unmarshal(defaultKnobSchema, &doc); err != nil {
		panic(fmt.Sprintf("embedded knob schema: %v", err)) // a build defect, caught by every test
	}
	v, err := yamlnode.ToValue(&doc, yamlnode.DefaultBudget)
	if err != nil {
		panic(fmt.Sprintf("embedded knob schema: %v", err))
	}
	return v.(map[string]any)
}
