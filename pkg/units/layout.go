package units

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
)

// Layout is a fleet folder as a render wrote it: the earlier render that a
// new one is checked against (CheckGuardMove, and pkg/poolmove's check of
// the worker pools' move), read only as far as a check needs. It reads the
// folder on disk (OpenLayout), a Git revision of it or a render's files
// (FilesLayout).
type Layout struct {
	// What names the folder in messages: "rendered/", "rendered/ at
	// origin/main", "the render".
	What string
	tree tree
	root *os.Root
	// wirings are the folders whose kustomization.yaml is a wiring's,
	// found on first use.
	wirings     []string
	wiringsRead bool
	// kustomizations are the wiring's Kustomizations read so far, by name;
	// nil for one the wiring does not hold, or holds twice unalike.
	kustomizations map[string]*kustomizev1.Kustomization
}

// tree is what a Layout reads: a folder on disk or a list of files.
type tree interface {
	// readFile returns a file's bytes, or an error that is fs.ErrNotExist
	// when there is no such file.
	readFile(p string) ([]byte, error)
	// readDir lists a folder: its entries' names and which are folders.
	readDir(p string) ([]entry, error)
}

type entry struct {
	name string
	dir  bool
}

// OpenLayout opens the fleet folder dir as a Layout named what, to be
// closed. A folder that does not exist is no render: nil and no error.
// Every read goes through an os.Root of dir.
func OpenLayout(dir, what string) (*Layout, error) {
	root, err := os.OpenRoot(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("failed to open %s: %w", dir, err)
	}
	return &Layout{What: what, tree: rootTree{root}, root: root}, nil
}

// FilesLayout is a Layout named what of files, as Files makes them or a Git
// revision holds them (slash paths relative to the fleet folder).
func FilesLayout(files []File, what string) *Layout {
	t := fileTree{files: make(map[string][]byte, len(files)), dirs: map[string]map[string]bool{".": {}}}
	for _, f := range files {
		t.files[f.Path] = f.Data
		for p, dir := f.Path, false; p != "."; p, dir = path.Dir(p), true {
			parent := path.Dir(p)
			if t.dirs[parent] == nil {
				t.dirs[parent] = map[string]bool{}
			}
			t.dirs[parent][path.Base(p)] = dir || t.dirs[parent][path.Base(p)]
		}
	}
	return &Layout{What: what, tree: t}
}

// Close closes the folder a Layout opened; a nil Layout or one of files has
// nothing to close.
func (l *Layout) Close() {
	if l != nil && l.root != nil {
		l.root.Close()
	}
}

type rootTree struct{ root *os.Root }

func (t rootTree) readFile(p string) ([]byte, error) { return t.root.ReadFile(p) }

func (t rootTree) readDir(p string) ([]entry, error) {
	des, err := fs.ReadDir(t.root.FS(), p)
	out := make([]entry, 0, len(des))
	for _, d := range des {
		out = append(out, entry{d.Name(), d.IsDir()})
	}
	return out, err
}

type fileTree struct {
	files map[string][]byte
	// dirs are the folders' entries: true for a folder.
	dirs map[string]map[string]bool
}

func (t fileTree) readFile(p string) ([]byte, error) {
	data, ok := t.files[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return data, nil
}

func (t fileTree) readDir(p string) ([]entry, error) {
	names, ok := t.dirs[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	out := make([]entry, 0, len(names))
	for n, dir := range names {
		out = append(out, entry{n, dir})
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// ReadFile returns the file at p (a slash path relative to the folder); ok
// is false when there is none. A nil Layout, a folder that does not exist,
// has no files.
func (l *Layout) ReadFile(p string) (data []byte, ok bool, err error) {
	if l == nil {
		return nil, false, nil
	}
	data, err = l.tree.readFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("failed to read %s in %s: %w", p, l.What, err)
	}
	return data, true, nil
}

// Find returns the paths of the files named name anywhere in the folder,
// outside folders whose names start with a dot (no render writes there),
// in lexical order: where an earlier render put an object, whatever layout
// and parts it had then.
func (l *Layout) Find(name string) ([]string, error) {
	if l == nil {
		return nil, nil
	}
	var out []string
	err := l.walkFiles(".", func(p string) error {
		if path.Base(p) == name {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// walkFiles calls visit with the path of every file below dir, in lexical
// order, outside folders whose names start with a dot (no render writes
// there).
func (l *Layout) walkFiles(dir string, visit func(p string) error) error {
	entries, err := l.tree.readDir(dir)
	if err != nil {
		return fmt.Errorf("failed to read %s in %s: %w", dir, l.What, err)
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for _, e := range entries {
		p := path.Join(dir, e.name)
		switch {
		case strings.HasPrefix(e.name, "."):
		case e.dir:
			if err := l.walkFiles(p, visit); err != nil {
				return err
			}
		default:
			if err := visit(p); err != nil {
				return err
			}
		}
	}
	return nil
}
