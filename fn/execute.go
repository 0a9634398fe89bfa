package fn

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Default wrapping of a ResourceList, used when the input could not be read.
const (
	resourceListAPIVersion = kio.ResourceListAPIVersion
	resourceListKind       = kio.ResourceListKind
)

// Execute runs p as a KRM function: it reads a ResourceList from r and
// writes the resulting ResourceList to w, as kyaml's framework.Execute does,
// with the same annotation handling and output. Unlike framework.Execute it
// reads at most input.MaxInputBytes, checks the bytes and the shape of the
// ResourceList before any kyaml code walks it, and reports what is wrong
// with it as a result (empty input, binary data, malformed YAML, items that
// are no objects) rather than as a bare error.
//
// On any refusal it writes a ResourceList with no items and the results,
// and returns a *Refusal.
func Execute(p Processor, r io.Reader, w io.Writer) error {
	if p.Budget == nil {
		p.Budget = new(input.Budget)
	}
	wrap := wrapping{apiVersion: resourceListAPIVersion, kind: resourceListKind}
	rl, problems := readResourceList(r, p.Budget, &wrap)
	if len(problems) > 0 {
		return writeRefusal(w, wrap, problems)
	}
	nodeAnnos, err := kio.PreprocessResourcesForInternalAnnotationMigration(rl.Items)
	if err != nil {
		return writeRefusal(w, wrap, api.Problems{{Message: fmt.Sprintf("failed to read the items' annotations: %v", err)}})
	}
	processErr := p.Process(rl)
	if processErr == nil {
		if nodes := resourceListSize(rl); nodes > MaxResourceListNodes {
			return writeRefusal(w, wrap, api.Problems{{Message: fmt.Sprintf(
				"the ResourceList to write would hold %s YAML nodes; the KRM function writes at most %s (kyaml holds a whole ResourceList in memory several times over to write it): render a fleet this large with the standalone CLI (computeplane-fn CONFIG, or --output-dir for a fleet folder)",
				yamlnode.Count(nodes), yamlnode.Count(MaxResourceListNodes))}})
		}
	}
	if err := kio.ReconcileInternalAnnotations(rl.Items, nodeAnnos); err != nil {
		return writeRefusal(w, wrap, api.Problems{{Message: fmt.Sprintf("failed to write the items' annotations: %v", err)}})
	}
	if err := write(w, wrap, rl); err != nil {
		return err
	}
	return processErr
}

// Limits of the KRM function, on top of those of package input. A
// ResourceList is one YAML document, read and written whole by kyaml, which
// costs several times what the standalone CLI needs for the same fleet
// (about 4.5 µs and 1.8 KB per node written): 1,000 tenants with 10,000
// apps write 1.7 million nodes in 7.5 s and 3 GB, where the standalone CLI
// takes 1.8 s and 120 MB. Larger fleets are for the standalone CLI.
const (
	// MaxResourceListItems is the most items a ResourceList may hold.
	MaxResourceListItems = 50_000
	// MaxResourceListNodes is the most YAML nodes the KRM function writes.
	MaxResourceListNodes = 2_000_000
)

// resourceListSize counts the nodes of the items and the function config.
func resourceListSize(rl *framework.ResourceList) int {
	n := 0
	for _, item := range rl.Items {
		c, _ := yamlnode.Size(item.YNode())
		n += c
	}
	if rl.FunctionConfig != nil {
		c, _ := yamlnode.Size(rl.FunctionConfig.YNode())
		n += c
	}
	return n
}

// wrapping is the apiVersion and kind of the list the items came in, which
// the output repeats.
type wrapping struct{ apiVersion, kind string }

func write(w io.Writer, wrap wrapping, rl *framework.ResourceList) error {
	var results *yaml.RNode
	if len(rl.Results) > 0 {
		data, err := yaml.Marshal(rl.Results)
		if err != nil {
			return fmt.Errorf("failed to write results: %w", err)
		}
		if results, err = yaml.Parse(string(data)); err != nil {
			return fmt.Errorf("failed to write results: %w", err)
		}
	}
	// Whole or nothing: the list is written to w only once it is complete.
	var buf bytes.Buffer
	bw := kio.ByteWriter{
		Writer:                &buf,
		KeepReaderAnnotations: true,
		FunctionConfig:        rl.FunctionConfig,
		Results:               results,
		WrappingAPIVersion:    wrap.apiVersion,
		WrappingKind:          wrap.kind,
	}
	if err := bw.Write(rl.Items); err != nil {
		return fmt.Errorf("failed to write the ResourceList: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("failed to write the ResourceList: %w", err)
	}
	return nil
}

// writeRefusal writes a ResourceList with no items and the problems as
// results, and returns the refusal.
func writeRefusal(w io.Writer, wrap wrapping, problems api.Problems) error {
	rl := &framework.ResourceList{}
	refusal := refuse(rl, problems.Capped())
	if err := write(w, wrap, rl); err != nil {
		return errors.Join(refusal, err)
	}
	return refusal
}

// stdinFile names the ResourceList in messages.
const stdinFile = "stdin"

// readResourceList reads and checks the ResourceList. kyaml's reader would
// accept items that are no objects and then fail deep inside with messages
// that name nothing, so the shape is checked here, every item with its
// index.
func readResourceList(r io.Reader, budget *input.Budget, wrap *wrapping) (*framework.ResourceList, api.Problems) {
	fail := func(format string, args ...any) (*framework.ResourceList, api.Problems) {
		return nil, api.Problems{{File: stdinFile, Message: fmt.Sprintf(format, args...)}}
	}
	// A file on stdin (`< fleet.yaml`) says how large it is: a huge one is
	// refused without reading it.
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > input.MaxInputBytes {
			return fail("the ResourceList is %d MiB, larger than the %d MiB one run reads", info.Size()>>20, input.MaxInputBytes>>20)
		}
	}
	// Binary data shows in its first bytes: refuse it before reading on.
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(64 << 10); len(head) > 0 {
		if len(head) == 64<<10 {
			// The last character may be cut off.
			for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.RuneStart(head[len(head)-1]); i++ {
				head = head[:len(head)-1]
			}
			head = head[:max(0, len(head)-1)]
		}
		if err := input.CheckBytes(head); err != nil {
			return fail("%v", err)
		}
	}
	data, err := io.ReadAll(io.LimitReader(br, input.MaxInputBytes+1))
	if err != nil {
		return fail("failed to read the ResourceList: %v", err)
	}
	if len(data) > input.MaxInputBytes {
		return fail("the ResourceList is larger than %d MiB, the most one run reads", input.MaxInputBytes>>20)
	}
	if err := input.CheckBytes(data); err != nil {
		return fail("%v", err)
	}
	if err := budget.ChargeBytes(data, stdinFile); err != nil {
		return nil, api.Problems{{Message: err.Error()}}
	}
	var root *yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for index := 0; ; index++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail("invalid YAML: %v", err)
		}
		if len(doc.Content) == 0 || yamlnode.IsNull(doc.Content[0]) {
			continue
		}
		if root != nil {
			return fail("expected one ResourceList, found a second YAML document (document %d)", index+1)
		}
		root = doc.Content[0]
	}
	if root == nil {
		return fail("no ResourceList: the input is empty; a KRM function reads a %s %s on stdin (run it with a config file to render standalone)", resourceListAPIVersion, resourceListKind)
	}
	if root.Kind != yaml.MappingNode {
		return fail("expected a %s object (a YAML map), found %s", resourceListKind, yamlnode.Describe(root))
	}
	ref := api.ObjectRef{Kind: resourceListKind}
	var problems api.Problems
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
	if kind != resourceListKind && kind != "List" {
		problem("kind", "must be %s, not %s", resourceListKind, yamlnode.Describe(fields["kind"]))
	}
	if apiVersion == "" {
		problem("apiVersion", "must be %s, not %s", resourceListAPIVersion, yamlnode.Describe(fields["apiVersion"]))
	}
	if len(problems) > 0 {
		return nil, problems
	}
	wrap.apiVersion, wrap.kind = apiVersion, kind

	rl := &framework.ResourceList{}
	if items := fields["items"]; !yamlnode.IsNull(items) {
		switch {
		case items.Kind != yaml.SequenceNode:
			problem("items", "must be a list of objects, not %s", yamlnode.Describe(items))
		case len(items.Content) > MaxResourceListItems:
			problem("items", "holds %s objects; a ResourceList may hold at most %s (render a fleet this large with the standalone CLI)", yamlnode.Count(len(items.Content)), yamlnode.Count(MaxResourceListItems))
		default:
			rl.Items = make([]*yaml.RNode, 0, len(items.Content))
			for i, item := range items.Content {
				if item.Kind != yaml.MappingNode {
					problem(fmt.Sprintf("items[%d]", i), "must be an object (a YAML map), not %s", describeNode(item))
					continue
				}
				if ps := checkMetadata(item); len(ps) > 0 {
					problems = append(problems, ps...)
					continue
				}
				rl.Items = append(rl.Items, yaml.NewRNode(item))
			}
		}
	}
	if fc := fields["functionConfig"]; !yamlnode.IsNull(fc) {
		if fc.Kind != yaml.MappingNode {
			problem("functionConfig", "must be a %s object, not %s", api.ConfigKind, describeNode(fc))
		} else if ps := checkMetadata(fc); len(ps) > 0 {
			problems = append(problems, ps...)
		} else {
			rl.FunctionConfig = yaml.NewRNode(fc)
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return rl, nil
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
	var problems api.Problems
	check := func(v *yaml.Node, field string) bool {
		switch {
		case v == nil || (v.Kind == yaml.ScalarNode && v.ShortTag() == yamlnode.TagNull):
			return false
		case v.Kind == yaml.AliasNode:
			problems = append(problems, api.Errorf(o.Ref(), o.Origin, field, "must be written out, not a YAML alias (*%s): tools that read it do not follow aliases", v.Value))
		case v.Kind != yaml.MappingNode:
			problems = append(problems, api.Errorf(o.Ref(), o.Origin, field, "must be a map, not %s", yamlnode.Describe(v)))
		default:
			return true
		}
		return false
	}
	if md := field(n, "metadata"); check(md, "metadata") {
		check(field(md, "annotations"), "metadata.annotations")
	}
	return problems
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
