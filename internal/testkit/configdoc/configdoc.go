// Package configdoc writes the reference of the function config
// (docs/function.md, "FunctionConfig") from the config's JSON Schema
// (api.ConfigSchema), so that the docs say what the schema says, which is
// what the decoder checks every config against. Its test fails when docs/function.md differs
// from what it writes; `make docs` (go test ./internal/configdoc -update)
// rewrites the section.
package configdoc

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// The markers around the generated section of docs/function.md.
const (
	Begin = "<!-- BEGIN: generated from pkg/api/computeplanegenerator.schema.json by make docs; do not edit -->"
	End   = "<!-- END: generated -->"
)

// Reference returns the table of every field of spec, in the schema's
// order, a nested field after its parent and a list's item fields as
// field[].name.
func Reference(root *api.SchemaNode) (string, error) {
	spec := root.Lookup("spec")
	if spec == nil {
		return "", fmt.Errorf("failed to write the config reference: the schema has no spec")
	}
	var b strings.Builder
	b.WriteString("| field | type | default | meaning |\n|---|---|---|---|\n")
	if err := rows(&b, spec, "spec"); err != nil {
		return "", fmt.Errorf("failed to write the config reference: %w", err)
	}
	return b.String(), nil
}

func rows(b *strings.Builder, s *api.SchemaNode, path string) error {
	for _, name := range s.Order {
		p := s.Properties[name]
		field := path + "." + name
		def, err := defaultText(p)
		if err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		if contains(s.Required, name) {
			def = "required"
			if path != "spec" {
				def = "required in `" + path + "`"
			}
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", field, typeText(p), def, cell(p.Description))
		switch {
		case p.Type == "object" && p.Properties != nil:
			if err := rows(b, p, field); err != nil {
				return err
			}
		case p.Type == "array" && p.Items != nil && p.Items.Properties != nil:
			if err := rows(b, p.Items, field+"[]"); err != nil {
				return err
			}
		}
	}
	return nil
}

// typeText says what a field holds: its type, and an enum's values.
func typeText(s *api.SchemaNode) string {
	switch {
	case len(s.Enum) > 0:
		var vals []string
		for _, v := range s.Enum {
			vals = append(vals, fmt.Sprintf("`%v`", v))
		}
		return strings.Join(vals, ", ")
	case s.Type == "array" && s.Items != nil && s.Items.Type == "object":
		return "list of objects"
	case s.Type == "array" && s.Items != nil:
		return "list of " + s.Items.Type + "s"
	case s.Type == "object" && s.Properties == nil && s.Values != nil:
		if s.Values.Type != "" {
			return "map of " + s.Values.Type + "s"
		}
		return "map of " + strings.Join(s.Values.Types, "s or ") + "s"
	case s.Type == "object" && s.Properties == nil:
		return "map"
	case s.Type == "integer" && (s.Minimum != nil || s.Maximum != nil):
		return fmt.Sprintf("integer, %s to %s", bound(s.Minimum), bound(s.Maximum))
	}
	return s.Type
}

func bound(v *int64) string {
	if v == nil {
		return "any"
	}
	return fmt.Sprintf("%d", *v)
}

// defaultText is the default in words (x-default) or as YAML would write
// the value; "" for none.
func defaultText(s *api.SchemaNode) (string, error) {
	if s.DefaultText != "" {
		return cell(s.DefaultText), nil
	}
	switch v := s.Default.(type) {
	case nil:
		return "", nil
	case string:
		if v == "" {
			return "`\"\"`", nil
		}
		if strings.Trim(v, "0123456789.") == "" {
			return "`\"" + v + "\"`", nil // a number if unquoted
		}
		return "`" + v + "`", nil
	case bool, float64:
		return fmt.Sprintf("`%v`", v), nil
	}
	data, err := json.Marshal(s.Default)
	if err != nil {
		return "", err
	}
	return "`" + string(data) + "`", nil
}

// cell makes text fit one table cell.
func cell(text string) string {
	return strings.ReplaceAll(strings.ReplaceAll(text, "|", `\|`), "\n", " ")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
