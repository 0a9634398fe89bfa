package output

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// File is one file of a fleet folder: a slash-separated path relative to the
// folder and the file's bytes.
type File struct {
	Path string
	Data []byte
}

// Op is what a run does, or would do, to one file.
type Op string

// The three changes a file can see.
const (
	Added   Op = "added"
	Changed Op = "changed"
	Removed Op = "removed"
)

// Change is one file of the fleet folder that differs from what the run
// generates. Old is nil for an added file and New for a removed one. New is
// the file as the render generates it; the file written starts with the
// fleet's identity line before it (DirOptions.Fleet, FleetHeader), which
// Diff shows. It is kept apart so that a large write does not hold a
// second copy of every file.
type Change struct {
	Op     Op
	Path   string
	Old    []byte
	New    []byte
	header []byte
}

// written is the file the change writes: the fleet's identity line, then
// New.
func (c Change) written() []byte {
	if len(c.header) == 0 || c.New == nil {
		return c.New
	}
	out := make([]byte, 0, len(c.header)+len(c.New))
	return append(append(out, c.header...), c.New...)
}

// Diff is the unified diff of the change, with the paths a/<path> and
// b/<path> (/dev/null for the missing side), as git shows it.
func (c Change) Diff() string {
	oldName, newName := "a/"+c.Path, "b/"+c.Path
	switch c.Op {
	case Added:
		oldName = DevNull
	case Removed:
		newName = DevNull
	}
	return UnifiedDiff(oldName, newName, c.Old, c.written())
}

// Changes are the files a run changes, or would change, sorted by path.
type Changes []Change

// Paths lists the paths with the given operation, in order.
func (cs Changes) Paths(op Op) []string {
	var out []string
	for _, c := range cs {
		if c.Op == op {
			out = append(out, c.Path)
		}
	}
	return out
}

// WriteDiff writes the unified diff of every change, one after the other,
// in path order: the readable form of an out-of-date fleet folder.
func (cs Changes) WriteDiff(w io.Writer) error {
	for _, c := range cs {
		if _, err := io.WriteString(w, c.Diff()); err != nil {
			return fmt.Errorf("failed to write diff: %w", err)
		}
	}
	return nil
}

// Reader is shown the documents of both versions of every file that changes
// (the committed one, old, and the one the run writes), as the writer parses
// them anyway to tell its own files from foreign ones, so that a report can
// read what changes without parsing it again. It is called only for files
// the writer recognises as its own, never for unchanged files, and
// concurrently: it must be safe for that. It must not modify the documents.
type Reader func(path string, old bool, docs []*yaml.Node)

// DirOptions say what WriteDir does besides writing.
type DirOptions struct {
	// Check compares dir with files and writes nothing: WriteDir returns
	// what it would change. Files computeplane-fn did not write are
	// ignored, unless one sits where a file of files must go, which is an
	// error (a write would refuse it too). A missing dir counts as empty.
	Check bool
	// Read, when not nil, is shown the documents of the files that change,
	// before anything is written.
	Read Reader
	// Fleet is the identity of the fleet that writes the folder (see
	// FleetHeader); empty for a writer that neither stamps nor reads
	// identities, for which every managed file is its own.
	Fleet string
	// Gone, when not nil, reports whether the config another fleet's
	// identity names is gone (the config, or the folder, was moved): such
	// a fleet's files are taken as files without an identity.
	Gone func(fleet string) bool
	// Places, when not nil, reports whether the layout ever writes a file
	// at a path: only there is a file of the fleet pruned, or a file
	// without an identity adopted. nil is everywhere.
	Places func(path string) bool
	// AllowPrune lets a write remove more than MaxPruneShare of the fleet's
	// files in the folder (and more than PruneHandful); without it such a
	// write is refused with a *PruneError and the folder left as it was.
	// A check never needs it: it removes nothing.
	AllowPrune bool
}

// WriteDir makes dir hold files, the complete desired content of the
// generated part of dir: it writes the files that are missing or differ and
// removes the files computeplane-fn wrote before (see IsManaged) that files
// no longer holds, then the folders that pruning left empty. It never
// touches any other file, nor anything whose name starts with a dot, and
// refuses a symbolic link where a file or folder of its own goes; every
// look and change goes through an os.Root of dir, so none leaves it, even
// through a link swapped in during the run. It returns what it changed;
// when nothing differs it writes nothing at all. With opts.Check it only
// compares.
//
// The change is all or nothing as far as the process can ensure it: files
// are checked and dir is scanned first, everything new is written to a
// staging folder inside dir (a dot folder, which the writer never takes for
// its own), and only then moved into place, with each replaced or removed
// file kept in the staging folder until the end. A failure at any step
// undoes the steps before it, so that dir is left as it was. What it cannot
// undo is being killed (SIGKILL, a power cut) while files are being moved:
// dir then holds a mix of old and new files and the staging folder the
// previous versions; running again converges, and the fleet folder is in
// Git.
//
// Cancelling ctx before the files are moved into place leaves dir
// untouched; once moving has begun the run goes to the end, since stopping
// half way is what the staging is there to avoid.
func WriteDir(ctx context.Context, dir string, files []File, opts DirOptions) (Changes, error) {
	p, err := plan(dir, files, opts)
	if err != nil {
		return nil, err
	}
	defer p.close()
	if opts.Check || len(p.changes) == 0 {
		return p.changes, nil
	}
	if err := p.checkPrune(opts.AllowPrune, files); err != nil {
		return nil, err
	}
	if err := p.commit(ctx); err != nil {
		return nil, err
	}
	return p.changes, nil
}

// folderPlan is what a run will do to dir, worked out before any change.
type folderPlan struct {
	// dir is the output folder as given, for messages; root confines every
	// look and change to it (nil until the run creates it, when it does
	// not exist yet).
	dir     string
	root    *os.Root
	changes Changes
	// modes of the files to replace, by path, so that a replaced file
	// keeps its permissions.
	modes map[string]fs.FileMode
	// owner tells the fleet's own files from the others'.
	owner owner
	// foreign are the paths of managed files the fleet does not own: of
	// another fleet (the value names it) or, without an identity, outside
	// the layout's places ("").
	foreign map[string]string
	// owned counts the files of the fleet the folder holds.
	owned int
}

// entryKind is what the scan found at a path of dir.
type entryKind byte

const (
	kindDir entryKind = iota + 1
	kindFile
	kindLink
	kindSpecial
)

func (k entryKind) String() string {
	switch k {
	case kindDir:
		return "a folder"
	case kindFile:
		return "a file"
	case kindLink:
		return "a symbolic link"
	}
	return "a special file"
}

func plan(dir string, files []File, opts DirOptions) (*folderPlan, error) {
	if dir == "" {
		return nil, errors.New("no output folder given")
	}
	read := opts.Read
	want, err := checkFiles(files)
	if err != nil {
		return nil, err
	}
	p := &folderPlan{dir: dir, modes: map[string]fs.FileMode{}, owner: newOwner(opts), foreign: map[string]string{}}
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Nothing to scan: every file is added.
	case err != nil:
		return nil, fmt.Errorf("failed to read output folder %s: %w", dir, err)
	case !info.IsDir():
		return nil, fmt.Errorf("output folder %s is not a folder", dir)
	default:
		// dir itself may be a link (to a checkout elsewhere); nothing below
		// it is reached but through its os.Root.
		if p.root, err = os.OpenRoot(dir); err != nil {
			return nil, fmt.Errorf("failed to open output folder %s: %w", dir, err)
		}
	}
	kinds := map[string]entryKind{}
	if p.root != nil {
		if err := p.scan(want, kinds, read); err != nil {
			p.close()
			return nil, err
		}
	}
	var conflicts []string
	for _, f := range files {
		if _, found := p.modes[f.Path]; found {
			continue // an existing file of ours, compared by scan
		}
		if k, ok := kinds[f.Path]; ok {
			if fleet, managed := p.foreign[f.Path]; managed && fleet != "" {
				conflicts = append(conflicts, fmt.Sprintf("%s: written by another fleet (%s%s), but a file of this fleet (%s) goes there; two fleets must not share a file", f.Path, FleetHeaderPrefix, fleet, p.owner.fleet))
			} else if k == kindFile {
				conflicts = append(conflicts, fmt.Sprintf("%s: not written by computeplane-fn (not every document carries the label app.kubernetes.io/managed-by: computeplane-fn), but a generated file goes there; move it away or delete it", f.Path))
			} else {
				conflicts = append(conflicts, fmt.Sprintf("%s: is %s, but a generated file goes there; move it away", f.Path, k))
			}
			continue
		}
		for parent := path.Dir(f.Path); parent != "."; parent = path.Dir(parent) {
			if k, ok := kinds[parent]; ok && k != kindDir {
				conflicts = append(conflicts, fmt.Sprintf("%s: is %s, but generated files go into a folder of that name (%s); computeplane-fn never writes through links", parent, k, f.Path))
				break
			}
		}
		p.changes = append(p.changes, Change{Op: Added, Path: f.Path, New: f.Data, header: p.owner.header})
	}
	if len(conflicts) > 0 {
		p.close()
		slices.Sort(conflicts)
		conflicts = slices.Compact(conflicts)
		return nil, fmt.Errorf("refusing to write output folder %s:\n  %s", dir, strings.Join(capLines(conflicts, 20), "\n  "))
	}
	slices.SortFunc(p.changes, func(a, b Change) int { return cmp.Compare(a.Path, b.Path) })
	if err := checkManaged(p.changes, read); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// close closes the plan's root, when there is one.
func (p *folderPlan) close() {
	if p.root != nil {
		p.root.Close()
	}
}

// checkManaged refuses to write a file that a later run could not tell from
// a foreign one (see IsManaged), which it could then never prune. Only the
// files to add or change are parsed, in parallel: an unchanged file is
// byte-identical to what is on disk already, and parsing 100,000 files on
// every run would be most of the cost of an up-to-date check.
func checkManaged(changes Changes, read Reader) error {
	var todo []int
	for i, c := range changes {
		if c.Op != Removed {
			todo = append(todo, i)
		}
	}
	bad := make([]bool, len(todo))
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := w; j < len(todo); j += workers {
				c := changes[todo[j]]
				docs, managed := managedDocuments(c.New, read != nil)
				bad[j] = !managed
				if managed && read != nil {
					read(c.Path, false, docs)
				}
			}
		})
	}
	wg.Wait()
	var problems []string
	for j, b := range bad {
		if b {
			problems = append(problems, fmt.Sprintf("%s: not every document carries the label app.kubernetes.io/managed-by: computeplane-fn, so a later run could not tell it from a foreign file", changes[todo[j]].Path))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("refusing to write the fleet folder:\n  %s", strings.Join(capLines(problems, 20), "\n  "))
	}
	return nil
}

// checkFiles refuses file lists that could leave the folder or clash with
// themselves. Whether the files are recognisably generated is checked later,
// only for the files a run writes (see checkManaged).
func checkFiles(files []File) (map[string][]byte, error) {
	want := make(map[string][]byte, len(files))
	var problems []string
	for _, f := range files {
		if err := checkPath(f.Path); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if _, dup := want[f.Path]; dup {
			problems = append(problems, fmt.Sprintf("%s: given twice", f.Path))
			continue
		}
		want[f.Path] = f.Data
	}
	for p := range want {
		// Only clean relative paths get here, so Dir ends in ".".
		for parent := path.Dir(p); parent != "."; parent = path.Dir(parent) {
			if _, clash := want[parent]; clash {
				problems = append(problems, fmt.Sprintf("%s: is a file and the folder of %s", parent, p))
				break
			}
		}
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return nil, fmt.Errorf("refusing to write the fleet folder:\n  %s", strings.Join(capLines(problems, 20), "\n  "))
	}
	return want, nil
}

// checkPath accepts only a clean, relative, slash-separated path of YAML
// file inside the folder: no "..", no absolute path, no empty or dot-named
// segment (dot entries are never the writer's), no backslash or NUL.
func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("an empty path")
	case strings.ContainsAny(p, "\\\x00"):
		return fmt.Errorf("%q: a backslash or NUL in a path", p)
	case path.IsAbs(p) || filepath.IsAbs(p) || !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p:
		return fmt.Errorf("%q: not a clean path inside the output folder", p)
	case !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml"):
		return fmt.Errorf("%q: not a .yaml or .yml file", p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || strings.HasPrefix(seg, ".") {
			return fmt.Errorf("%q: a segment that is empty or starts with a dot", p)
		}
	}
	return nil
}

// scan walks dir without following links, records what every non-dot entry
// is, compares the files that files holds and collects the stale ones.
func (p *folderPlan) scan(want map[string][]byte, kinds map[string]entryKind, read Reader) error {
	return fs.WalkDir(p.root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("failed to scan output folder: %w", err)
		}
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			// .git, .github, editor files, a staging folder: never ours.
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			kinds[rel] = kindDir
			return nil
		case t&fs.ModeSymlink != 0:
			kinds[rel] = kindLink
			return nil
		case !t.IsRegular():
			kinds[rel] = kindSpecial
			return nil
		}
		kinds[rel] = kindFile
		newData, generated := want[rel]
		if !generated && !isYAMLName(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("failed to scan output folder: %w", err)
		}
		if info.Size() > MaxManagedFileBytes {
			return nil // foreign by size; a conflict if a generated file goes there
		}
		old, err := p.root.ReadFile(rel)
		if err != nil {
			return fmt.Errorf("failed to read %s: %w", rel, err)
		}
		if generated && p.owner.stamped(old, newData) {
			p.modes[rel] = info.Mode().Perm()
			p.owned++
			return nil
		}
		docs, mine, fleet, managed := p.owner.owns(rel, old, generated, read != nil)
		switch {
		case !managed:
			return nil
		case !mine:
			p.foreign[rel] = fleet
			return nil
		}
		if read != nil {
			read(rel, true, docs)
		}
		p.modes[rel] = info.Mode().Perm()
		p.owned++
		if generated {
			p.changes = append(p.changes, Change{Op: Changed, Path: rel, Old: old, New: newData, header: p.owner.header})
		} else {
			p.changes = append(p.changes, Change{Op: Removed, Path: rel, Old: old})
		}
		return nil
	})
}

func isYAMLName(p string) bool {
	return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")
}

func capLines(lines []string, n int) []string {
	if len(lines) <= n {
		return lines
	}
	return append(slices.Clip(lines[:n]), fmt.Sprintf("... and %d more", len(lines)-n))
}
