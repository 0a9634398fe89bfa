package fleetgen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// obj is a JSON object that keeps its keys in the order given.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes the keys in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(e.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(e.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

const quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

var allPresets = []string{"t1.nano", "t1.micro", "t1.small", "t1.medium", "t1.large", "t1.xlarge", "t1.2xlarge", "t1.4xlarge",
	"c1.nano", "c1.micro", "c1.small", "c1.medium", "c1.large", "c1.xlarge", "c1.2xlarge", "c1.4xlarge",
	"s1.nano", "s1.micro", "s1.small", "s1.medium", "s1.large", "s1.xlarge", "s1.2xlarge", "s1.4xlarge",
	"u1.nano", "u1.micro", "u1.small", "u1.medium", "u1.large", "u1.xlarge", "u1.2xlarge", "u1.4xlarge",
	"nano", "micro", "small", "medium", "large", "xlarge", "2xlarge"}

func quantity(desc, def string) obj {
	return obj{{"description", desc}, {"default", def}, {"pattern", quantityPattern},
		{"anyOf", []any{obj{{"type", "integer"}}, obj{{"type", "string"}}}}, {"x-kubernetes-int-or-string", true}}
}

// openAPISchema is the values schema of a kind as the JSON string that
// Cozystack puts in spec.application.openAPISchema.
func openAPISchema(r *rand.Rand, k *kindSpec) string {
	props := obj{
		{"replicas", obj{{"description", fmt.Sprintf("Number of %s replicas.", k.Kind)}, {"type", "integer"}, {"default", 2}}},
		{"resources", obj{{"description", "Explicit CPU and memory configuration for each replica. When omitted, the preset defined in `resourcesPreset` is applied."},
			{"type", "object"}, {"default", obj{}}, {"properties", obj{
				{"cpu", quantity("CPU available to each replica.", "")},
				{"memory", quantity("Memory (RAM) available to each replica.", "")},
			}}}},
		{"resourcesPreset", obj{{"description", "Default sizing preset used when `resources` is omitted."}, {"type", "string"}, {"default", "nano"}, {"enum", allPresets}}},
		{"size", quantity("Persistent Volume Claim size available for application data.", "10Gi")},
		{"storageClass", obj{{"description", "StorageClass used to store the data."}, {"type", "string"}, {"default", ""},
			{"x-kubernetes-validations", []any{obj{{"rule", "self == oldSelf"}, {"message", "storageClass is immutable"}}}},
			{"x-cozystack-options", obj{{"source", "storageclass"}}}}},
		{"external", obj{{"description", "Enable external access from outside the cluster."}, {"type", "boolean"}, {"default", false}}},
	}
	for i := range k.SchemaOptions {
		word := appWords[(i*7+len(k.Kind))%len(appWords)]
		var p obj
		desc := fmt.Sprintf("Settings of the %s %s subsystem (%d). Changing this value restarts the affected pods; see the %s documentation for the accepted values and their effect on performance and durability.", k.Kind, word, i, k.Singular)
		switch r.IntN(4) {
		case 0:
			p = obj{{"description", desc}, {"type", "boolean"}, {"default", r.IntN(2) == 0}}
		case 1:
			p = obj{{"description", desc}, {"type", "integer"}, {"default", r.IntN(1000)}, {"minimum", 0}}
		case 2:
			p = obj{{"description", desc}, {"type", "string"}, {"default", word}, {"enum", []string{word, "auto", "disabled"}}}
		default:
			p = obj{{"description", desc}, {"type", "object"}, {"default", obj{}}, {"properties", obj{
				{"enabled", obj{{"description", "Enable " + word + "."}, {"type", "boolean"}, {"default", false}}},
				{"size", quantity("Size of the "+word+" volume.", "1Gi")},
				{"annotations", obj{{"description", "Annotations added to the " + word + " objects."}, {"type", "object"}, {"additionalProperties", obj{{"type", "string"}}}}},
			}}}
		}
		props = append(props, kv{fmt.Sprintf("%s%d", word, i), p})
	}
	props = append(props, valueSchema(k, props)...)
	s := obj{{"title", "Chart Values"}, {"type", "object"}, {"properties", props}}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// icon is a base64 SVG of a few KB, like the dashboard icons of real
// definitions.
func icon(r *rand.Rand) string {
	var b strings.Builder
	b.WriteString(`<svg width="144" height="144" viewBox="0 0 144 144" fill="none" xmlns="http://www.w3.org/2000/svg">`)
	for range 12 + r.IntN(20) {
		b.WriteString(`<path d="M`)
		for range 16 {
			fmt.Fprintf(&b, "%d.%d %d.%d ", r.IntN(144), r.IntN(10000), r.IntN(144), r.IntN(10000))
		}
		fmt.Fprintf(&b, `Z" fill="#%06X"/>`, r.IntN(1<<24))
	}
	b.WriteString(`</svg>`)
	return base64.StdEncoding.EncodeToString([]byte(b.String()))
}

// definition builds the ApplicationDefinition of k.
func definition(r *rand.Rand, k *kindSpec) *yaml.Node {
	var ann []any
	if k.InstallTimeout != "" {
		ann = append(ann, "release.cozystack.io/helm-install-timeout", k.InstallTimeout)
	}
	if k.UpgradeTimeout != "" {
		ann = append(ann, "release.cozystack.io/helm-upgrade-timeout", k.UpgradeTimeout)
	}
	if k.DisableWait {
		ann = append(ann, "release.cozystack.io/helm-install-disable-wait", "true")
	}
	if k.Placement == "annotation" || k.Placement == "both" {
		ann = append(ann, "computeplane.dev/placement", "ComputePlane")
	}
	md := m("name", k.Singular)
	if len(ann) > 0 {
		a := m(ann...)
		a.HeadComment = "Release settings read by cozystack-api; placement routes this kind onto the tenant's ComputePlane."
		md.Content = append(md.Content, str("annotations"), a)
	}
	labels := m("sharding.fluxcd.io/key", "tenants")
	if k.Module {
		labels.Content = append(labels.Content, str("internal.cozystack.io/tenantmodule"), str("true"))
	}
	schema := str(openAPISchema(r, k))
	schema.Style = yaml.LiteralStyle
	spec := m(
		"application", m("kind", k.Kind, "singular", k.Singular, "plural", k.Plural, "openAPISchema", schema),
		"release", m("prefix", k.Prefix, "labels", labels, "chartRef", m(
			"kind", "ExternalArtifact",
			"name", fmt.Sprintf("cozystack-%s-application-default-%s", k.Singular, k.Singular),
			"namespace", "cozy-system",
		)),
	)
	if k.Placement == "spec" || k.Placement == "both" {
		spec.Content = append(spec.Content, str("placement"), str("ComputePlane"))
	}
	keysOrder := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, path := range [][]string{{"apiVersion"}, {"appVersion"}, {"kind"}, {"metadata"}, {"metadata", "name"}, {"spec", "replicas"}, {"spec", "resources"}, {"spec", "resourcesPreset"}, {"spec", "size"}, {"spec", "storageClass"}, {"spec", "external"}} {
		p := node(path)
		p.Style = yaml.FlowStyle
		keysOrder.Content = append(keysOrder.Content, p)
	}
	spec.Content = append(spec.Content,
		str("dashboard"), m(
			"category", k.Category,
			"singular", k.Kind,
			"plural", k.Kind,
			"description", fmt.Sprintf("Managed %s service", k.Kind),
			"tags", []string{strings.ToLower(k.Category), k.Singular},
			"icon", icon(r),
			"keysOrder", keysOrder,
		),
		str("secrets"), m("exclude", []any{}, "include", []any{m("resourceNames", []string{k.Prefix + "{{ .name }}-auth"})}),
		str("services"), m("exclude", []any{}, "include", []any{m("resourceNames", []string{k.Prefix + "{{ .name }}", k.Prefix + "{{ .name }}-external-lb"})}),
	)
	return m("apiVersion", "cozystack.io/v1alpha1", "kind", "ApplicationDefinition", "metadata", md, "spec", spec)
}

// The values of a kind's apps that its schema declares beside the options:
// Cozystack's schemas declare every value of their chart, so the apps of a
// generated fleet are valid against their definition (the render checks
// them, spec.apps.values) and the benchmark measures a clean fleet.
// valueSchema infers them from samples of the kind's values, drawn from a
// stream of their own so that the fleet's values do not change.

// mapFields are the values whose keys are data (user and database names,
// node groups, labels), declared as maps (additionalProperties);
// opaqueFields those a schema keeps whole (x-kubernetes-preserve-unknown-fields).
var (
	mapFields    = map[string]bool{"users": true, "databases": true, "nodeGroups": true, "nodeSelector": true, "config": true}
	opaqueFields = map[string]bool{"valuesOverride": true}
)

// valueSchemaSamples is how many values of a kind valueSchema reads: enough
// for every optional value of a profile to appear.
const valueSchemaSamples = 64

// inferred is a schema inferred from values.
type inferred struct {
	types      map[string]bool
	props      map[string]*inferred
	order      []string
	items      *inferred
	additional *inferred
	opaque     bool
}

func (s *inferred) add(n *yaml.Node, name string) {
	if s.types == nil {
		s.types = map[string]bool{}
	}
	switch {
	case opaqueFields[name]:
		s.types["object"], s.opaque = true, true
	case n.Kind == yaml.MappingNode && mapFields[name]:
		s.types["object"] = true
		for i := 1; i < len(n.Content); i += 2 {
			if s.additional == nil {
				s.additional = &inferred{}
			}
			s.additional.add(n.Content[i], "")
		}
	case n.Kind == yaml.MappingNode:
		s.types["object"] = true
		if s.props == nil {
			s.props = map[string]*inferred{}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			p := s.props[k]
			if p == nil {
				p = &inferred{}
				s.props[k] = p
				s.order = append(s.order, k)
			}
			p.add(n.Content[i+1], k)
		}
	case n.Kind == yaml.SequenceNode:
		s.types["array"] = true
		for _, item := range n.Content {
			if s.items == nil {
				s.items = &inferred{}
			}
			s.items.add(item, "")
		}
	default:
		s.types[map[string]string{"!!int": "integer", "!!bool": "boolean"}[n.Tag]] = true
	}
}

func (s *inferred) schema() obj {
	switch {
	case s.types["integer"] && s.types[""]:
		return obj{{"x-kubernetes-int-or-string", true}}
	case s.types[""]:
		return obj{{"type", "string"}}
	case s.types["integer"]:
		return obj{{"type", "integer"}}
	case s.types["boolean"]:
		return obj{{"type", "boolean"}}
	case s.types["array"]:
		items := obj{{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}
		if s.items != nil {
			items = s.items.schema()
		}
		return obj{{"type", "array"}, {"items", items}}
	case s.opaque:
		return obj{{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}
	case s.additional != nil:
		return obj{{"type", "object"}, {"additionalProperties", s.additional.schema()}}
	}
	props := obj{}
	for _, k := range s.order {
		props = append(props, kv{k, s.props[k].schema()})
	}
	return obj{{"type", "object"}, {"properties", props}}
}

// valueSchema returns the schemas of the values of a kind's apps, by name
// in the order they first appear, except those in declared.
func valueSchema(k *kindSpec, declared obj) obj {
	r := rand.New(rand.NewPCG(uint64(len(k.Kind)), uint64(k.Profile)+1))
	root := &inferred{}
	for i := range valueSchemaSamples {
		root.add(values(r, k, fmt.Sprintf("sample%d", i)), "")
	}
	var out obj
	for _, name := range root.order {
		if !slices.ContainsFunc(declared, func(e kv) bool { return e.k == name }) {
			out = append(out, kv{name, root.props[name].schema()})
		}
	}
	return out
}
