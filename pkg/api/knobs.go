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
// An error means the embedded schema is broken, a defect of the build.
func DefaultKnobSchema() (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(defaultKnobSchema, &doc); err != nil {
		return nil, fmt.Errorf("failed to read the embedded knob schema: %w", err)
	}
	v, err := yamlnode.ToValue(&doc, yamlnode.DefaultBudget)
	if err != nil {
		return nil, fmt.Errorf("failed to read the embedded knob schema: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the embedded knob schema is not a map")
	}
	return m, nil
}
