package schema_test

import (
	"fmt"

	"github.com/computeplane-dev/computeplane-fn/pkg/schema"
)

func ExampleSchema_Validate() {
	s, err := schema.Compile([]byte(`
type: object
properties:
  spec:
    type: object
    required: [interval]
    properties:
      interval: {type: string, pattern: '^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$'}
      replicas: {type: integer, minimum: 1}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	value := map[string]any{
		"spec": map[string]any{"replicas": 0, "suspend": true},
	}
	for _, v := range s.Validate(value) {
		fmt.Println(v)
	}
	fmt.Println(len(s.AllowUnknown().Validate(value)), "violations with unknown fields allowed")
	// Output:
	// spec.interval: is required
	// spec.replicas: should be greater than or equal to 1
	// spec.suspend: unknown field
	// 2 violations with unknown fields allowed
}
