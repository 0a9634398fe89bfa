package fn

import (
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Limits of the KRM function, on top of those of package input: kyaml reads
// and writes a ResourceList whole, at several times the cost of the
// standalone CLI for the same fleet (1,000 tenants: 7.5 s and 3 GB against
// 1.8 s and 120 MB; docs/limits.md). Larger fleets are for the CLI.
const (
	// MaxResourceListItems is the most items a ResourceList may hold.
	MaxResourceListItems = 50_000
	// MaxResourceListNodes is the most YAML nodes the KRM function writes.
	MaxResourceListNodes = 2_000_000
)

// stdinFile names the ResourceList in messages.
const stdinFile = "stdin"

// resourceList is a ResourceList that readResourceList let through: the
// bytes of its one document, for kyaml to read, and its wrapping, which
// the output repeats.
type resourceList struct {
	doc              []byte
	apiVersion, kind string
}

// readResourceList reads the ResourceList and checks it before kyaml's
// reader sees it. It stays because framework.Execute has no hook between
// parsing and processing, and its reader reads whatever it is given,
// unbounded; fails, in messages that name nothing (`wrong node kind`), on
// items that are no objects and metadata that is no map; drops the
// metadata of an item whose annotations are no map; and unwraps the list
// only when the stream is that one document. So the bytes and the YAML are
// read as package input reads a file (Budget.ReadStream: bounded, checked,
// charged to the budget), kyaml gets the lines of the one document alone,
// and only what makes that document a ResourceList kyaml reads whole is
// checked here: its kind and apiVersion, items that are objects, and a
// function config that is a map. The items are checked as objects by
// package input, in the pipeline.
func readResourceList(r io.Reader, budget *input.Budget) (resourceList, api.Problems) {
	list := resourceList{apiVersion: kio.ResourceListAPIVersion, kind: kio.ResourceListKind}
	root, doc, problems := budget.ReadStream(r, stdinFile, kio.ResourceListKind)
	switch {
	case len(problems) > 0:
		return list, problems
	case root == nil:
		return list, api.Problems{{File: stdinFile, Message: fmt.Sprintf("no ResourceList: the input is empty; a KRM function reads a %s %s on stdin (run it with a config file to render standalone)", kio.ResourceListAPIVersion, kio.ResourceListKind)}}
	case root.Kind != yaml.MappingNode:
		return list, api.Problems{{File: stdinFile, Message: fmt.Sprintf("expected a %s object (a YAML map), found %s", kio.ResourceListKind, yamlnode.Describe(root))}}
	}
	ref := api.ObjectRef{Kind: kio.ResourceListKind}
	problem := func(field, format string, args ...any) {
		problems = append(problems, api.Errorf(ref, api.Origin{File: stdinFile}, field, format, args...))
	}
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			problem("", "a map key must be a string, not %s", yamlnode.Describe(k))
			continue
		}
		if _, dup := fields[k.Value]; dup {
			problem(k.Value, "is set twice")
		}
		fields[k.Value] = v
	}
	kind := scalarField(fields["kind"])
	apiVersion := scalarField(fields["apiVersion"])
	if kind != kio.ResourceListKind && kind != "List" {
		problem("kind", "must be %s, not %s", kio.ResourceListKind, yamlnode.Describe(fields["kind"]))
	}
	if apiVersion == "" {
		problem("apiVersion", "must be %s, not %s", kio.ResourceListAPIVersion, yamlnode.Describe(fields["apiVersion"]))
	}
	if len(problems) > 0 {
		return list, problems
	}
	list.apiVersion, list.kind = apiVersion, kind
	if items := fields["items"]; !yamlnode.IsNull(items) {
		switch {
		case items.Kind != yaml.SequenceNode:
			problem("items", "must be a list of objects, not %s", yamlnode.Describe(items))
		case len(items.Content) > MaxResourceListItems:
			problem("items", "holds %s objects; a ResourceList may hold at most %s (render a fleet this large with the standalone CLI)", yamlnode.Count(len(items.Content)), yamlnode.Count(MaxResourceListItems))
		default:
			for i, item := range items.Content {
				if item.Kind != yaml.MappingNode {
					problem(fmt.Sprintf("items[%d]", i), "must be an object (a YAML map), not %s", describeNode(item))
					continue
				}
				problems = append(problems, checkMetadata(item)...)
			}
		}
	}
	if fc := fields["functionConfig"]; !yamlnode.IsNull(fc) {
		if fc.Kind != yaml.MappingNode {
			problem("functionConfig", "must be a %s object, not %s", api.ConfigKind, describeNode(fc))
		} else {
			problems = append(problems, checkMetadata(fc)...)
		}
	}
	list.doc = doc
	return list, problems
}

func scalarField(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != yamlnode.TagString {
		return ""
	}
	return n.Value
}

func describeNode(n *yaml.Node) string {
	if n.Kind == yaml.AliasNode {
		return "a YAML alias (*" + n.Value + "); every object must stand on its own"
	}
	return yamlnode.Describe(n)
}

// checkMetadata refuses an item whose metadata or annotations kyaml cannot
// set annotations in (it does for every item, before and after the
// processor runs): they must be maps, written out rather than aliases.
func checkMetadata(n *yaml.Node) api.Problems {
	o := api.NewObject(n, api.Origin{})
	v, at := n, ""
	for _, key := range []string{"metadata", "annotations"} {
		v, at = field(v, key), strings.TrimPrefix(at+"."+key, ".")
		switch {
		case v == nil || (v.Kind == yaml.ScalarNode && v.ShortTag() == yamlnode.TagNull):
			return nil
		case v.Kind == yaml.AliasNode:
			return api.Problems{api.Errorf(o.Ref(), o.Origin, at, "must be written out, not a YAML alias (*%s): tools that read it do not follow aliases", v.Value)}
		case v.Kind != yaml.MappingNode:
			return api.Problems{api.Errorf(o.Ref(), o.Origin, at, "must be a map, not %s", yamlnode.Describe(v))}
		}
	}
	return nil
}

// field returns the value of key in mapping m as written, aliases not
// followed; the last of two equal keys, as kyaml reads them.
func field(m *yaml.Node, key string) *yaml.Node {
	var v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v = m.Content[i+1]
		}
	}
	return v
}
