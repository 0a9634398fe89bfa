package output

import (
	"context"
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

// fileSystem is every change the writer makes to the disk, so that a test
// can make any one of them fail and check that the run is undone.
type fileSystem interface {
	WriteFile(name string, data []byte, perm fs.FileMode) error
	Mkdir(name string, perm fs.FileMode) error
	MkdirTemp(dir, pattern string) (string, error)
	Rename(oldpath, newpath string) error
	Link(oldname, newname string) error
	Remove(name string) error
	RemoveAll(name string) error
}

type osFileSystem struct{}

func (osFileSystem) WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
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
func (osFileSystem) Mkdir(name string, perm fs.FileMode) error { return os.Mkdir(name, perm) }
func (osFileSystem) MkdirTemp(dir, pattern string) (string, error) {
	return os.MkdirTemp(dir, pattern)
}
func (osFileSystem) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }
func (osFileSystem) Link(oldname, newname string) error   { return os.Link(oldname, newname) }
func (osFileSystem) Remove(name string) error             { return os.Remove(name) }
func (osFileSystem) RemoveAll(name string) error          { return os.RemoveAll(name) }

// disk is the file system the writer changes; tests swap it.
var disk fileSystem = osFileSystem{}

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
	plan    *folderPlan
	stage   string // the staging folder
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
			len(failed), t.stage, strings.Join(capLines(failed, 20), "\n  "))
	}
	return nil
}

func (p *folderPlan) commit(ctx context.Context) (err error) {
	t := &transaction{plan: p}
	defer func() {
		if err == nil {
			return
		}
		if rerr := t.rollback(); rerr != nil {
			err = fmt.Errorf("%w; %w", err, rerr)
		}
	}()
	if !p.exists {
		if err := t.mkdirAll(p.root); err != nil {
			return err
		}
	}
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
		staged[i] = filepath.Join(t.stage, "new", strconv.Itoa(i))
		mode, ok := p.modes[c.Path]
		if !ok {
			mode = newFileMode
		}
		if err := disk.WriteFile(staged[i], c.New, mode); err != nil {
			return fmt.Errorf("failed to stage %s: %w", c.Path, err)
		}
	}
	// From here on the run does not stop for a cancelled context: it moves
	// the staged files into place and prunes, or undoes all of it.
	for i, c := range p.changes {
		target := filepath.Join(p.root, filepath.FromSlash(c.Path))
		switch c.Op {
		case Added:
			if err := t.mkdirAll(filepath.Dir(target)); err != nil {
				return err
			}
			if err := t.install(staged[i], target, c.Path); err != nil {
				return err
			}
		case Changed:
			if err := t.backup(target, c.Path, i, true); err != nil {
				return err
			}
			if err := t.install(staged[i], target, c.Path); err != nil {
				return err
			}
		case Removed:
			if err := t.backup(target, c.Path, i, false); err != nil {
				return err
			}
		}
	}
	if err := t.removeEmptied(); err != nil {
		return err
	}
	// Done: the journal is not needed any more.
	t.journal = nil
	if err := disk.RemoveAll(t.stage); err != nil {
		return fmt.Errorf("wrote the output folder, but failed to remove the staging folder %s: %w", t.stage, err)
	}
	return nil
}

// makeStage creates the staging folder next to dir, so that moving files
// from it is a rename on one file system, or inside dir as a dot folder
// (which the writer never treats as its own) when that is not possible.
func (t *transaction) makeStage() error {
	parent, base := filepath.Dir(t.plan.root), filepath.Base(t.plan.root)
	stage, err := disk.MkdirTemp(parent, "."+base+".computeplane-fn-")
	if err == nil && !sameFileSystem(stage, t.plan.root) {
		_ = disk.RemoveAll(stage)
		err = errors.New("another file system")
	}
	if err != nil {
		stage, err = disk.MkdirTemp(t.plan.root, ".computeplane-fn-")
		if err != nil {
			return fmt.Errorf("failed to create a staging folder: %w", err)
		}
	}
	t.stage = stage
	// Undone after everything staged in it has been put back, and before
	// dir itself is removed when the run created it (the staging folder may
	// be inside it).
	t.record("remove staging folder "+stage, func() error {
		if t.undoFailed {
			return nil
		}
		return disk.RemoveAll(stage)
	})
	for _, sub := range []string{"new", "old"} {
		if err := disk.Mkdir(filepath.Join(stage, sub), 0o700); err != nil {
			return fmt.Errorf("failed to create a staging folder: %w", err)
		}
	}
	return nil
}

// mkdirAll creates dir and its missing parents, journaling each one.
func (t *transaction) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		info, err := os.Lstat(d)
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
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := disk.Mkdir(d, newFolderMode); err != nil {
			return fmt.Errorf("failed to create folder %s: %w", d, err)
		}
		t.record("remove folder "+d, func() error { return disk.Remove(d) })
	}
	return nil
}

// install moves a staged file to target.
func (t *transaction) install(staged, target, rel string) error {
	if err := disk.Rename(staged, target); err != nil {
		return fmt.Errorf("failed to write %s: %w", rel, err)
	}
	t.record("remove "+rel, func() error { return disk.Remove(target) })
	return nil
}

// backup keeps the current version of target in the staging folder. For a
// file about to be replaced it links it there, so that target never goes
// missing (the rename of the new version over it is atomic); where links
// are not supported, and for a file to be removed, it moves it.
func (t *transaction) backup(target, rel string, i int, replace bool) error {
	saved := filepath.Join(t.stage, "old", strconv.Itoa(i))
	if replace {
		if err := disk.Link(target, saved); err == nil {
			t.record("restore "+rel, func() error { return disk.Rename(saved, target) })
			return nil
		}
	}
	if err := disk.Rename(target, saved); err != nil {
		return fmt.Errorf("failed to move %s aside: %w", rel, err)
	}
	t.record("restore "+rel, func() error { return disk.Rename(saved, target) })
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
		full := filepath.Join(t.plan.root, filepath.FromSlash(rel))
		entries, err := os.ReadDir(full)
		if err != nil {
			return fmt.Errorf("failed to read folder %s: %w", rel, err)
		}
		if len(entries) > 0 {
			continue
		}
		info, err := os.Lstat(full)
		if err != nil {
			return fmt.Errorf("failed to read folder %s: %w", rel, err)
		}
		if err := disk.Remove(full); err != nil {
			return fmt.Errorf("failed to remove emptied folder %s: %w", rel, err)
		}
		mode := info.Mode().Perm()
		t.record("recreate folder "+rel, func() error {
			if err := disk.Mkdir(full, mode); err != nil {
				return err
			}
			return os.Chmod(full, mode) // the umask may have narrowed it
		})
	}
	return nil
}
