package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"
)

// ErrInjected is the failure FailAt injects.
var ErrInjected = errors.New("injected failure")

// FailAt makes the n-th change the writer makes to the disk (1-based,
// counting every write, folder creation, rename, link and removal, undo
// steps included) fail, for the rest of the test. The returned function
// tells how many changes were attempted so far.
func FailAt(t testing.TB, n int) func() int {
	c := &faultCounter{failAt: n}
	prev := onDisk
	onDisk = func(root *os.Root) fileSystem { return &faultyFileSystem{prev(root), c} }
	t.Cleanup(func() { onDisk = prev })
	return func() int { return c.calls }
}

// faultCounter counts the changes of every root a run changes.
type faultCounter struct{ calls, failAt int }

type faultyFileSystem struct {
	fileSystem
	*faultCounter
}

func (f *faultyFileSystem) step(op, name string) error {
	f.calls++
	if f.calls == f.failAt {
		return fmt.Errorf("%s %s: %w", op, name, ErrInjected)
	}
	return nil
}

func (f *faultyFileSystem) WriteFile(name string, data []byte, perm fs.FileMode) error {
	if err := f.step("write", name); err != nil {
		return err
	}
	return f.fileSystem.WriteFile(name, data, perm)
}

func (f *faultyFileSystem) Mkdir(name string, perm fs.FileMode) error {
	if err := f.step("mkdir", name); err != nil {
		return err
	}
	return f.fileSystem.Mkdir(name, perm)
}

func (f *faultyFileSystem) Rename(oldpath, newpath string) error {
	if err := f.step("rename", oldpath); err != nil {
		return err
	}
	return f.fileSystem.Rename(oldpath, newpath)
}

func (f *faultyFileSystem) Link(oldname, newname string) error {
	if err := f.step("link", oldname); err != nil {
		return err
	}
	return f.fileSystem.Link(oldname, newname)
}

func (f *faultyFileSystem) Remove(name string) error {
	if err := f.step("remove", name); err != nil {
		return err
	}
	return f.fileSystem.Remove(name)
}

func (f *faultyFileSystem) RemoveAll(name string) error {
	if err := f.step("removeall", name); err != nil {
		return err
	}
	return f.fileSystem.RemoveAll(name)
}
