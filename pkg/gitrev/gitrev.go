package gitrev

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// File is one file of a folder at a revision: its slash path relative to
// the folder, and its bytes.
type File struct {
	Path string
	Data []byte
}

// Folder is a folder of a Git repository at a revision.
type Folder struct {
	// Repo is the top of the working tree that holds the folder.
	Repo string
	// Path is the folder's slash path relative to Repo ("" for Repo itself).
	Path string
	// Rev is the revision as given, Commit the commit it names.
	Rev, Commit string
}

// Open finds the repository that holds dir (which need not exist: its
// nearest existing parent is asked) and resolves rev in it to a commit. The
// error says what to do when git is missing, dir is in no repository, or
// rev names no commit there (a shallow clone without it, most often).
func Open(dir, rev string) (*Folder, error) {
	if rev == "" || strings.HasPrefix(rev, "-") {
		return nil, fmt.Errorf("%q is not a Git revision", rev)
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("reading the base %s needs the git command: %w", rev, err)
	}
	existing, missing, err := nearestFolder(dir)
	if err != nil {
		return nil, err
	}
	top, err := git(existing, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("%s is in no Git repository, so the base %s cannot be read from it: %w", dir, rev, err)
	}
	prefix, err := git(existing, nil, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("failed to find %s in its Git repository: %w", dir, err)
	}
	f := &Folder{Repo: strings.TrimSpace(string(top)), Rev: rev}
	f.Path = strings.TrimSuffix(path.Join(strings.TrimSpace(string(prefix)), path.Join(missing...)), "/")
	if f.Path == "." {
		f.Path = ""
	}
	commit, err := git(f.Repo, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		// A remote-tracking branch is fetched by its name on the remote.
		fetch := strings.TrimPrefix(rev, "origin/")
		return nil, fmt.Errorf("%s is not a revision of the Git repository %s (a shallow clone, as actions/checkout makes by default, holds only the commit it checked out: fetch the base first, e.g. git fetch --depth=1 origin %s)", rev, f.Repo, fetch)
	}
	f.Commit = strings.TrimSpace(string(commit))
	return f, nil
}

// nearestFolder returns the nearest folder of dir's path that exists and
// the names below it that do not, outermost first.
func nearestFolder(dir string) (string, []string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("failed to find %s: %w", dir, err)
	}
	var missing []string
	for {
		info, err := os.Stat(abs)
		switch {
		case err == nil && info.IsDir():
			return abs, missing, nil
		case err == nil:
			return "", nil, fmt.Errorf("%s is not a folder", abs)
		case !errors.Is(err, fs.ErrNotExist):
			return "", nil, fmt.Errorf("failed to find %s: %w", dir, err)
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return "", nil, fmt.Errorf("failed to find %s: no folder of its path exists", dir)
		}
		missing = append([]string{filepath.Base(abs)}, missing...)
		abs = parent
	}
}

// Files reads the regular files of the folder at its commit for which keep
// (given the path relative to the folder and the size) is true; links and
// submodules are never read. A folder the commit does not hold has no
// files.
func (f *Folder) Files(keep func(path string, size int64) bool) ([]File, error) {
	args := []string{"ls-tree", "-r", "-z", "-l", "--full-tree", f.Commit}
	if f.Path != "" {
		args = append(args, "--", f.Path+"/")
	}
	out, err := git(f.Repo, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("failed to list %s at %s: %w", f.shown(), f.Rev, err)
	}
	var files []File
	var ids bytes.Buffer
	for entry := range bytes.SplitSeq(out, []byte{0}) {
		if len(entry) == 0 {
			continue
		}
		// <mode> <type> <object> <size>\t<path>
		meta, name, ok := bytes.Cut(entry, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 4 {
			return nil, fmt.Errorf("failed to list %s at %s: git ls-tree wrote %q", f.shown(), f.Rev, entry)
		}
		if fields[1] != "blob" || (fields[0] != "100644" && fields[0] != "100755") {
			continue
		}
		rel := string(name)
		if f.Path != "" {
			var inside bool
			if rel, inside = strings.CutPrefix(rel, f.Path+"/"); !inside {
				continue
			}
		}
		size, err := strconv.ParseInt(fields[3], 10, 64)
		if err != nil || (keep != nil && !keep(rel, size)) {
			continue
		}
		files = append(files, File{Path: rel})
		ids.WriteString(fields[2] + "\n")
	}
	if len(files) == 0 {
		return nil, nil
	}
	if err := f.catFiles(files, &ids); err != nil {
		return nil, err
	}
	return files, nil
}

// catFiles reads the blobs named in ids, one per line, into files, in
// order, with one git cat-file --batch.
func (f *Folder) catFiles(files []File, ids *bytes.Buffer) error {
	fail := func(err error) error { return fmt.Errorf("failed to read %s at %s: %w", f.shown(), f.Rev, err) }
	cmd := exec.Command("git", "-C", f.Repo, "cat-file", "--batch")
	cmd.Stdin = ids
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	r := bufio.NewReader(stdout)
	var readErr error
	for i := range files {
		header, err := r.ReadString('\n')
		if err != nil {
			readErr = err
			break
		}
		// <object> <type> <size>
		fields := strings.Fields(header)
		if len(fields) != 3 || fields[1] != "blob" {
			readErr = fmt.Errorf("git cat-file wrote %q for %s", strings.TrimSpace(header), files[i].Path)
			break
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil {
			readErr = fmt.Errorf("git cat-file wrote %q for %s", strings.TrimSpace(header), files[i].Path)
			break
		}
		data := make([]byte, size+1) // the content, then a newline
		if _, err := io.ReadFull(r, data); err != nil {
			readErr = err
			break
		}
		files[i].Data = data[:size]
	}
	if readErr != nil {
		_ = cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	switch {
	case readErr != nil:
		return fail(withStderr(readErr, &stderr))
	case waitErr != nil:
		return fail(withStderr(waitErr, &stderr))
	}
	return nil
}

func (f *Folder) shown() string {
	if f.Path == "" {
		return "the top of " + f.Repo
	}
	return f.Path
}

// git runs git in dir and returns its stdout; the error carries its stderr.
func git(dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, withStderr(err, &stderr)
	}
	return stdout.Bytes(), nil
}

func withStderr(err error, stderr *bytes.Buffer) error {
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		return fmt.Errorf("%w: %s", err, msg)
	}
	return err
}
