package output

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

// ErrInjected is the failure FailAt injects.
var ErrInjected = errors.New("injected failure")

// FailAt makes the n-th change the writer makes to the disk (1-based,
// counting every write, folder creation, rename, link and removal, undo
// steps included) fail, for the rest of the test. The returned function
// tells how many changes were attempted so far.
func FailAt(t testing.TB, n int) func() int {
	f := &faultyFileSystem{failAt: n}
	prev := disk
	disk = f
	t.Cleanup(func() { disk = prev })
	return func() int { return f.calls }
}

type faultyFileSystem struct {
	osFileSystem
	calls, failAt int
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
	return f.osFileSystem.WriteFile(name, data, perm)
}

func (f *faultyFileSystem) Mkdir(name string, perm fs.FileMode) error {
	if err := f.step("mkdir", name); err != nil {
		return err
	}
	return f.osFileSystem.Mkdir(name, perm)
}

func (f *faultyFileSystem) MkdirTemp(dir, pattern string) (string, error) {
	if err := f.step("mkdirtemp", dir); err != nil {
		return "", err
	}
	return f.osFileSystem.MkdirTemp(dir, pattern)
}

func (f *faultyFileSystem) Rename(oldpath, newpath string) error {
	if err := f.step("rename", oldpath); err != nil {
		return err
	}
	return f.osFileSystem.Rename(oldpath, newpath)
}

func (f *faultyFileSystem) Link(oldname, newname string) error {
	if err := f.step("link", oldname); err != nil {
		return err
	}
	return f.osFileSystem.Link(oldname, newname)
}

func (f *faultyFileSystem) Remove(name string) error {
	if err := f.step("remove", name); err != nil {
		return err
	}
	return f.osFileSystem.Remove(name)
}

func (f *faultyFileSystem) RemoveAll(name string) error {
	if err := f.step("removeall", name); err != nil {
		return err
	}
	return f.osFileSystem.RemoveAll(name)
}
