package api

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/knobs"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// decodeSpecInto decodes spec, the mapping at the field spec of a config,
// into c in two steps. First it checks spec against the config's schema
// with the API server's packages ([specChecker]) and reports every problem
// at its field: the fields the schema does not declare, then the values of
// the wrong type, then the rest (enums, bounds, patterns, required
// fields), each sorted by field. Then it decodes into c what the schema
// accepted: a refused value is left out, so its field keeps what c holds
// (the defaults that an explicit value, even a zero one, overrides); a
// refused item of a list leaves the whole list out.
//
// It returns the paths below spec that the decoded part writes, as
// [Config] keeps them: true for a value, false for null. The paths of the
// fields of list items carry the index ("routing.grants[0].definition").
func (d *decoder) decodeSpecInto(spec *yaml.Node, c *Config) map[string]bool {
	root, err := ParseConfigSchema()
	checker, cerr := specChecker()
	if err := cmp.Or(err, cerr); err != nil {
		d.fail("", "%v", err)
		return nil
	}
	specSchema := root.Lookup("spec")
	raw, err := yamlnode.ToValue(spec, yamlnode.DefaultBudget)
	if err != nil {
		field := "spec"
		if pe, ok := err.(*yamlnode.PathError); ok && pe.Path != "" {
			if !strings.HasPrefix(pe.Path, "[") {
				field += "."
			}
			field += pe.Path
			err = pe.Err
		}
		d.fail(field, "%v", err)
		return nil
	}
	tree, _ := raw.(map[string]any)
	if tree == nil {
		tree = map[string]any{}
	}
	dropEmptyDefaulted(tree, specSchema)

	var unknown, mistyped, invalid Problems
	var refused [][]any
	mistypedAt := map[string]bool{}
	violations := checker.Check(withoutNulls(tree).(map[string]any))
	// Values of the wrong type first: kube-openapi checks an enum or a
	// bound of a value of the wrong type too, which would say nothing more.
	slices.SortStableFunc(violations, func(a, b knobs.Violation) int {
		return cmp.Compare(boolRank(a.Keyword != "type"), boolRank(b.Keyword != "type"))
	})
	var asWritten any // spec read as the decoders read objects, to name what a violation found
	if len(violations) > 0 {
		asWritten = readValue(spec)
	}
	for _, v := range violations {
		at := locate(asWritten, specSchema, v.Field)
		problem := func(format string, args ...any) Problem { return Errorf(d.ref, d.origin, at.field, format, args...) }
		switch v.Keyword {
		case "properties":
			if at.parent == nil || at.parent.Properties == nil {
				continue // below a value of the wrong type, which is reported
			}
			unknown = append(unknown, problem("unknown field; known fields here: %s", strings.Join(at.parent.Order, ", ")))
		case "type":
			if mistypedAt[at.field] {
				continue
			}
			mistypedAt[at.field] = true
			mistyped = append(mistyped, problem("must be %s, not %s", holds(at.schema, at.schemaPath), describe(at.value)))
		case "required":
			invalid = append(invalid, problem("%s", requiredMessage(at.schemaPath)))
			continue // nothing to leave out
		default:
			if mistypedAt[at.field] {
				continue
			}
			invalid = append(invalid, problem("%s", outsideMessage(v, at)))
		}
		refused = append(refused, at.keys)
	}
	for _, ps := range []Problems{unknown, mistyped, invalid} {
		slices.SortStableFunc(ps, func(a, b Problem) int { return cmp.Compare(a.Field, b.Field) })
		d.problems = append(d.problems, ps...)
	}

	for _, keys := range refused {
		leaveOut(tree, keys)
	}
	if _, ok := tree["fleet"].(map[string]any); ok {
		c.Fleet = newFleetConfig()
	}
	data, err := json.Marshal(tree)
	if err == nil {
		// Case-sensitive, as the API server decodes, and with whole
		// numbers kept as int64 in the free-form maps (cluster.values).
		err = sigsjson.UnmarshalCaseSensitivePreserveInts(data, c)
	}
	if err != nil {
		// The schema accepted every value left: a defect, not the user's.
		d.fail("spec", "failed to decode what the schema accepts: %v", err)
	}
	written := map[string]bool{}
	writtenPaths(tree, specSchema, "", written)
	return written
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// location is where a violation's field is: in the config's YAML, in its
// schema and in the value decoded.
type location struct {
	// field is the path of the problem: spec.fleet.shards,
	// spec.inputs[1], spec.routing.resourceQuota.hard[requests.cpu] (a
	// key of a map whose keys are free is written in brackets, as the API
	// server writes it).
	field string
	// schemaPath is the path of the field's schema below spec, with []
	// for the items of a list and .* for the values of a map:
	// routing.grants[].definition, routing.limitRange.limits[].max.*.
	schemaPath string
	// schema is the field's schema and parent the object schema it is a
	// field of; nil where the schema declares nothing.
	schema, parent *SchemaNode
	// value is the field's value as readValue reads it; nil when absent
	// or null.
	value any
	// keys lead to the value in the tree decoded: field names (string),
	// list indices (int) and the keys of maps whose keys are free
	// ([freeKey]).
	keys []any
}

// freeKey is a key of a map whose keys are free (a map of quantities), in
// [location.keys].
type freeKey string

// locate finds the field path of a [knobs.Violation], which starts with
// [knobs.Root], below spec and its schema s. Map keys may hold dots, so a
// key is matched against the keys the YAML holds, the longest first.
func locate(spec any, s *SchemaNode, path string) location {
	at := location{field: "spec", schema: s, value: spec}
	rest, _ := strings.CutPrefix(path, knobs.Root)
	for rest != "" {
		if strings.HasPrefix(rest, "[") {
			end := strings.Index(rest, "]")
			i, err := strconv.Atoi(rest[1:max(end, 1)])
			if end < 0 || err != nil {
				break
			}
			rest = rest[end+1:]
			at.field += "[" + strconv.Itoa(i) + "]"
			at.schemaPath += "[]"
			at.keys = append(at.keys, i)
			at.parent = nil
			if at.schema != nil {
				at.schema = at.schema.Items
			}
			if items, _ := at.value.([]any); i < len(items) {
				at.value = items[i]
			} else {
				at.value = nil
			}
			continue
		}
		rest = strings.TrimPrefix(rest, ".")
		key := nextKey(at.value, rest)
		rest = rest[len(key):]
		at.parent = at.schema
		switch {
		case at.schema != nil && at.schema.Properties != nil:
			at.field = joinField(at.field, key)
			at.schemaPath = strings.TrimPrefix(at.schemaPath+"."+key, ".")
			at.schema = at.schema.Properties[key]
		case at.schema != nil && at.schema.Values != nil:
			at.field += "[" + key + "]"
			at.schemaPath += ".*"
			at.schema = at.schema.Values
			at.keys = append(at.keys, freeKey(key))
			at.value = get(at.value, key)
			continue
		default:
			at.field = joinField(at.field, key)
			at.schemaPath = strings.TrimPrefix(at.schemaPath+"."+key, ".")
			at.schema = nil
		}
		at.keys = append(at.keys, key)
		at.value = get(at.value, key)
	}
	return at
}

// nextKey returns the key of the mapping n that path starts with, followed
// by its end, a '.' or a '[': the longest such key; or, when n holds none
// (a required field that is absent), path up to its first '.' or '['.
func nextKey(v any, path string) string {
	best := ""
	m, _ := v.(fields)
	for _, f := range m {
		if len(f.key) <= len(best) {
			continue
		}
		if rest, ok := strings.CutPrefix(path, f.key); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			best = f.key
		}
	}
	if best != "" {
		return best
	}
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

// dropEmptyDefaulted removes from tree, in place, every empty string of a
// field for which the schema s of tree gives a default: an empty string
// there stands for the default, as it always has (the defaults were
// applied to empty fields before the schema was the decoder's), so neither
// the schema nor the decoder sees it.
func dropEmptyDefaulted(tree map[string]any, s *SchemaNode) {
	for k, v := range tree {
		p := s.Properties[k]
		if p == nil {
			continue
		}
		switch v := v.(type) {
		case string:
			if v == "" && p.Default != nil {
				delete(tree, k)
			}
		case map[string]any:
			if p.Properties != nil {
				dropEmptyDefaulted(v, p)
			}
		}
	}
}

// withoutNulls returns a copy of v without the map entries that are null:
// a null field is as good as absent (a list or map field it clears, the
// others it leaves as they are), so the schema does not judge it. A null
// item of a list stays, and is of the wrong type.
func withoutNulls(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}

// leaveOut removes from tree the field that holds the value at keys: the
// value's own, or, for an item of a list or a value of a map of free keys,
// the list's or the map's, as a field whose value is wrong in part is
// left out whole.
func leaveOut(tree map[string]any, keys []any) {
	for len(keys) > 0 {
		if _, ok := keys[len(keys)-1].(string); ok {
			break
		}
		keys = keys[:len(keys)-1]
	}
	if len(keys) == 0 {
		return
	}
	var v any = tree
	for _, k := range keys[:len(keys)-1] {
		switch k := k.(type) {
		case string, freeKey:
			m, _ := v.(map[string]any)
			v = m[fmt.Sprint(k)]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return
			}
			v = l[k]
		}
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, keys[len(keys)-1].(string))
	}
}

// writtenPaths records in out the path of every field below the object
// schema s that tree writes: true for a value, false for null.
func writtenPaths(tree map[string]any, s *SchemaNode, prefix string, out map[string]bool) {
	for k, v := range tree {
		path := strings.TrimPrefix(prefix+"."+k, ".")
		out[path] = v != nil
		p := s.Properties[k]
		if p == nil {
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			if p.Properties != nil {
				writtenPaths(v, p, path, out)
			}
		case []any:
			if p.Items != nil && p.Items.Properties != nil {
				for i, item := range v {
					if m, ok := item.(map[string]any); ok {
						writtenPaths(m, p.Items, path+"["+strconv.Itoa(i)+"]", out)
					}
				}
			}
		}
	}
}

// fieldWords say, for a field of the schema, what its keywords alone
// cannot: the schema states the rule, these words explain it to the user.
type fieldWords struct {
	// holds replaces the words of the field's type in "must be <holds>,
	// not ...".
	holds string
	// why follows "is required: " for a required field, and a bound in
	// brackets for a bounded one.
	why string
	// pattern words a value that breaks the field's pattern.
	pattern func(value string) string
}

// configWords are the [fieldWords] of the config's fields, by their schema
// path below spec (see [location]). schema_test.go checks that each names
// a field of the schema, and that every pattern is worded.
var configWords = map[string]fieldWords{
	"guard.fluxIdentities":     {holds: identitiesWords},
	"guard.helmIdentities":     {holds: identitiesWords},
	"guard.platformIdentities": {holds: identitiesWords},
	"guard.sourceIdentities":   {holds: identitiesWords},

	"platform.kubernetesVersion": {pattern: kubernetesVersionProblem},

	"fleet.sourceRef":         {why: "the Flux source (kind, name, namespace) that serves the fleet repo"},
	"fleet.path":              {why: "the path of the output folder inside the fleet repo, such as ./fleet"},
	"fleet.maxObjectsPerUnit": {why: "kustomize build time grows with the square of a unit's size"},
	"fleet.shards":            {why: "1 means no sharding label; N labels the units shard1 to shardN"},
	"fleet.wiringGroups":      {why: "the unit Kustomizations are hashed into this many wiring groups; 0 lets the fleet's size choose"},
	"fleet.wiringPath": {pattern: func(v string) string {
		return fmt.Sprintf("%q must be %s, made of %s", v, fleetWiringPathRuleForMessage, fleetFolderCharsForMessages)
	}},

	"routing.resourceQuota.hard":       {why: "the limits of each namespace routed apps install into (leave resourceQuota out for none)"},
	"routing.limitRange.limits":        {why: "the defaults and bounds of each container (leave limitRange out for none)"},
	"routing.limitRange.limits[].type": {why: "Container, Pod or PersistentVolumeClaim"},
	"routing.grants[].definition":      {why: "the metadata.name of an ApplicationDefinition placed on the ComputePlane"},
	"routing.grants[].clusterRole":     {why: "the ClusterRole bound to the definition's apps inside their ComputePlane"},
}

// holds says what a field of schema s holds, in YAML words.
func holds(s *SchemaNode, schemaPath string) string {
	if w := configWords[schemaPath].holds; w != "" {
		return w
	}
	if s == nil {
		return "something else"
	}
	if len(s.Types) > 0 {
		words := make([]string, len(s.Types))
		for i, t := range s.Types {
			words[i] = typeWords(&SchemaNode{Type: t})
		}
		return orList(words)
	}
	return typeWords(s)
}

func typeWords(s *SchemaNode) string {
	switch s.Type {
	case "string":
		return "a string"
	case "boolean":
		return "true or false"
	case "integer":
		return "a whole number"
	case "array":
		if s.Items != nil && s.Items.Type == "string" {
			return "a list of strings"
		}
		return "a list"
	case "object":
		return "a map"
	}
	return "of type " + s.Type
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// requiredMessage says that the field at schemaPath is required, and why
// when its [fieldWords] say.
func requiredMessage(schemaPath string) string {
	if why := configWords[schemaPath].why; why != "" {
		return "is required: " + why
	}
	return "is required"
}

// outsideMessage words a violation of a value of the right type: outside
// an enum, a bound or a pattern; the API server's own words for a keyword
// the config's schema does not use.
func outsideMessage(v knobs.Violation, at location) string {
	s, value := at.schema, ""
	if n, ok := at.value.(*yaml.Node); ok && n.Kind == yaml.ScalarNode {
		value = n.Value
	}
	if s == nil {
		return v.Message
	}
	switch v.Keyword {
	case "enum":
		words := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			words[i] = fmt.Sprint(e)
		}
		return fmt.Sprintf("must be %s, not %q", orList(words), value)
	case "minimum", "maximum":
		var msg string
		switch {
		case s.Minimum != nil && s.Maximum != nil:
			msg = fmt.Sprintf("must be between %d and %d, not %s", *s.Minimum, *s.Maximum, value)
		case s.Minimum != nil:
			msg = fmt.Sprintf("must be at least %d, not %s", *s.Minimum, value)
		case s.Maximum != nil:
			msg = fmt.Sprintf("must be at most %d, not %s", *s.Maximum, value)
		default:
			return v.Message
		}
		if why := configWords[at.schemaPath].why; why != "" {
			msg += " (" + why + ")"
		}
		return msg
	case "pattern":
		if w := configWords[at.schemaPath].pattern; w != nil {
			return w(value)
		}
		return fmt.Sprintf("%q must match %s", value, s.Pattern)
	}
	return v.Message
}
