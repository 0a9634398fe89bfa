package crdtest

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// Registry holds the CustomResourceDefinitions read by [Load]. It is
// read-only once loaded, so parallel tests can share one.
type Registry struct {
	crds map[string]*crd // by kind + "." + group
}

type crd struct {
	name       string
	namespaced bool
	versions   map[string]*crdVersion
}

type crdVersion struct {
	served bool
	schema *Schema
}

// Load reads every CustomResourceDefinition (apiextensions.k8s.io/v1) in the
// *.yaml, *.yml and *.json files of dir. Other documents in those files are
// ignored. It is an error for dir to hold none, for a definition to lack a
// schema for one of its versions, or for two files to define one kind.
func Load(dir string) (*Registry, error) {
	var files []string
	for _, glob := range []string{"*.yaml", "*.yml", "*.json"} {
		m, err := filepath.Glob(filepath.Join(dir, glob))
		if err != nil {
			return nil, fmt.Errorf("failed to list %s: %w", dir, err)
		}
		files = append(files, m...)
	}
	slices.Sort(files)
	r := &Registry{crds: map[string]*crd{}}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", f, err)
		}
		for i, doc := range splitDocuments(raw) {
			c, key, err := parseCRD(doc)
			if err != nil {
				return nil, fmt.Errorf("failed to load %s (document %d): %w", f, i+1, err)
			}
			if c == nil {
				continue
			}
			if prev, ok := r.crds[key]; ok {
				return nil, fmt.Errorf("failed to load %s: kind %s is defined by both %s and %s", f, key, prev.name, c.name)
			}
			r.crds[key] = c
		}
	}
	if len(r.crds) == 0 {
		return nil, fmt.Errorf("failed to load %s: no CustomResourceDefinitions found", dir)
	}
	return r, nil
}

var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

func splitDocuments(raw []byte) [][]byte {
	var docs [][]byte
	for _, d := range documentSeparator.Split(string(raw), -1) {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

// parseCRD returns nil for a document that is not a
// CustomResourceDefinition, else the definition and its "Kind.group".
func parseCRD(doc []byte) (*crd, string, error) {
	var d apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(doc, &d); err != nil {
		return nil, "", fmt.Errorf("failed to parse YAML: %w", err)
	}
	if d.Kind != "CustomResourceDefinition" || d.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
		return nil, "", nil
	}
	c, err := compileCRD(&d, true)
	if err != nil {
		return nil, "", err
	}
	return c, d.Spec.Names.Kind + "." + d.Spec.Group, nil
}

// Kinds returns the resources the registry knows, as "Kind.group", sorted.
func (r *Registry) Kinds() []string {
	out := make([]string, 0, len(r.crds))
	for k := range r.crds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Validate returns what an API server would reject in obj, a resource as
// decoded from JSON or YAML, created under strict field validation, sorted
// by path and message; nil when it would be admitted.
//
// It checks, in order: that apiVersion and kind name a kind the registry
// knows in a version that is served; metadata (see [ValidateMetadata]),
// with metadata.namespace required for a namespaced kind and forbidden for
// a cluster-scoped one (the API server would drop it, but an object that
// carries one was most likely rendered for the wrong scope); and the whole
// object against the version's schema (see [Schema.Validate]), CEL rules
// included.
func (r *Registry) Validate(obj map[string]any) []Violation {
	var vs []Violation
	add := func(path, msg string) { vs = append(vs, Violation{Path: path, Message: msg}) }

	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" {
		add("apiVersion", "is required")
	}
	if kind == "" {
		add("kind", "is required")
	}
	if len(vs) > 0 {
		return vs
	}
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		group, version = "", apiVersion
	}
	c, ok := r.crds[kind+"."+group]
	if !ok {
		add("kind", fmt.Sprintf("no CustomResourceDefinition for kind %q in group %q", kind, group))
		return vs
	}
	v, ok := c.versions[version]
	switch {
	case !ok:
		add("apiVersion", fmt.Sprintf("version %q is not defined by CustomResourceDefinition %s", version, c.name))
		return vs
	case !v.served:
		add("apiVersion", fmt.Sprintf("version %q is not served by CustomResourceDefinition %s", version, c.name))
		return vs
	}
	vs = append(vs, ValidateMetadata(obj["metadata"], c.namespaced)...)
	vs = append(vs, v.schema.Validate(obj)...)
	return sortViolations(vs)
}

// Violation is one thing an API server would reject.
type Violation struct {
	// Path is the field path, such as "spec.chartRef.kind".
	Path string
	// Message is the API server's, such as "Required value" or
	// `Unsupported value: "GitRepository": supported values: ...`, or
	// "unknown field" for a field the schema does not declare.
	Message string
}

// String returns "path: message".
func (v Violation) String() string {
	if v.Path == "" {
		return v.Message
	}
	return v.Path + ": " + v.Message
}

func sortViolations(vs []Violation) []Violation {
	slices.SortFunc(vs, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Message, b.Message))
	})
	if len(vs) == 0 {
		return nil
	}
	return slices.Compact(vs)
}
