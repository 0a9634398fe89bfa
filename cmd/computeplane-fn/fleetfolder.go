package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/gitrev"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
)

// outputOverlap says why dir cannot be the fleet folder of the config in
// configFile and the command line's inputs: it holds the config or an input
// (a run would write and prune among them), or it is inside an input
// folder (the next run would read the fleet it wrote as its inputs). ""
// when neither. spec.inputs are relative to the config's folder, the
// command line's inputs to the working directory, as the run reads them;
// patterns that name nothing are the run's to report.
func outputOverlap(dir, configFile string, cfg *api.Config, inputs []string) string {
	out := realPath(dir)
	if within(out, realPath(configFile)) {
		return fmt.Sprintf("--output-dir %s holds the config %s: a fleet folder holds the fleet's output alone (name a folder of its own, such as rendered/ beside the config)", dir, configFile)
	}
	configDir := filepath.Dir(configFile)
	check := func(pattern, base string) string {
		full := pattern
		if !filepath.IsAbs(full) {
			full = filepath.Join(base, pattern)
		}
		matches := []string{full}
		if strings.ContainsAny(pattern, "*?[") {
			matches, _ = filepath.Glob(full)
		}
		for _, m := range matches {
			in := realPath(m)
			if within(out, in) {
				if _, err := os.Stat(m); err == nil {
					return fmt.Sprintf("--output-dir %s holds the input %s: a fleet folder holds the fleet's output alone (name a folder of its own, such as rendered/ beside the config)", dir, pattern)
				}
				continue
			}
			if info, err := os.Stat(m); err == nil && info.IsDir() && within(in, out) {
				return fmt.Sprintf("--output-dir %s is inside the input %s: the next run would read the fleet it wrote as its inputs", dir, pattern)
			}
		}
		return ""
	}
	for _, in := range cfg.Inputs {
		if msg := check(in, configDir); msg != "" {
			return msg
		}
	}
	for _, in := range inputs {
		if msg := check(in, "."); msg != "" {
			return msg
		}
	}
	return ""
}

// within reports whether the path child is parent or below it; both are
// absolute and clean.
func within(parent, child string) bool {
	rel, err := filepath.Rel(parent, child)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath is p made absolute with the links of the part of its path that
// exists resolved, so that two spellings of one place compare equal.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	var missing []string
	for at := abs; ; at = filepath.Dir(at) {
		if real, err := filepath.EvalSymlinks(at); err == nil {
			return filepath.Join(append([]string{real}, missing...)...)
		}
		if filepath.Dir(at) == at {
			return abs
		}
		missing = append([]string{filepath.Base(at)}, missing...)
	}
}

// fleetIdentity is the identity the folder writer stamps on every file of
// the fleet (output.FleetHeader): the path of the config file relative to
// the fleet folder, slash-separated ("../config.yaml" for a config beside
// rendered/). It names the config wherever the command runs from, and stays
// the same when the repository is cloned elsewhere or the two are moved
// together; two configs writing into one folder never share it.
func fleetIdentity(dir, configFile string) string {
	rel, err := filepath.Rel(realPath(dir), realPath(configFile))
	if err != nil {
		return filepath.ToSlash(configFile)
	}
	return filepath.ToSlash(rel)
}

// configGone reports, for the identity of another fleet in the folder dir,
// whether the config it names is no file any more (it, or the folder, was
// moved or deleted): the folder writer then adopts that fleet's files like
// those written before identities, where the layout writes.
func configGone(dir string) func(fleet string) bool {
	return func(fleet string) bool {
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(fleet)))
		return errors.Is(err, fs.ErrNotExist)
	}
}

// readBase reads the files of the fleet folder dir as the Git revision rev
// of its repository holds them, and returns them with the commit rev names.
// Only what the folder writer could take for its own is read: YAML files
// not larger than output.MaxManagedFileBytes, outside dot folders. A
// revision that holds no such folder gives no files: every posture is new.
func readBase(dir, rev string) ([]output.File, string, error) {
	folder, err := gitrev.Open(dir, rev)
	if err != nil {
		return nil, "", fmt.Errorf("--base %s: %w", rev, err)
	}
	files, err := folder.Files(func(p string, size int64) bool {
		if size > output.MaxManagedFileBytes || (path.Ext(p) != ".yaml" && path.Ext(p) != ".yml") {
			return false
		}
		for seg := range strings.SplitSeq(p, "/") {
			if strings.HasPrefix(seg, ".") {
				return false
			}
		}
		return true
	})
	if err != nil {
		return nil, "", fmt.Errorf("--base %s: %w", rev, err)
	}
	out := make([]output.File, len(files))
	for i, f := range files {
		out[i] = output.File{Path: f.Path, Data: f.Data}
	}
	return out, folder.Commit, nil
}

func countBaseChanges(cs output.Changes) string {
	if len(cs) == 0 {
		return "changes no file"
	}
	return fmt.Sprintf("adds %d, changes %d and removes %d files", len(cs.Paths(output.Added)), len(cs.Paths(output.Changed)), len(cs.Paths(output.Removed)))
}
