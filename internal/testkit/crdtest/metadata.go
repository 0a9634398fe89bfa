package crdtest

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
)

// ValidateMetadata checks an object's metadata as the API server does for
// any resource, with its own code: the metadata is decoded into ObjectMeta
// strictly (a field ObjectMeta lacks is an "unknown field", a field of the
// wrong type an error) and checked by apimachinery's ValidateObjectMeta:
// metadata.name a DNS-1123 subdomain, metadata.namespace a DNS-1123 label,
// required exactly when namespaced is true, label and annotation keys and
// values, the total size of annotations, and so on. One rule is added: a
// rendered object must carry its name, so generateName alone is not
// enough. The violations are sorted by path and message.
func ValidateMetadata(metadata any, namespaced bool) []Violation {
	if metadata == nil {
		return []Violation{{Path: "metadata", Message: "is required"}}
	}
	meta, _, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(map[string]any{"metadata": metadata},
		schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return []Violation{{Path: "metadata", Message: err.Error()}}
	}
	vs := make([]Violation, 0, len(unknown))
	for _, p := range unknown {
		vs = append(vs, Violation{Path: p, Message: "unknown field"})
	}
	errs := apivalidation.ValidateObjectMeta(meta, namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if meta.Name == "" && meta.GenerateName != "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "a rendered object must carry its name"))
	}
	return sortViolations(append(vs, violations(errs)...))
}
