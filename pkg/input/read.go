package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/parallel"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Limits bound what one run reads, so that hostile input ends in a clear
// error instead of exhausting the machine.
const (
	// MaxFileBytes is the largest input file or ResourceList accepted.
	MaxFileBytes = 512 << 20
	// MaxObjects is the most input objects one run accepts.
	MaxObjects = 2_000_000
)

// Decode splits YAML bytes into objects. name is used in messages and as the
// origin file of every object. Empty documents are skipped; a v1 List is
// unwrapped into its items.
func Decode(data []byte, name string) ([]api.Object, error) {
	if err := check(data, name); err != nil {
		return nil, err
	}
	objs, _, err := decodeDocuments(data, name, 0)
	return objs, err
}

// check refuses what is not a YAML file of a size this tool reads.
func check(data []byte, name string) error {
	if len(data) > MaxFileBytes {
		return fmt.Errorf("%s: file is larger than %d MiB", name, MaxFileBytes>>20)
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return fmt.Errorf("%s: not a YAML file (binary or not UTF-8)", name)
	}
	return nil
}

// decodeDocuments decodes the documents of data, numbering them from first,
// and returns how many documents it read, empty ones included.
func decodeDocuments(data []byte, name string, first int) ([]api.Object, int, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []api.Object
	index := first
	for ; ; index++ {
		var doc yaml.Node
		err := decodeOne(dec, &doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: document %d: invalid YAML: %w", name, index+1, err)
		}
		n := yamlnode.Resolve(&doc)
		if n == nil || yamlnode.IsNull(n) {
			continue
		}
		if n.Kind != yaml.MappingNode {
			return nil, 0, fmt.Errorf("%s: document %d: expected an object (a YAML map), found %s", name, index+1, yamlnode.Describe(n))
		}
		objs, err := Unwrap(n, api.Origin{File: name, Index: index})
		if err != nil {
			return nil, 0, err
		}
		out = append(out, objs...)
		if len(out) > MaxObjects {
			return nil, 0, fmt.Errorf("%s: more than %d objects", name, MaxObjects)
		}
	}
	return out, index - first, nil
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

// decodeFile decodes a file's bytes, in pieces of about pieceSize bytes on
// all cores when it is bigger, and runs prepare on each object, as Read does.
func decodeFile(data []byte, name string, pieceSize int, prepare func(*api.Object)) ([]api.Object, error) {
	if err := check(data, name); err != nil {
		return nil, err
	}
	whole := func() ([]api.Object, error) {
		objs, _, err := decodeDocuments(data, name, 0)
		if err != nil {
			return nil, err
		}
		prepareAll(objs, prepare)
		return objs, nil
	}
	pieces := splitDocuments(data, pieceSize)
	if pieces == nil {
		return whole()
	}
	type decoded struct {
		objs []api.Object
		docs int
	}
	var out []api.Object
	next := 0
	err := parallel.Ordered(len(pieces), parallel.Workers(),
		func(i int) (decoded, error) {
			objs, docs, err := decodeDocuments(pieces[i], name, 0)
			if err != nil {
				return decoded{}, err
			}
			prepareAll(objs, prepare)
			return decoded{objs, docs}, nil
		},
		func(_ int, d decoded) error {
			// Documents were numbered within their piece.
			for i := range d.objs {
				d.objs[i].SetOrigin(api.Origin{File: name, Index: next + d.objs[i].Origin.Index})
			}
			next += d.docs
			out = append(out, d.objs...)
			if len(out) > MaxObjects {
				return fmt.Errorf("%s: more than %d objects", name, MaxObjects)
			}
			return nil
		})
	if err != nil {
		// Whatever went wrong, the file in one piece says it the way it
		// always has (a piece's line and document numbers are its own).
		return whole()
	}
	return out, nil
}

func prepareAll(objs []api.Object, prepare func(*api.Object)) {
	if prepare == nil {
		return
	}
	for i := range objs {
		prepare(&objs[i])
	}
}

// decodeOne decodes a document, turning a panic of the YAML library (it has
// had some on malformed input) into an error.
func decodeOne(dec *yaml.Decoder, doc *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML parser failed: %v", r)
		}
	}()
	return dec.Decode(doc)
}

// Unwrap returns the object, or the items of a v1 List.
func Unwrap(n *yaml.Node, origin api.Origin) ([]api.Object, error) {
	o := api.NewObject(n, origin)
	if o.APIVersion != "v1" || o.Kind != "List" {
		return []api.Object{o}, nil
	}
	items := yamlnode.Get(n, "items")
	if yamlnode.IsNull(items) {
		return nil, nil
	}
	if items.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%s: document %d: v1 List: items must be a list, not %s", origin.File, origin.Index+1, yamlnode.Describe(items))
	}
	out := make([]api.Object, 0, len(items.Content))
	for i, item := range items.Content {
		item = yamlnode.Resolve(item)
		if item == nil || item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: document %d: v1 List: items[%d] must be an object, not %s", origin.File, origin.Index+1, i, yamlnode.Describe(item))
		}
		out = append(out, api.NewObject(item, origin))
	}
	return out, nil
}

// ReadFile reads one YAML file.
func ReadFile(path string) ([]api.Object, error) {
	data, err := readBytes(path)
	if err != nil {
		return nil, err
	}
	return Decode(data, filepath.ToSlash(path))
}

// readBytes reads a file, at most MaxFileBytes+1 of it.
func readBytes(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read input: %w", err)
	}
	defer f.Close()
	// Sized by the file, as os.ReadFile does, rather than grown while
	// reading; the limit still holds for files that grow or lie.
	size := 512
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		size = int(min(info.Size(), MaxFileBytes)) + 1
	}
	data := make([]byte, 0, size)
	r := io.LimitReader(f, MaxFileBytes+1)
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
			return nil, fmt.Errorf("failed to read input %s: %w", path, err)
		}
	}
	return data, nil
}

// Expand turns paths, folders and glob patterns into the sorted list of YAML
// files they name, relative to dir as given. A folder contributes every
// .yaml and .yml file below it. A pattern that names nothing is an error, so
// that a typo never silently renders an empty fleet.
func Expand(dir string, patterns []string) ([]string, error) {
	seen := map[string]bool{}
	var files []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, pattern := range patterns {
		full := pattern
		if !filepath.IsAbs(full) && dir != "" {
			full = filepath.Join(dir, pattern)
		}
		matches, err := filepath.Glob(full)
		if err != nil {
			return nil, fmt.Errorf("input %q: bad pattern: %w", pattern, err)
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("input %q: no such file or folder", pattern)
		}
		for _, m := range matches {
			info, err := os.Stat(m)
			if err != nil {
				return nil, fmt.Errorf("input %q: %w", pattern, err)
			}
			if !info.IsDir() {
				add(m)
				continue
			}
			err = filepath.WalkDir(m, func(p string, e fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if e.IsDir() && p != m && strings.HasPrefix(e.Name(), ".") {
					return filepath.SkipDir
				}
				if !e.IsDir() && isYAML(e.Name()) {
					add(p)
				}
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("input %q: %w", pattern, err)
			}
		}
	}
	slices.Sort(files)
	return files, nil
}

func isYAML(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return (ext == ".yaml" || ext == ".yml") && !strings.HasPrefix(name, ".")
}

// ReadAll expands patterns relative to dir and reads every file. Origins name
// files relative to dir where possible, so that messages match what the user
// wrote.
func ReadAll(dir string, patterns []string) ([]api.Object, error) {
	return Read(dir, patterns, nil)
}

// Read is ReadAll with a step, prepare (may be nil), that runs on every
// object of a file right after the file is decoded. Files are read and
// decoded on all cores, big ones in pieces (see splitDocuments), and the
// objects come back in the order of the files and documents, as ReadAll
// returns them; prepare runs on the goroutine that decoded the object. The standalone pipeline uses it to boil app objects down to what
// rendering needs while reading, so that the node trees of all files are
// never held at once.
func Read(dir string, patterns []string, prepare func(*api.Object)) ([]api.Object, error) {
	files, err := Expand(dir, patterns)
	if err != nil {
		return nil, err
	}
	var out []api.Object
	err = parallel.Ordered(len(files), parallel.Workers(),
		func(i int) ([]api.Object, error) {
			f := files[i]
			data, err := readBytes(f)
			if err != nil {
				return nil, err
			}
			name := filepath.ToSlash(f)
			if dir != "" {
				if rel, err := filepath.Rel(dir, f); err == nil && !strings.HasPrefix(rel, "..") {
					name = filepath.ToSlash(rel)
				}
			}
			return decodeFile(data, name, pieceBytes, prepare)
		},
		func(_ int, objs []api.Object) error {
			out = append(out, objs...)
			if len(out) > MaxObjects {
				return fmt.Errorf("inputs hold more than %d objects", MaxObjects)
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}
