package knobs

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Root is the field the knobs are validated under, as the spec of a custom
// resource: every [Violation.Field] starts with it.
const Root = "spec"

// Schema is a compiled knob schema. It is immutable, so one Schema can
// validate the knobs of many tenants at once.
type Schema struct {
	root      *structuralschema.Structural // {type: object, properties: {spec: knobs}}
	validator createValidator
	// fields are a validator per property of the schema's root, for
	// CheckValues.
	fields map[string]createValidator
}

// Violation is one way in which knobs break the schema.
type Violation struct {
	// Field is the path of the offending value, from [Root]:
	// "spec.nodeGroups.md0.diskSize".
	Field string
	// Message says what is wrong, in the API server's words: "unknown
	// field", "Required value", `Invalid value: "string": spec.a in body
	// must be of type integer: "string"`, ...
	Message string
	// Keyword is the schema keyword the value breaks, for a caller that
	// words its own messages: "properties" for a field the schema does not
	// declare (pruned), or "type", "required", "enum", "minimum",
	// "maximum", "pattern", ... as kube-openapi's error code says; "" for
	// this package's own checks and an error of no known code.
	Keyword string
}

// keywords are the schema keywords of kube-openapi's error codes.
var keywords = map[int32]string{
	openapierrors.InvalidTypeCode:       "type",
	openapierrors.RequiredFailCode:      "required",
	openapierrors.TooLongFailCode:       "maxLength",
	openapierrors.TooShortFailCode:      "minLength",
	openapierrors.PatternFailCode:       "pattern",
	openapierrors.EnumFailCode:          "enum",
	openapierrors.MultipleOfFailCode:    "multipleOf",
	openapierrors.MaxFailCode:           "maximum",
	openapierrors.MinFailCode:           "minimum",
	openapierrors.UniqueFailCode:        "uniqueItems",
	openapierrors.MaxItemsFailCode:      "maxItems",
	openapierrors.MinItemsFailCode:      "minItems",
	openapierrors.TooFewPropertiesCode:  "minProperties",
	openapierrors.TooManyPropertiesCode: "maxProperties",
}

// String returns "field: message".
func (v Violation) String() string { return v.Field + ": " + v.Message }

// Compile compiles an OpenAPI v3 schema of knobs, decoded from YAML or JSON.
// It returns an error, never a panic, for a schema the API server would
// not take as the structural schema of a custom resource's spec, and for
// one that holds x-kubernetes-validations rules (see the package
// documentation).
func Compile(schema map[string]any) (*Schema, error) {
	opened := yamlnode.CopyValue(schema)
	dropClosedObjects(opened)
	raw, err := json.Marshal(opened)
	if err != nil {
		return nil, fmt.Errorf("failed to read the schema: %w", err)
	}
	var external apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(raw, &external); err != nil {
		return nil, fmt.Errorf("failed to read the schema: %w", err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&external, &internal, nil); err != nil {
		return nil, fmt.Errorf("failed to read the schema: %w", err)
	}
	knobs, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, fmt.Errorf("not a structural schema: %w", err)
	}
	root := &structuralschema.Structural{
		Generic:    structuralschema.Generic{Type: "object"},
		Properties: map[string]structuralschema.Structural{Root: *knobs},
	}
	if errs := structuralschema.ValidateStructural(nil, root); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			// Paths relative to the knob schema, not to the wrapper.
			f := strings.TrimPrefix(strings.TrimPrefix(e.Field, "properties["+Root+"]"), ".")
			msgs[i] = strings.TrimPrefix(f+": "+e.ErrorBody(), ": ")
		}
		return nil, fmt.Errorf("not a structural schema: %s", strings.Join(msgs, "; "))
	}
	if knobs.Type != "" && knobs.Type != "object" {
		return nil, fmt.Errorf("type: must be object: knobs are the fields of a ComputePlane object's spec")
	}
	if path := firstRule(knobs, ""); path != "" {
		return nil, fmt.Errorf("%sx-kubernetes-validations: CEL rules are not evaluated by this function, so they cannot guard knobs; express the constraint with OpenAPI keywords (enum, pattern, minimum, ...) or fix the value in cluster.values", path)
	}
	openapi := root.ToKubeOpenAPI()
	intOrString(openapi)
	fields := map[string]createValidator{}
	for name, p := range openapi.Properties[Root].Properties {
		fields[name] = createValidator{validate.NewSchemaValidator(&p, nil, Root+"."+name, strfmt.Default)}
	}
	return &Schema{root: root, validator: createValidator{validate.NewSchemaValidator(openapi, nil, "", strfmt.Default)}, fields: fields}, nil
}

// dropClosedObjects removes, in place, every additionalProperties: false
// from a schema. A structural schema prunes, and so this package refuses,
// every field properties does not declare, which is what
// additionalProperties: false says; the API server forbids the two together.
func dropClosedObjects(schema any) {
	switch x := schema.(type) {
	case map[string]any:
		if x["additionalProperties"] == false {
			delete(x, "additionalProperties")
		}
		for _, e := range x {
			dropClosedObjects(e)
		}
	case []any:
		for _, e := range x {
			dropClosedObjects(e)
		}
	}
}

// firstRule returns the path of a schema that holds x-kubernetes-validations,
// ending with a dot, or "" when none does. Structural schemas allow rules
// only outside allOf, anyOf, oneOf and not, so those need no look.
func firstRule(s *structuralschema.Structural, path string) string {
	if s == nil {
		return ""
	}
	if len(s.XValidations) > 0 {
		return path
	}
	for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[k]
		if found := firstRule(&p, path+"properties["+k+"]."); found != "" {
			return found
		}
	}
	if s.AdditionalProperties != nil {
		if found := firstRule(s.AdditionalProperties.Structural, path+"additionalProperties."); found != "" {
			return found
		}
	}
	return firstRule(s.Items, path+"items.")
}

// intOrString gives a schema with x-kubernetes-int-or-string and no type of
// its own the types integer and string, as the API server does before it
// validates with kube-openapi.
func intOrString(s *spec.Schema) {
	if s == nil {
		return
	}
	if b, _ := s.Extensions["x-kubernetes-int-or-string"].(bool); b && len(s.Type) == 0 {
		s.Type = spec.StringOrArray{"integer", "string"}
	}
	for k, p := range s.Properties {
		intOrString(&p)
		s.Properties[k] = p
	}
	if s.AdditionalProperties != nil {
		intOrString(s.AdditionalProperties.Schema)
	}
	if s.Items != nil {
		intOrString(s.Items.Schema)
	}
}

// Validate returns every violation of knobs against s, sorted by field and
// message; nil when they are valid. knobs is not changed. The violations
// are the API server's own: the fields it prunes ("unknown field") and the
// field.ErrorList of apiextensions' validation of a custom resource, in its
// words. Validate never panics: a value kube-openapi cannot handle is a
// violation at the root.
func (s *Schema) Validate(knobs map[string]any) []Violation {
	vs := append(s.Check(knobs), controlCharacters(knobs, field.NewPath(Root))...)
	slices.SortFunc(vs, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(vs)
}

// Check returns every violation of spec, the value of the field [Root],
// against s, as the API server finds them, in its order: the fields it
// prunes, then the errors of apiextensions' validation of a custom
// resource and of listtype, each with its [Violation.Keyword]. spec is not
// changed. Unlike [Schema.Validate] it adds no check of this package's
// own, so it serves any object's spec checked against a structural schema
// (the function config's, package api). Check never panics: a value
// kube-openapi cannot handle is a violation at the root.
func (s *Schema) Check(spec map[string]any) (vs []Violation) {
	defer func() {
		if r := recover(); r != nil {
			vs = []Violation{{Field: Root, Message: fmt.Sprintf("internal error while validating: %v", r)}}
		}
	}()
	// Pruning changes the object in place.
	obj := map[string]any{Root: yamlnode.CopyValue(spec)}
	unknown := pruning.PruneWithOptions(obj, s.root, false, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, path := range unknown {
		vs = append(vs, Violation{Field: path, Message: "unknown field", Keyword: "properties"})
	}
	// The validator's result, kept to read each error's code:
	// apiextensions turns every error of it into one field.Error, in order.
	v := &resultKeeper{createValidator: s.validator}
	errs := validation.ValidateCustomResource(nil, obj, v)
	var codes []int32
	if v.result != nil && len(v.result.Errors) == len(errs) {
		for _, err := range v.result.Errors {
			var code int32
			if e, ok := err.(*openapierrors.Validation); ok {
				code = e.Code()
			}
			codes = append(codes, code)
		}
	}
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.root, obj)...)
	for i, err := range errs {
		f := err.Field
		if f == nowhere {
			f = Root // anyOf, oneOf and not, which name no field
		}
		var keyword string
		if i < len(codes) {
			keyword = keywords[codes[i]]
		}
		vs = append(vs, Violation{Field: f, Message: err.ErrorBody(), Keyword: keyword})
	}
	return vs
}

// CheckValues is [Schema.Check] for many objects of a large schema (an
// ApplicationDefinition's, with dozens of fields): the fields the schema
// does not declare, as Check finds them, and the violations of the values
// of each field the object sets, each checked against that field's own
// schema by kube-openapi's validator. It leaves out what only the root
// object can break (required, minProperties, maxProperties, anyOf at the
// root), and so costs what the object holds, where Check walks every
// field the schema declares on every call (kube-openapi's object
// validator copies the schema of each). spec is not changed; CheckValues
// never panics.
func (s *Schema) CheckValues(spec map[string]any) (vs []Violation) {
	defer func() {
		if r := recover(); r != nil {
			vs = []Violation{{Field: Root, Message: fmt.Sprintf("internal error while validating: %v", r)}}
		}
	}()
	obj := map[string]any{Root: yamlnode.CopyValue(spec)}
	unknown := pruning.PruneWithOptions(obj, s.root, false, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	for _, path := range unknown {
		vs = append(vs, Violation{Field: path, Message: "unknown field", Keyword: "properties"})
	}
	pruned, _ := obj[Root].(map[string]any)
	for _, name := range slices.Sorted(maps.Keys(pruned)) {
		validator, ok := s.fields[name]
		if !ok {
			continue
		}
		v := &resultKeeper{createValidator: validator}
		errs := validation.ValidateCustomResource(nil, pruned[name], v)
		for i, err := range errs {
			var keyword string
			if v.result != nil && len(v.result.Errors) == len(errs) {
				if e, ok := v.result.Errors[i].(*openapierrors.Validation); ok {
					keyword = keywords[e.Code()]
				}
			}
			f := err.Field
			if f == nowhere {
				f = Root + "." + name
			}
			vs = append(vs, Violation{Field: f, Message: err.ErrorBody(), Keyword: keyword})
		}
	}
	return vs
}

// resultKeeper is the schema's validator for one [Schema.Check], keeping
// the result it returns.
type resultKeeper struct {
	createValidator
	result *validate.Result
}

func (v *resultKeeper) Validate(obj any, _ ...validation.ValidationOption) *validate.Result {
	v.result = v.createValidator.Validate(obj)
	return v.result
}

// controlCharacters refuses a line break or any other control character in
// every string of v and every key of its maps, whatever the schema says.
// A chart that writes a knob into a template unquoted (apps/kubernetes does,
// for several) would take a line break for more YAML: the value would add
// fields of its choosing to what the chart renders. No knob has a use for
// one.
func controlCharacters(v any, at *field.Path) []Violation {
	var out []Violation
	switch v := v.(type) {
	case string:
		if i := strings.IndexFunc(v, isControl); i >= 0 {
			out = append(out, Violation{Field: at.String(), Message: fmt.Sprintf("%q: a line break or control character (%U at byte %d) is not allowed in a knob", v, []rune(v[i:])[0], i)})
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if i := strings.IndexFunc(k, isControl); i >= 0 {
				out = append(out, Violation{Field: at.String(), Message: fmt.Sprintf("key %q: a line break or control character (%U at byte %d) is not allowed in a knob", k, []rune(k[i:])[0], i)})
				continue
			}
			out = append(out, controlCharacters(v[k], at.Child(k))...)
		}
	case []any:
		for i, item := range v {
			out = append(out, controlCharacters(item, at.Index(i))...)
		}
	}
	return out
}

// isControl: the C0 and C1 controls (tab, line feed, carriage return, NEL
// among them) and Unicode's line and paragraph separators.
func isControl(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// nowhere is the field of a field.Error at no path.
var nowhere = (*field.Path)(nil).String()

// createValidator is kube-openapi's validator as apiextensions' validation
// takes it: one made at Compile, safe for concurrent use, serves every
// tenant (apiextensions' own makes a new one per call).
type createValidator struct{ *validate.SchemaValidator }

func (v createValidator) Validate(obj any, _ ...validation.ValidationOption) *validate.Result {
	return v.SchemaValidator.Validate(obj)
}

// Shape is the structure of a YAML tree without its scalars: the keys of
// its mappings, the items of its sequences and the kind of each scalar
// (string, integer, float, boolean, null, other), in a few hundred bytes
// where the tree takes tens of kilobytes. A caller that reads many objects
// before it knows their schema (every app of a large fleet, read before
// its definition) keeps their shapes, and asks [Schema.Suspect] later
// without decoding the objects again.
type Shape []byte

// The bytes of a Shape: a mapping is shapeMap, then per entry the key's
// length (uvarint), the key and the value's shape, then shapeEnd; a
// sequence shapeSeq, its items' shapes, shapeEnd; a scalar one byte of its
// kind.
const (
	shapeMap   = '{'
	shapeSeq   = '['
	shapeEnd   = '}'
	shapeStr   = 's'
	shapeInt   = 'i'
	shapeFloat = 'f'
	shapeBool  = 'b'
	shapeOther = '?'
)

// ShapeOf returns the shape of n (aliases followed), nil for nil.
func ShapeOf(n *yaml.Node) Shape {
	if n == nil {
		return nil
	}
	return Shape(appendShape(nil, n, 0))
}

func appendShape(b []byte, n *yaml.Node, depth int) []byte {
	n = yamlnode.Resolve(n)
	if n == nil || depth > yamlnode.MaxDepth {
		return append(b, shapeOther)
	}
	switch n.Kind {
	case yaml.MappingNode:
		b = append(b, shapeMap)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := yamlnode.Resolve(n.Content[i])
			if key == nil {
				return append(b, shapeOther)
			}
			b = binary.AppendUvarint(b, uint64(len(key.Value)))
			b = append(b, key.Value...)
			b = appendShape(b, n.Content[i+1], depth+1)
		}
		return append(b, shapeEnd)
	case yaml.SequenceNode:
		b = append(b, shapeSeq)
		for _, item := range n.Content {
			b = appendShape(b, item, depth+1)
		}
		return append(b, shapeEnd)
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case yamlnode.TagString:
			return append(b, shapeStr)
		case yamlnode.TagInt:
			return append(b, shapeInt)
		case yamlnode.TagFloat:
			return append(b, shapeFloat)
		case yamlnode.TagBool:
			return append(b, shapeBool)
		}
	}
	return append(b, shapeOther)
}

// Suspect reports whether [Schema.CheckValues] may find anything in the
// values of shape: a field the schema does not declare, or a value whose
// kind (mapping, sequence, string, number, boolean) its type does not
// take. It reads the shape once and allocates nothing, so a caller that
// checks many objects asks the API server's packages only about the few
// that may break the schema: they alone decide what is reported. It errs
// on the side of true (a null, a tag it does not know, a shape it cannot
// read), never of false.
func (s *Schema) Suspect(shape Shape) bool {
	if len(shape) == 0 {
		return false
	}
	rest, suspected := suspect(shape, s.root.Properties[Root])
	return suspected || len(rest) != 0
}

// suspect reads one value's shape against s and returns the shape after
// it, and whether it is suspect; a suspect value ends the reading.
func suspect(shape Shape, s structuralschema.Structural) (Shape, bool) {
	if len(shape) == 0 {
		return nil, true
	}
	kind, shape := shape[0], shape[1:]
	switch kind {
	case shapeMap:
		if (s.Type != "object" && s.Type != "") || s.XIntOrString {
			return nil, true
		}
		for len(shape) > 0 && shape[0] != shapeEnd {
			n, size := binary.Uvarint(shape)
			if size <= 0 || uint64(len(shape)-size) < n {
				return nil, true
			}
			key := shape[size : size+int(n)]
			shape = shape[size+int(n):]
			var child structuralschema.Structural
			if p, ok := s.Properties[string(key)]; ok {
				child = p
			} else {
				switch {
				case s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil:
					child = *s.AdditionalProperties.Structural
				case s.AdditionalProperties != nil && s.AdditionalProperties.Bool, s.XPreserveUnknownFields:
					child = structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
				default:
					return nil, true
				}
			}
			var suspected bool
			if shape, suspected = suspect(shape, child); suspected {
				return nil, true
			}
		}
		if len(shape) == 0 {
			return nil, true
		}
		return shape[1:], false
	case shapeSeq:
		if (s.Type != "array" && s.Type != "") || s.XIntOrString {
			return nil, true
		}
		item := structuralschema.Structural{Extensions: structuralschema.Extensions{XPreserveUnknownFields: true}}
		if s.Items != nil {
			item = *s.Items
		}
		for len(shape) > 0 && shape[0] != shapeEnd {
			var suspected bool
			if shape, suspected = suspect(shape, item); suspected {
				return nil, true
			}
		}
		if len(shape) == 0 {
			return nil, true
		}
		return shape[1:], false
	case shapeStr, shapeInt, shapeFloat, shapeBool:
		return shape, !takes(s, kind)
	}
	return nil, true
}

// takes reports whether a scalar of a kind has a type s takes.
func takes(s structuralschema.Structural, kind byte) bool {
	if s.XIntOrString {
		return kind == shapeInt || kind == shapeStr
	}
	switch s.Type {
	case "":
		return true
	case "string":
		return kind == shapeStr
	case "integer":
		return kind == shapeInt
	case "number":
		return kind == shapeInt || kind == shapeFloat
	case "boolean":
		return kind == shapeBool
	}
	return false
}
