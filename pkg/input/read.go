package input

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/parallel"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Decode splits YAML bytes into objects. name is used in messages and as the
// origin file of every object. Empty documents are skipped; a v1 List is
// unwrapped into its items. It counts against a budget of its own; use
// Budget.Decode to share one across the inputs of a run.
func Decode(data []byte, name string) ([]api.Object, api.Problems) {
	return new(Budget).Decode(data, name)
}

// CheckBytes refuses data that is no YAML text: binary data, text that is
// not UTF-8, and NUL bytes (which YAML does not allow and which no
// Kubernetes object holds). The error is the message alone, for a reader
// of bytes that names the file itself (chargeFile, the KRM function's
// stdin).
func CheckBytes(data []byte) error {
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return errors.New("not a YAML file (binary or not UTF-8)")
	}
	return nil
}

// Decode splits YAML bytes into objects, charging them to the budget. Every
// object that cannot be read safely is reported, with its field, before the
// first problem of another kind ends the file.
func (b *Budget) Decode(data []byte, name string) ([]api.Object, api.Problems) {
	if ps := b.chargeFile(data, name); len(ps) > 0 {
		return nil, ps
	}
	objs, _, ps := b.decodeDocuments(data, name)
	if len(ps) > 0 {
		return nil, ps
	}
	if ps := hold(b, objs, objectOf, false); len(ps) > 0 {
		return nil, ps
	}
	return objs, nil
}

// chargeFile checks that data is YAML text and charges it to the budget.
func (b *Budget) chargeFile(data []byte, name string) api.Problems {
	if err := CheckBytes(data); err != nil {
		return api.Problems{{File: name, Message: err.Error()}}
	}
	return b.ChargeBytes(data, name)
}

// decodeDocuments decodes the documents of data, numbering them from 0,
// and returns how many documents it read, empty ones included. It stops at
// the first problem that is not an object's, and when the budget is
// exhausted.
func (b *Budget) decodeDocuments(data []byte, name string) ([]api.Object, int, api.Problems) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []api.Object
	var problems api.Problems
	index := 0
	for ; ; index++ {
		var doc yaml.Node
		panicked, err := decodeOne(dec, &doc)
		if panicked != nil {
			return nil, 0, append(problems, api.Internal(fmt.Errorf("%s: document %d: the YAML parser failed: %v", name, index+1, panicked)))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, append(problems, api.Problem{File: name, Message: fmt.Sprintf("document %d: invalid YAML: %v", index+1, err)})
		}
		if len(doc.Content) == 0 || yamlnode.IsNull(doc.Content[0]) {
			continue
		}
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode {
			problems = append(problems, api.Problem{File: name, Message: fmt.Sprintf("document %d: expected an object (a YAML map), found %s", index+1, yamlnode.Describe(root))})
			continue
		}
		objs, ps := b.Unwrap(root, api.Origin{File: name, Index: index})
		if len(ps) > 0 {
			problems = append(problems, ps...)
			if b.Exhausted() {
				return nil, 0, problems
			}
		}
		out = append(out, objs...)
	}
	if len(problems) > 0 {
		return nil, 0, problems
	}
	return out, index, nil
}

// pieceBytes is the size above which a file is decoded in pieces, and about
// the size of each piece.
const pieceBytes = 256 << 10

// splitDocuments cuts data at document start lines ("---" at the start of a
// line, then a blank or the end of the line) into pieces of about size
// bytes, so that the documents of one big file can be decoded on all cores.
// A "---" there always starts a document for the YAML library: inside a
// quoted or flow scalar it is an error, and a block scalar's lines are
// indented. No piece starts right after a comment (see afterComment). It
// returns nil when data must be decoded in one piece: small
// files, files with directives (which apply to the document after them) or
// with a byte order mark past the start.
func splitDocuments(data []byte, size int) [][]byte {
	if len(data) <= size {
		return nil
	}
	for i := 0; i < len(data); {
		if data[i] == '%' {
			return nil
		}
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if bytes.Contains(data[min(3, len(data)):], []byte("\uFEFF")) {
		return nil
	}
	var pieces [][]byte
	start := 0
	for i := size; i < len(data); {
		// The next document start line at or after i.
		j := bytes.Index(data[i:], []byte("\n---"))
		if j < 0 {
			break
		}
		at := i + j + 1
		rest := data[at+3:]
		if (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\n') && !afterComment(data[:at]) {
			pieces = append(pieces, data[start:at])
			start = at
			i = at + size
			continue
		}
		i = at + 3
	}
	if len(pieces) == 0 {
		return nil
	}
	return append(pieces, data[start:])
}

// afterComment reports whether the last line of data that is not blank is a
// comment: the library attaches such a comment differently when the
// document after it is not in the same piece, so no piece starts there.
func afterComment(data []byte) bool {
	for len(data) > 0 {
		end := len(data)
		start := bytes.LastIndexByte(data[:end-1], '\n') + 1
		line := bytes.TrimLeft(data[start:end], " \t\r\n")
		if len(line) > 0 {
			return line[0] == '#'
		}
		data = data[:start]
	}
	return false
}

// asRead and objectOf are the prepare step of a reader that keeps every
// object as it was read.
func asRead(o api.Object) api.Object     { return o }
func objectOf(o *api.Object) *api.Object { return o }

// decodeFileAs decodes a file's bytes, in pieces of about pieceSize bytes
// on all cores when it is bigger, and runs prepare on each object, as
// ReadAs does; object returns what a prepared object still holds of the
// object read.
func decodeFileAs[T any](b *Budget, data []byte, name string, pieceSize int, prepare func(api.Object) T, object func(*T) *api.Object) ([]T, api.Problems) {
	if ps := b.chargeFile(data, name); len(ps) > 0 {
		return nil, ps
	}
	pieces := splitDocuments(data, pieceSize)
	if pieces == nil {
		objs, _, ps := decodePrepared(b, data, name, prepare, object)
		return objs, ps
	}
	type decoded struct {
		objs     []T
		docs     int
		problems api.Problems
	}
	var out []T
	var stopped api.Problems
	next := 0
	failed := inOrder(len(pieces),
		func(i int) decoded {
			objs, docs, ps := decodePrepared(b, pieces[i], name, prepare, object)
			return decoded{objs, docs, ps}
		},
		func(d decoded) bool {
			if len(d.problems) > 0 || b.Exhausted() {
				stopped = d.problems
				return false
			}
			// Documents were numbered within their piece.
			for i := range d.objs {
				o := object(&d.objs[i])
				o.Origin = api.Origin{File: name, Index: next + o.Origin.Index}
			}
			next += d.docs
			out = append(out, d.objs...)
			return true
		})
	switch {
	case b.Exhausted():
		return nil, b.withLimit(stopped)
	case len(stopped) > 0 || len(failed) > 0:
		// Whatever else went wrong, the file in one piece says it the way
		// it always has (a piece's line and document numbers are its own).
		// The pieces have counted what they read already.
		objs, _, ps := decodePrepared(new(Budget), data, name, prepare, object)
		return objs, ps
	}
	return out, nil
}

// decodePrepared decodes the documents of data (decodeDocuments), runs
// prepare on every object and charges what the prepared objects hold.
func decodePrepared[T any](b *Budget, data []byte, name string, prepare func(api.Object) T, object func(*T) *api.Object) ([]T, int, api.Problems) {
	objs, docs, ps := b.decodeDocuments(data, name)
	if len(ps) > 0 {
		return nil, 0, ps
	}
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = prepare(o)
	}
	if ps := hold(b, out, object, false); len(ps) > 0 {
		return nil, 0, ps
	}
	return out, docs, nil
}

// errStop stops parallel.Ordered for inOrder; it never leaves inOrder.
var errStop = errors.New("stopped")

// inOrder calls produce(i) for every i in [0, n) on all cores and consume
// on the calling goroutine in order of i (parallel.Ordered), until consume
// returns false. parallel.Ordered is generic and stops only at an error, so
// this is the one place where this package makes an error of its own:
// errStop, which never leaves it. What stopped the run is the caller's to
// keep (problems, or an exhausted budget). A panic in produce is a bug,
// returned as api.Internal.
func inOrder[T any](n int, produce func(i int) T, consume func(T) bool) api.Problems {
	err := parallel.Ordered(n, parallel.Workers(),
		func(i int) (T, error) { return produce(i), nil },
		func(_ int, v T) error {
			if !consume(v) {
				return errStop
			}
			return nil
		})
	if err != nil && !errors.Is(err, errStop) {
		return api.Problems{api.Internal(err)}
	}
	return nil
}

// decodeOne decodes a document, turning a panic of the YAML library into
// the value it panicked with. go-yaml recovers its own failures; this is
// for the ones it may still have, a bug and not the user's mistake, and no
// test relies on it.
func decodeOne(dec *yaml.Decoder, doc *yaml.Node) (panicked any, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked = r
		}
	}()
	return nil, dec.Decode(doc)
}

// Unwrap returns the object, or the items of a v1 List, each checked with
// yamlnode.Check and charged to the budget. The problems name every object
// that cannot be read safely; a limit of the whole run ends the list.
func (b *Budget) Unwrap(n *yaml.Node, origin api.Origin) ([]api.Object, api.Problems) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, api.Problems{{File: origin.File, Message: fmt.Sprintf("expected an object (a YAML map), found %s", describeItem(n))}}
	}
	o := api.NewObject(n, origin)
	if o.APIVersion != "v1" || o.Kind != "List" {
		obj, ps := b.object(o)
		if len(ps) > 0 {
			return nil, ps
		}
		return []api.Object{obj}, nil
	}
	listProblem := func(format string, args ...any) api.Problems {
		return api.Problems{api.Errorf(o.Ref(), origin, "items", format, args...)}
	}
	items := yamlnode.Get(n, "items")
	if yamlnode.IsNull(items) {
		return nil, nil
	}
	if items.Kind != yaml.SequenceNode {
		return nil, listProblem("a v1 List's items must be a list, not %s", yamlnode.Describe(items))
	}
	out := make([]api.Object, 0, len(items.Content))
	var problems api.Problems
	for i, item := range items.Content {
		if item.Kind != yaml.MappingNode {
			problems = append(problems, api.Errorf(o.Ref(), origin, fmt.Sprintf("items[%d]", i), "must be an object (a YAML map), not %s", describeItem(item)))
			continue
		}
		obj, ps := b.Object(item, origin)
		if len(ps) > 0 {
			problems = append(problems, ps...)
			if b.Exhausted() {
				return nil, problems
			}
			continue
		}
		out = append(out, obj)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return out, nil
}

func describeItem(n *yaml.Node) string {
	if n != nil && n.Kind == yaml.AliasNode {
		return "an alias (*" + n.Value + "); every object must stand on its own"
	}
	return yamlnode.Describe(n)
}

// joinKey appends a map key to a field path, in brackets when it holds
// dots or slashes, as label and annotation keys do.
func joinKey(field, key string) string {
	if strings.ContainsAny(key, "./[] ") {
		return field + "[" + key + "]"
	}
	return field + "." + key
}

// pathAnnotations name the file an item is written to by kpt, in its
// current and legacy spellings.
var pathAnnotations = map[string]bool{
	"internal.config.kubernetes.io/path": true,
	"config.kubernetes.io/path":          true,
}

// insidePath reports whether p is a relative path that stays inside the
// folder it is relative to.
func insidePath(p string) bool {
	if p == "" {
		return true
	}
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || strings.Contains(p, "\x00") || filepath.VolumeName(p) != "" {
		return false
	}
	for _, seg := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return false
		}
	}
	return true
}

// identityFields are the fields that kyaml, kpt and kustomize read without
// following aliases; an alias there would make them see another object.
var identityFields = []string{"apiVersion", "kind", "metadata"}
var metadataFields = []string{"name", "namespace", "labels", "annotations"}

// Object checks one object with yamlnode.Check, refuses aliases in its
// identity and metadata, and charges it to the budget. An object larger
// than MaxObjectNodes exhausts the budget.
func (b *Budget) Object(n *yaml.Node, origin api.Origin) (api.Object, api.Problems) {
	return b.object(api.NewObject(n, origin))
}

// object is Object for an object whose identity is read already.
func (b *Budget) object(o api.Object) (api.Object, api.Problems) {
	n, origin := o.Node, o.Origin
	nodes, err := yamlnode.Check(n, MaxObjectNodes)
	if err != nil {
		var p api.Problem
		var pe *yamlnode.PathError
		if errors.As(err, &pe) {
			p = api.Errorf(o.Ref(), origin, pe.Path, "%v", pe.Err)
		} else {
			p = api.Errorf(o.Ref(), origin, "", "%v", err)
		}
		if errors.Is(err, yamlnode.ErrBudget) {
			// An object this large is no mistake; reading on would only
			// cost more time and memory.
			return o, b.exhaust(p)
		}
		return o, api.Problems{p}
	}
	var problems api.Problems
	noAlias := func(m *yaml.Node, field string, keys []string) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if slices.Contains(keys, m.Content[i].Value) && m.Content[i+1].Kind == yaml.AliasNode {
				problems = append(problems, api.Errorf(o.Ref(), origin, field+m.Content[i].Value,
					"must be written out, not a YAML alias (*%s): tools that read it do not follow aliases", m.Content[i+1].Value))
			}
		}
	}
	noAlias(n, "", identityFields)
	if md := yamlnode.Get(n, "metadata"); md != nil && md.Kind == yaml.MappingNode {
		noAlias(md, "metadata.", metadataFields)
		// kyaml, kpt and kustomize rewrite annotations (the path and
		// index of an item); an anchor there would go missing.
		if ann := yamlnode.Get(md, "annotations"); ann != nil && ann.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(ann.Content); i += 2 {
				k, v := ann.Content[i].Value, ann.Content[i+1]
				if pathAnnotations[k] && v.Kind == yaml.ScalarNode && !insidePath(v.Value) {
					problems = append(problems, api.Errorf(o.Ref(), origin, joinKey("metadata.annotations", k),
						"%q leads outside the package: the path of an item must be relative and stay inside it", v.Value))
				}
			}
			for i, c := range ann.Content {
				if c.Anchor != "" || c.Kind == yaml.AliasNode {
					field := "metadata.annotations"
					if i%2 == 1 {
						field = joinKey(field, ann.Content[i-1].Value)
					}
					problems = append(problems, api.Errorf(o.Ref(), origin, field,
						"must be written out, without YAML anchors or aliases: tools rewrite annotations and would drop an anchor"))
					break
				}
			}
		}
	}
	if len(problems) > 0 {
		return o, problems
	}
	if ps := b.chargeObject(nodes, origin); len(ps) > 0 {
		return o, ps
	}
	o.Nodes = nodes
	return o, nil
}

// HoldItems charges the items of a ResourceList and the inputs the KRM
// function reads, all of which it holds until it writes them, to the
// budget (see hold).
func (b *Budget) HoldItems(objs []api.Object) api.Problems {
	return hold(b, objs, objectOf, true)
}

// hold charges the objects whose nodes stay in memory until they are
// written to the budget: those a prepare step left a node (that pass
// through or are kept, the function config) and, for a ResourceList, every
// one, whose items the KRM function holds whole. items words the message
// for the items of a ResourceList. Going over MaxHeldNodes exhausts the
// budget.
func hold[T any](b *Budget, objs []T, object func(*T) *api.Object, items bool) api.Problems {
	what, advice := keptHeld, keptAdvice
	if items || b.ForResourceList {
		what, advice = itemsHeld, itemsAdvice
	}
	for i := range objs {
		o := object(&objs[i])
		if o.Node == nil && !b.ForResourceList {
			continue
		}
		if ps := b.chargeHeld(o, what, advice); len(ps) > 0 {
			return ps
		}
	}
	return nil
}

// What the budget says it held when it runs out.
const (
	itemsHeld   = "the inputs of the KRM function (items and spec.inputs)"
	itemsAdvice = "render a fleet this large with the standalone CLI"
	keptHeld    = "the objects that pass through this function or are kept (keepInputs)"
	keptAdvice  = "pass fewer or smaller objects through (for a large fleet, keepInputs: false)"
)

// ReadFile reads one YAML file, charging it to the budget.
func (b *Budget) ReadFile(path string) ([]api.Object, api.Problems) {
	name := filepath.ToSlash(path)
	data, ps := b.readBytes(anywhere{}, path, name)
	if len(ps) > 0 {
		return nil, ps
	}
	return b.Decode(data, name)
}

// A tree is where inputs are found and read: a folder confined by an
// os.Root (root.FS(), for the inputs of a function config), or the whole
// file system (anywhere, for those named on the command line).
type tree interface {
	fs.StatFS
	fs.ReadDirFS
}

// anywhere is the whole file system as a tree: names are the operating
// system's paths, as given.
type anywhere struct{}

func (anywhere) Open(name string) (fs.File, error)          { return os.Open(name) }
func (anywhere) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (anywhere) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (anywhere) Glob(pattern string) ([]string, error)      { return filepath.Glob(pattern) }

// readBytes reads the file path of t, charging it to the budget. Only
// regular files are read: a FIFO or a device would block or never end, and
// a file larger than what the run may still read is refused from its size,
// which exhausts the budget.
func (b *Budget) readBytes(t tree, path, name string) ([]byte, api.Problems) {
	fail := func(format string, args ...any) api.Problems {
		return api.Problems{{File: name, Message: fmt.Sprintf(format, args...)}}
	}
	// Looked at before it is opened, since opening a FIFO blocks; and
	// again once open, in case it was swapped in between.
	info, err := t.Stat(path)
	if err != nil {
		return nil, fail("failed to read input: %v", unwrapPathError(err))
	}
	if !info.Mode().IsRegular() {
		return nil, fail("failed to read input: not a regular file")
	}
	if ps := b.countFile(name); len(ps) > 0 {
		return nil, ps
	}
	f, err := t.Open(path)
	if err != nil {
		return nil, fail("failed to read input: %v", unwrapPathError(err))
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, fail("failed to read input: not a regular file")
	}
	remaining := b.RemainingBytes()
	if info.Size() > remaining {
		return nil, b.exhaust(api.Problem{File: name, Message: fmt.Sprintf("the file is %d MiB; the inputs of one run may hold at most %d MiB together", info.Size()>>20, MaxInputBytes>>20)})
	}
	// Sized by the file, as os.ReadFile does, rather than grown while
	// reading; the limit still holds for files that grow or lie.
	data := make([]byte, 0, info.Size()+1)
	r := io.LimitReader(f, remaining+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fail("failed to read input: %v", unwrapPathError(err))
		}
	}
	return data, nil
}

// unwrapPathError drops the path that os errors repeat, since every
// message already names the file.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Expand turns paths, folders and glob patterns into the sorted list of YAML
// files they name, relative to dir as given. A folder contributes every
// .yaml and .yml file below it, skipping hidden folders and not following
// symbolic links to folders. A pattern that names nothing is a problem, so
// that a typo never silently renders an empty fleet.
func Expand(dir string, patterns []string) ([]string, api.Problems) {
	return expand(anywhere{}, dir, patterns, nil)
}

// ExpandInside is Expand for patterns that must stay inside dir, as those of
// a function config do (kustomize restricts the files a kustomization loads
// the same way): no absolute paths, no "..", and no symbolic link that
// leads out of dir. A config from a pull request can then not read, and
// copy into the rendered fleet, files such as a kubeconfig elsewhere on the
// CI machine. Read opens every file of such patterns through an os.Root of
// dir, so a link swapped in after the expansion cannot lead out either.
func ExpandInside(dir string, patterns []string) ([]string, api.Problems) {
	root, err := openRoot(dir)
	if err != nil {
		return nil, patternProblem(nil, err.Error())
	}
	defer root.Close()
	files, ps := expand(newInside(root, dir), "", patterns, nil)
	for i, f := range files {
		files[i] = filepath.Join(dir, filepath.FromSlash(f))
	}
	return files, ps
}

// openRoot opens the folder that the inputs of a function config stay in.
func openRoot(dir string) (*os.Root, error) {
	root, err := os.OpenRoot(cmp.Or(dir, "."))
	if err != nil {
		return nil, fmt.Errorf("failed to open the config's folder: %w", err)
	}
	return root, nil
}

// inside is the tree of an os.Root of dir: names are slash-separated and
// relative to dir, and no open leaves it.
type inside struct {
	tree
	dir string
}

// newInside is the tree of root, an os.Root of dir (whose file system is
// documented to be a StatFS and a ReadDirFS).
func newInside(root *os.Root, dir string) inside { return inside{root.FS().(tree), dir} }

// leadsOut returns the error of a name of t that leads out of its
// os.Root: one that the root refuses and the operating system, asked by
// path, finds. nil for any other name. (The os.Root refuses; this only
// words the message.)
func leadsOut(t tree, name, shown string) error {
	in, ok := t.(inside)
	if !ok {
		return nil
	}
	if _, err := t.Stat(name); err == nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(in.dir, filepath.FromSlash(name))); err != nil {
		return nil
	}
	return fmt.Errorf("%s leads outside the config's folder (a symbolic link?)", shown)
}

// expand is Expand for the patterns of cfg's spec.inputs, or of the command
// line when cfg is nil (see patternProblem).
func expand(t tree, dir string, patterns []string, cfg *api.Config) ([]string, api.Problems) {
	fail := func(format string, args ...any) ([]string, api.Problems) {
		return nil, patternProblem(cfg, fmt.Sprintf(format, args...))
	}
	_, confined := t.(inside)
	seen := map[string]bool{}
	var files []string
	// add is called from fs.WalkDir, which stops at an error: its error is
	// the message of a problem.
	add := func(p, shown string) error {
		if seen[p] {
			return nil
		}
		if err := leadsOut(t, p, shown); err != nil {
			return err
		}
		seen[p] = true
		files = append(files, p)
		if len(files) > MaxFiles {
			return fmt.Errorf("names more than %s files", yamlnode.Count(MaxFiles))
		}
		return nil
	}
	for _, pattern := range patterns {
		full := pattern
		if confined {
			if err := relativeInside(pattern); err != nil {
				return fail("input %q: %v", pattern, err)
			}
			full = path.Clean(filepath.ToSlash(pattern))
		} else if !filepath.IsAbs(full) && dir != "" {
			full = filepath.Join(dir, pattern)
		}
		matches, err := fs.Glob(t, full)
		if err != nil {
			return fail("input %q: bad pattern: %v", pattern, err)
		}
		if len(matches) == 0 {
			if err := leadsOut(t, full, filepath.ToSlash(pattern)); err != nil {
				return fail("input %q: %v", pattern, err)
			}
			return fail("input %q: no such file or folder", pattern)
		}
		for _, m := range matches {
			// Messages name a match as the pattern spells it, when the
			// pattern is the match ("link/", not "link").
			shown := m
			if confined && len(matches) == 1 && m == full {
				shown = filepath.ToSlash(pattern)
			}
			info, err := t.Stat(m)
			if err != nil {
				return fail("input %q: %v", pattern, cmp.Or(leadsOut(t, m, shown), unwrapPathError(err)))
			}
			if !info.IsDir() {
				if err := add(m, shown); err != nil {
					return fail("input %q: %v", pattern, err)
				}
				continue
			}
			err = fs.WalkDir(t, m, func(p string, e fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if e.IsDir() && p != m && strings.HasPrefix(e.Name(), ".") {
					return fs.SkipDir
				}
				if !e.IsDir() && isYAML(e.Name()) {
					return add(p, p)
				}
				return nil
			})
			if err != nil {
				return fail("input %q: %v", pattern, err)
			}
		}
	}
	slices.Sort(files)
	return files, nil
}

// relativeInside refuses a pattern that could name a file outside the
// config's folder.
func relativeInside(pattern string) error {
	if filepath.IsAbs(pattern) || strings.HasPrefix(pattern, "/") || strings.HasPrefix(pattern, `\`) || filepath.VolumeName(pattern) != "" {
		return errors.New("must be relative to the config's folder, not an absolute path")
	}
	clean := filepath.ToSlash(filepath.Clean(pattern))
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return errors.New("must stay inside the config's folder (no ..)")
	}
	return nil
}

func isYAML(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return (ext == ".yaml" || ext == ".yml") && !strings.HasPrefix(name, ".")
}

// Options say where Read reads and what it does with each object.
type Options struct {
	// Dir is the folder the patterns are relative to; empty means the
	// working directory.
	Dir string
	// Config, when set, is the function config whose spec.inputs the
	// patterns are: they must then stay inside Dir (see ExpandInside), and
	// a pattern's problem is reported at that field. The inputs a person
	// names on the command line may be anywhere.
	Config *api.Config
	// Budget counts what is read against the limits of one run; nil starts
	// a budget of its own.
	Budget *Budget
	// Shown is how origins and messages name Dir for the patterns of a
	// Config: a file is named Shown/<its path below Dir> (the config's
	// folder as the user, kustomize or kpt spells it); empty names it by
	// its path below Dir alone.
	Shown string
	// Skip, when not nil, leaves out the files of a Config's patterns whose
	// name (as Shown names them) it reports: files read already, such as
	// the items kpt hands the KRM function.
	Skip func(name string) bool
}

// Read expands patterns (files, folders and globs; see Expand) and reads
// every file, charging them to the budget. Files are read and decoded on all
// cores, big ones in pieces (see splitDocuments), and the objects come back
// in the order of the files and documents.
//
// Origins name files relative to Dir where possible, so that messages
// match what the user wrote. The problems are those inside files, every
// file's together, or the one of a pattern that names nothing.
func Read(patterns []string, opts Options) ([]api.Object, api.Problems) {
	return read(patterns, opts, asRead, objectOf)
}

// Prepared is what a reader's prepare step makes of an object read: it
// still holds the object (Read), whose node it may have dropped.
type Prepared interface {
	Read() *api.Object
}

// ReadAs is Read with prepare run on every object right after its file is
// decoded and its objects checked, on the goroutine that decoded them, so
// that the node trees of all files are never held at once: the budget
// holds what prepare leaves a node.
func ReadAs[T Prepared](patterns []string, opts Options, prepare func(api.Object) T) ([]T, api.Problems) {
	return read(patterns, opts, prepare, func(t *T) *api.Object { return (*t).Read() })
}

func read[T any](patterns []string, opts Options, prepare func(api.Object) T, object func(*T) *api.Object) ([]T, api.Problems) {
	b := opts.Budget
	if b == nil {
		b = new(Budget)
	}
	var t tree = anywhere{}
	dir := opts.Dir
	if opts.Config != nil {
		root, err := openRoot(opts.Dir)
		if err != nil {
			return nil, patternProblem(opts.Config, err.Error())
		}
		defer root.Close()
		t, dir = newInside(root, opts.Dir), ""
	}
	files, ps := expand(t, dir, patterns, opts.Config)
	if len(ps) > 0 {
		return nil, ps
	}
	shown := ""
	if opts.Config != nil {
		shown = opts.Shown
		if opts.Skip != nil {
			files = slices.DeleteFunc(files, func(f string) bool { return opts.Skip(path.Join(shown, f)) })
		}
	}
	return readFiles(b, t, dir, shown, files, prepare, object)
}

// patternProblem is the problem of the patterns: at cfg's spec.inputs, or,
// for those of the command line (cfg nil), of the run.
func patternProblem(cfg *api.Config, message string) api.Problems {
	if cfg == nil {
		return api.Problems{{Message: message}}
	}
	return api.Problems{api.Errorf(cfg.Ref, cfg.Origin, "spec.inputs", "%s", message)}
}

// readFiles reads files of t; dir is what the names of files of the whole
// file system are relative to, shown what those of a confined tree are
// named below. The problems are every file's, in order;
// a limit of the whole run ends the reading, after the problems of the
// files before.
func readFiles[T any](b *Budget, t tree, dir, shown string, files []string, prepare func(api.Object) T, object func(*T) *api.Object) ([]T, api.Problems) {
	type read struct {
		objs     []T
		problems api.Problems
	}
	var out []T
	var problems api.Problems
	failed := inOrder(len(files),
		func(i int) read {
			if b.Exhausted() {
				return read{}
			}
			f := files[i]
			name := filepath.ToSlash(f)
			if dir != "" {
				if rel, err := filepath.Rel(dir, f); err == nil && !strings.HasPrefix(rel, "..") {
					name = filepath.ToSlash(rel)
				}
			} else if shown != "" {
				name = path.Join(shown, name)
			}
			data, ps := b.readBytes(t, f, name)
			if len(ps) > 0 {
				return read{problems: ps}
			}
			objs, ps := decodeFileAs(b, data, name, pieceBytes, prepare, object)
			return read{objs, ps}
		},
		func(r read) bool {
			out = append(out, r.objs...)
			problems = append(problems, r.problems...)
			return !b.Exhausted()
		})
	problems = append(problems, failed...)
	switch {
	case b.Exhausted():
		return nil, b.withLimit(problems)
	case len(problems) > 0:
		return nil, problems
	}
	return out, nil
}
