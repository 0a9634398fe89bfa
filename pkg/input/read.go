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
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: file is larger than %d MiB", name, MaxFileBytes>>20)
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return nil, fmt.Errorf("%s: not a YAML file (binary or not UTF-8)", name)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []api.Object
	for index := 0; ; index++ {
		var doc yaml.Node
		err := decodeOne(dec, &doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: invalid YAML: %w", name, index+1, err)
		}
		n := yamlnode.Resolve(&doc)
		if n == nil || yamlnode.IsNull(n) {
			continue
		}
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: document %d: expected an object (a YAML map), found %s", name, index+1, yamlnode.Describe(n))
		}
		objs, err := Unwrap(n, api.Origin{File: name, Index: index})
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
		if len(out) > MaxObjects {
			return nil, fmt.Errorf("%s: more than %d objects", name, MaxObjects)
		}
	}
	return out, nil
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
	return Decode(data, filepath.ToSlash(path))
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
// decoded on all cores, and the objects come back in the order of the
// files, as ReadAll returns them; prepare runs on the goroutine that decoded
// the file. The standalone pipeline uses it to boil app objects down to what
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
			objs, err := ReadFile(f)
			if err != nil {
				return nil, err
			}
			if dir != "" {
				if rel, err := filepath.Rel(dir, f); err == nil && !strings.HasPrefix(rel, "..") {
					for i := range objs {
						objs[i].Origin.File = filepath.ToSlash(rel)
					}
				}
			}
			if prepare != nil {
				for i := range objs {
					prepare(&objs[i])
				}
			}
			return objs, nil
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
