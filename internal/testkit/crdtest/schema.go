package crdtest

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// Schema is the openAPIV3Schema of a served version of a
// CustomResourceDefinition, compiled as the API server compiles it.
// It is safe for concurrent use.
type Schema struct {
	structural *structuralschema.Structural
	validator  validation.SchemaValidator
	cel        *cel.Validator // nil without x-kubernetes-validations
}

// CompileSpec compiles the schema of a custom resource's spec, given as
// JSON or YAML: for example a Helm chart's values.schema.json, which
// Cozystack serves as the spec of an application's resource. It is placed
// in a CustomResourceDefinition as the property spec; the schema must be
// structural. The rest of the API server's checks of a new definition are
// not made: a chart's schema is not one, and Cozystack's own schemas break
// some (defaults of {} on objects with required fields). [Schema.Validate]
// then takes an object {spec: value}.
func CompileSpec(raw []byte) (*Schema, error) {
	var spec apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal(raw, &spec); err != nil {
		return nil, fmt.Errorf("failed to parse schema: %w", err)
	}
	d := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: "specs.crdtest.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "crdtest.example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "specs", Singular: "spec", Kind: "Spec", ListKind: "SpecList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type:       "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": spec},
				}},
			}},
		},
	}
	c, err := compileCRD(d, false)
	if err != nil {
		return nil, err
	}
	return c.versions["v1"].schema, nil
}

// compileCRD checks a CustomResourceDefinition as the API server does when
// it is created, after the API server's defaults (only that its schemas are
// structural unless validate), and compiles the schema of every version.
func compileCRD(d *apiextensionsv1.CustomResourceDefinition, validate bool) (*crd, error) {
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(d)
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(d, &internal, nil); err != nil {
		return nil, fmt.Errorf("CustomResourceDefinition %q: failed to convert: %w", d.Name, err)
	}
	if validate {
		if errs := crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal); len(errs) > 0 {
			return nil, fmt.Errorf("CustomResourceDefinition %q is invalid: %w", d.Name, errs.ToAggregate())
		}
	}
	c := &crd{
		name:       d.Name,
		namespaced: d.Spec.Scope != apiextensionsv1.ClusterScoped,
		versions:   map[string]*crdVersion{},
	}
	for _, v := range internal.Spec.Versions {
		s, err := apiextensions.GetSchemaForVersion(&internal, v.Name)
		if err != nil || s == nil || s.OpenAPIV3Schema == nil {
			return nil, fmt.Errorf("CustomResourceDefinition %q: version %q has no openAPIV3Schema", d.Name, v.Name)
		}
		structural, err := structuralschema.NewStructural(s.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %q: version %q: %w", d.Name, v.Name, err)
		}
		if errs := structuralschema.ValidateStructural(field.NewPath("openAPIV3Schema"), structural); len(errs) > 0 {
			return nil, fmt.Errorf("CustomResourceDefinition %q: version %q: not a structural schema: %w", d.Name, v.Name, errs.ToAggregate())
		}
		validator, _, err := validation.NewSchemaValidator(s.OpenAPIV3Schema)
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %q: version %q: %w", d.Name, v.Name, err)
		}
		c.versions[v.Name] = &crdVersion{served: v.Served, schema: &Schema{
			structural: structural,
			validator:  validator,
			cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
		}}
	}
	return c, nil
}

// Validate returns what the API server would reject in obj, a custom
// resource, sorted by path and message; nil when it would admit it. obj is
// not changed; its apiVersion, kind and metadata are not checked here (see
// [Registry.Validate] and [ValidateMetadata]).
//
// It does, on a copy, what the API server does to a custom resource
// created under strict field validation: it decodes it from JSON (integers
// as int64); prunes it, each pruned field being an "unknown field"; drops
// the nulls the schema does not allow; applies the schema's defaults; then
// validates the values (kube-openapi, through the API server's validation
// package), embedded resources and list types, and evaluates the
// x-kubernetes-validations CEL rules with the API server's cost budget. As
// the API server does, the CEL rules are not evaluated over an object whose
// structure is already wrong (a missing field, a wrong type, ...), and a
// violation without a path says so.
func (s *Schema) Validate(obj map[string]any) []Violation {
	raw, err := json.Marshal(obj)
	if err != nil {
		return []Violation{{Message: fmt.Sprintf("failed to encode as JSON: %v", err)}}
	}
	var value map[string]any
	if err := utiljson.Unmarshal(raw, &value); err != nil {
		return []Violation{{Message: fmt.Sprintf("failed to decode JSON: %v", err)}}
	}
	unknown := pruning.PruneWithOptions(value, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	vs := make([]Violation, 0, len(unknown))
	for _, p := range unknown {
		vs = append(vs, Violation{Path: p, Message: "unknown field"})
	}
	defaulting.PruneNonNullableNullsWithoutDefaults(value, s.structural)
	defaulting.Default(value, s.structural)

	errs := validation.ValidateCustomResource(nil, value, s.validator)
	errs = append(errs, schemaobjectmeta.Validate(nil, value, s.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, value)...)
	if s.cel != nil {
		if blocked := blockingErr(errs); blocked != nil {
			errs = append(errs, blocked)
		} else {
			celErrs, _ := s.cel.Validate(context.Background(), nil, s.structural, value, nil, celconfig.RuntimeCELCostBudget)
			errs = append(errs, celErrs...)
		}
	}
	return sortViolations(append(vs, violations(errs)...))
}

// blockingErr is the API server's rule for skipping CEL: rules are not
// evaluated over an object whose structure is already wrong.
func blockingErr(errs field.ErrorList) *field.Error {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}

// unplaced matches an error of kube-openapi that the API server reports
// at no path but that names its path in the message (oneOf, anyOf, not).
var unplaced = regexp.MustCompile(`^Invalid value: "": "([^"]*)" (.*)$`)

// violations turns the API server's field errors into violations, placing
// those it reports at no path where their message says.
func violations(errs field.ErrorList) []Violation {
	vs := make([]Violation, 0, len(errs))
	for _, e := range errs {
		v := Violation{Path: e.Field, Message: e.ErrorBody()}
		if v.Path == "<nil>" {
			v.Path = ""
			if m := unplaced.FindStringSubmatch(v.Message); m != nil {
				v.Path, v.Message = m[1], m[2]
			}
		}
		vs = append(vs, v)
	}
	return vs
}
