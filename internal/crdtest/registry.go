package crdtest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/schema"
)

// Registry holds the CustomResourceDefinitions read by [Load]. It is safe
// for concurrent use, so parallel tests can share one.
type Registry struct {
	crds map[string]*crd // by kind + "." + group

	mu      sync.Mutex
	skipped map[SkippedRule]bool
}

// SkippedRule is an x-kubernetes-validations rule that applied to an object
// given to [Registry.Validate] but was not evaluated.
type SkippedRule struct {
	// APIVersion and Kind name the resource whose schema holds the rule.
	APIVersion string
	Kind       string
	schema.Rule
}

type crd struct {
	name       string
	group      string
	kind       string
	namespaced bool
	versions   map[string]*crdVersion
}

type crdVersion struct {
	served bool
	schema *schema.Schema
	// hasMetadata is whether the schema declares metadata at its root.
	hasMetadata bool
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
	r := &Registry{crds: map[string]*crd{}, skipped: map[SkippedRule]bool{}}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", f, err)
		}
		for i, doc := range splitDocuments(raw) {
			c, err := parseCRD(doc)
			if err != nil {
				return nil, fmt.Errorf("failed to load %s (document %d): %w", f, i+1, err)
			}
			if c == nil {
				continue
			}
			key := c.kind + "." + c.group
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

// crdDocument is the part of a CustomResourceDefinition the registry uses.
// The schema stays raw JSON so that package schema reads all of it.
type crdDocument struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Scope    string `json:"scope"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema struct {
				OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// parseCRD returns nil, nil for a document that is not a
// CustomResourceDefinition.
func parseCRD(doc []byte) (*crd, error) {
	j, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, fmt.Errorf("failed to parse YAML: %w", err)
	}
	var d crdDocument
	if err := json.Unmarshal(j, &d); err != nil {
		return nil, fmt.Errorf("failed to decode: %w", err)
	}
	if d.Kind != "CustomResourceDefinition" || d.APIVersion != "apiextensions.k8s.io/v1" {
		return nil, nil
	}
	if d.Spec.Group == "" || d.Spec.Names.Kind == "" {
		return nil, fmt.Errorf("CustomResourceDefinition %q: spec.group and spec.names.kind are required", d.Metadata.Name)
	}
	c := &crd{
		name:       d.Metadata.Name,
		group:      d.Spec.Group,
		kind:       d.Spec.Names.Kind,
		namespaced: d.Spec.Scope != "Cluster",
		versions:   map[string]*crdVersion{},
	}
	for _, v := range d.Spec.Versions {
		raw := v.Schema.OpenAPIV3Schema
		if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
			return nil, fmt.Errorf("CustomResourceDefinition %q: version %q has no openAPIV3Schema", c.name, v.Name)
		}
		s, err := schema.Compile(raw)
		if err != nil {
			return nil, fmt.Errorf("CustomResourceDefinition %q: version %q: %w", c.name, v.Name, err)
		}
		var root struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(raw, &root) // it compiled, so it is an object
		_, hasMetadata := root.Properties["metadata"]
		c.versions[v.Name] = &crdVersion{served: v.Served, schema: s, hasMetadata: hasMetadata}
	}
	return c, nil
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
// decoded from JSON or YAML, sorted by path and message; nil when it would
// be admitted (CEL rules aside: see [Registry.SkippedRules]).
//
// It checks, in order: that apiVersion and kind name a kind the registry
// knows in a version that is served; metadata (see [ValidateMetadata]),
// with metadata.namespace required for a namespaced kind and forbidden for
// a cluster-scoped one (the API server would drop it, but an object that
// carries one was most likely rendered for the wrong scope); and the rest of
// obj against the version's openAPIV3Schema, unknown fields included, with
// metadata standing in as an empty object (so constraints a schema puts on
// metadata.name are not applied).
func (r *Registry) Validate(obj map[string]any) []schema.Violation {
	var vs []schema.Violation
	add := func(path, msg string) { vs = append(vs, schema.Violation{Path: path, Message: msg}) }

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

	body := make(map[string]any, len(obj))
	for k, val := range obj {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			// Checked above. A schema that declares it only learns that it
			// is there, as some require it (CiliumNetworkPolicy does).
			if v.hasMetadata {
				body[k] = map[string]any{}
			}
		default:
			body[k] = val
		}
	}
	vs = append(vs, v.schema.Validate(body)...)
	r.record(apiVersion, kind, v.schema.SkippedRules(body))

	return sortViolations(vs)
}

func sortViolations(vs []schema.Violation) []schema.Violation {
	slices.SortFunc(vs, func(a, b schema.Violation) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(vs)
}

func (r *Registry) record(apiVersion, kind string, rules []schema.Rule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rule := range rules {
		r.skipped[SkippedRule{APIVersion: apiVersion, Kind: kind, Rule: rule}] = true
	}
}

// SkippedRules returns the x-kubernetes-validations rules that applied to
// the objects validated so far and were not evaluated, each once, sorted by
// apiVersion, kind, path and rule.
func (r *Registry) SkippedRules() []SkippedRule {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]SkippedRule, 0, len(r.skipped))
	for s := range r.skipped {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b SkippedRule) int {
		return cmp.Or(
			cmp.Compare(a.APIVersion, b.APIVersion), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Path, b.Path), cmp.Compare(a.Rule.Rule, b.Rule.Rule), cmp.Compare(a.Message, b.Message))
	})
	return out
}
