package output

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// fileSystem is every change the writer makes to the disk, each inside one
// os.Root (names are slash-separated and relative to it, and no change
// leaves it, whatever links a path meets), so that a test can make any one
// of them fail and check that the run is undone.
type fileSystem interface {
	WriteFile(name string, data []byte, perm fs.FileMode) error
	Mkdir(name string, perm fs.FileMode) error
	Rename(oldpath, newpath string) error
	Link(oldname, newname string) error
	Remove(name string) error
	RemoveAll(name string) error
	Chmod(name string, mode fs.FileMode) error
}

// rootFileSystem changes the files of an os.Root: its methods but WriteFile
// are the root's own.
type rootFileSystem struct{ *os.Root }

// WriteFile creates name, which must not exist, with data and exactly perm.
func (r rootFileSystem) WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil { // the umask may have narrowed it
		f.Close()
		return err
	}
	return f.Close()
}

// onDisk is the file system of a root that the writer changes; tests swap
// it.
var onDisk = func(root *os.Root) fileSystem { return rootFileSystem{root} }

// Permissions of what the writer creates (before the umask for folders).
const (
	newFileMode   fs.FileMode = 0o644
	newFolderMode fs.FileMode = 0o755
)

// undo is one step of the journal: how to take back a change.
type undo struct {
	what string
	do   func() error
}

// transaction applies a plan step by step and keeps a journal to undo it.
type transaction struct {
	plan *folderPlan
	// disk changes the output folder; stage is the staging folder inside
	// it (a dot folder, which the writer never takes for its own).
	disk    fileSystem
	stage   string
	journal []undo
	// undoFailed is set once a step could not be undone; the staging
	// folder is then kept, since it holds what could not be put back.
	undoFailed bool
}

func (t *transaction) record(what string, do func() error) {
	t.journal = append(t.journal, undo{what, do})
}

// rollback undoes the journal, newest first, and reports what it could not
// undo.
func (t *transaction) rollback() error {
	var failed []string
	for i := len(t.journal) - 1; i >= 0; i-- {
		if err := t.journal[i].do(); err != nil {
			t.undoFailed = true
			failed = append(failed, fmt.Sprintf("%s: %v", t.journal[i].what, err))
		}
	}
	t.journal = nil
	if len(failed) > 0 {
		return fmt.Errorf("failed to undo %d steps (the previous versions of the files are in %s):\n  %s",
			len(failed), filepath.Join(t.plan.dir, t.stage), strings.Join(capLines(failed, 20), "\n  "))
	}
	return nil
}

func (p *folderPlan) commit(ctx context.Context) (err error) {
	t := &transaction{plan: p}
	var ancestor *os.Root // where the output folder is created, when it is
	defer func() {
		if err != nil {
			if rerr := t.rollback(); rerr != nil {
				err = fmt.Errorf("%w; %w", err, rerr)
			}
		}
		if ancestor != nil {
			ancestor.Close()
		}
	}()
	if p.root == nil {
		if ancestor, err = t.createFolder(); err != nil {
			return err
		}
	}
	t.disk = onDisk(p.root)
	if err := t.makeStage(); err != nil {
		return err
	}
	// Stage every new file, so that a failure to write (a full disk, a
	// cancelled run) happens before dir is touched.
	staged := make([]string, len(p.changes))
	for i, c := range p.changes {
		if c.Op == Removed {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped before writing the output folder: %w", err)
		}
		staged[i] = path.Join(t.stage, "new", strconv.Itoa(i))
		mode, ok := p.modes[c.Path]
		if !ok {
			mode = newFileMode
		}
		if err := t.disk.WriteFile(staged[i], c.written(), mode); err != nil {
			return fmt.Errorf("failed to stage %s: %w", c.Path, err)
		}
	}
	// From here on the run does not stop for a cancelled context: it moves
	// the staged files into place and prunes, or undoes all of it.
	for i, c := range p.changes {
		switch c.Op {
		case Added:
			if err := t.mkdirAll(path.Dir(c.Path)); err != nil {
				return err
			}
			if err := t.install(staged[i], c.Path); err != nil {
				return err
			}
		case Changed:
			if err := t.backup(c.Path, i, true); err != nil {
				return err
			}
			if err := t.install(staged[i], c.Path); err != nil {
				return err
			}
		case Removed:
			if err := t.backup(c.Path, i, false); err != nil {
				return err
			}
		}
	}
	if err := t.removeEmptied(); err != nil {
		return err
	}
	// Done: the journal is not needed any more.
	t.journal = nil
	if err := t.disk.RemoveAll(t.stage); err != nil {
		return fmt.Errorf("wrote the output folder, but failed to remove the staging folder %s: %w", filepath.Join(p.dir, t.stage), err)
	}
	return nil
}

// createFolder creates the output folder and its missing parents inside an
// os.Root of the nearest folder that exists (returned, to be closed when
// the run is over, since the journal removes them through it), and opens
// the plan's root.
func (t *transaction) createFolder() (*os.Root, error) {
	dir := t.plan.dir
	var missing []string
	base := dir
	for {
		info, err := os.Lstat(base)
		if err == nil {
			if !info.IsDir() && info.Mode()&fs.ModeSymlink == 0 {
				return nil, fmt.Errorf("failed to create folder %s: %s is not a folder", dir, base)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("failed to create folder %s: %w", dir, err)
		}
		missing = append(missing, filepath.Base(base))
		if filepath.Dir(base) == base {
			return nil, fmt.Errorf("failed to create folder %s: no folder of its path exists", dir)
		}
		base = filepath.Dir(base)
	}
	ancestor, err := os.OpenRoot(base)
	if err != nil {
		return nil, fmt.Errorf("failed to create folder %s: %w", dir, err)
	}
	disk := onDisk(ancestor)
	rel := "."
	for i := len(missing) - 1; i >= 0; i-- {
		rel = path.Join(rel, missing[i])
		d := rel
		if err := disk.Mkdir(d, newFolderMode); err != nil {
			return ancestor, fmt.Errorf("failed to create folder %s: %w", filepath.Join(base, d), err)
		}
		t.record("remove folder "+filepath.Join(base, d), func() error { return disk.Remove(d) })
	}
	root, err := ancestor.OpenRoot(rel)
	if err != nil {
		return ancestor, fmt.Errorf("failed to open output folder %s: %w", dir, err)
	}
	t.plan.root = root
	return ancestor, nil
}

// makeStage creates the staging folder, a dot folder inside dir (which the
// writer never takes for its own), so that moving files from it is a
// rename inside the folder's os.Root.
func (t *transaction) makeStage() error {
	var err error
	for range 100 {
		t.stage = ".computeplane-fn-" + rand.Text()[:10]
		if err = t.disk.Mkdir(t.stage, 0o700); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("failed to create a staging folder: %w", err)
	}
	stage := t.stage
	// Undone after everything staged in it has been put back, and before
	// dir itself is removed when the run created it.
	t.record("remove staging folder "+stage, func() error {
		if t.undoFailed {
			return nil
		}
		return t.disk.RemoveAll(stage)
	})
	for _, sub := range []string{"new", "old"} {
		if err := t.disk.Mkdir(path.Join(stage, sub), 0o700); err != nil {
			return fmt.Errorf("failed to create a staging folder: %w", err)
		}
	}
	return nil
}

// mkdirAll creates the folder dir of the output folder and its missing
// parents, journaling each one.
func (t *transaction) mkdirAll(dir string) error {
	var missing []string
	for d := dir; d != "."; d = path.Dir(d) {
		info, err := t.plan.root.Lstat(d)
		if err == nil {
			if !info.IsDir() {
				return fmt.Errorf("failed to create folder %s: %s is not a folder", dir, d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("failed to create folder %s: %w", dir, err)
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := t.disk.Mkdir(d, newFolderMode); err != nil {
			return fmt.Errorf("failed to create folder %s: %w", d, err)
		}
		t.record("remove folder "+d, func() error { return t.disk.Remove(d) })
	}
	return nil
}

// install moves a staged file to target.
func (t *transaction) install(staged, target string) error {
	if err := t.disk.Rename(staged, target); err != nil {
		return fmt.Errorf("failed to write %s: %w", target, err)
	}
	t.record("remove "+target, func() error { return t.disk.Remove(target) })
	return nil
}

// backup keeps the current version of target in the staging folder. For a
// file about to be replaced it links it there, so that target never goes
// missing (the rename of the new version over it is atomic); where links
// are not supported, and for a file to be removed, it moves it.
func (t *transaction) backup(target string, i int, replace bool) error {
	saved := path.Join(t.stage, "old", strconv.Itoa(i))
	if replace {
		if err := t.disk.Link(target, saved); err == nil {
			t.record("restore "+target, func() error { return t.disk.Rename(saved, target) })
			return nil
		}
	}
	if err := t.disk.Rename(target, saved); err != nil {
		return fmt.Errorf("failed to move %s aside: %w", target, err)
	}
	t.record("restore "+target, func() error { return t.disk.Rename(saved, target) })
	return nil
}

// removeEmptied removes the folders that became empty because files were
// pruned from them, deepest first, never dir itself nor a folder that was
// empty before or still holds anything (a dot file included).
func (t *transaction) removeEmptied() error {
	candidates := map[string]bool{}
	for _, c := range t.plan.changes {
		if c.Op != Removed {
			continue
		}
		for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
			candidates[d] = true
		}
	}
	dirs := make([]string, 0, len(candidates))
	for d := range candidates {
		dirs = append(dirs, d)
	}
	// Deepest first, so that a parent is looked at after its children.
	slices.SortFunc(dirs, func(a, b string) int {
		if n := strings.Count(b, "/") - strings.Count(a, "/"); n != 0 {
			return n
		}
		return strings.Compare(a, b)
	})
	for _, rel := range dirs {
		entries, err := fs.ReadDir(t.plan.root.FS(), rel)
		if err != nil {
			return fmt.Errorf("failed to read folder %s: %w", rel, err)
		}
		if len(entries) > 0 {
			continue
		}
		info, err := t.plan.root.Lstat(rel)
		if err != nil {
			return fmt.Errorf("failed to read folder %s: %w", rel, err)
		}
		if err := t.disk.Remove(rel); err != nil {
			return fmt.Errorf("failed to remove emptied folder %s: %w", rel, err)
		}
		mode := info.Mode().Perm()
		t.record("recreate folder "+rel, func() error {
			if err := t.disk.Mkdir(rel, mode); err != nil {
				return err
			}
			return t.disk.Chmod(rel, mode) // the umask may have narrowed it
		})
	}
	return nil
}
