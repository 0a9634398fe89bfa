package output

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// FleetHeaderPrefix starts the first line of every file the folder writer
// writes for a fleet (DirOptions.Fleet): "# computeplane.dev/fleet: <id>",
// where <id> names the fleet. The identity is a YAML comment, not an
// annotation: it is the file's, not the object's, so nothing more is applied
// to a cluster, the objects are those of the stream and of kpt byte for
// byte, and it is read without parsing the file. A file a person edits keeps
// it (editors keep comments); one that lost it counts as written before
// identities (see DirOptions.Places).
const FleetHeaderPrefix = "# computeplane.dev/fleet: "

// FleetHeader is the line that starts every file of fleet.
func FleetHeader(fleet string) string { return FleetHeaderPrefix + fleet + "\n" }

// FleetOf returns the fleet a file names in its first line, and whether it
// names one.
func FleetOf(data []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(FleetHeaderPrefix))
	if !ok {
		return "", false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	fleet := strings.TrimSpace(string(line))
	return fleet, fleet != ""
}

// owner tells the files of one fleet from the rest of a folder.
type owner struct {
	fleet  string
	header []byte
	places func(string) bool
	gone   func(string) bool
}

func newOwner(opts DirOptions) owner {
	o := owner{fleet: opts.Fleet, places: opts.Places, gone: opts.Gone}
	if opts.Fleet != "" {
		o.header = []byte(FleetHeader(opts.Fleet))
	}
	return o
}

// inPlace reports whether the layout ever writes a file at rel.
func (o owner) inPlace(rel string) bool { return o.places == nil || o.places(rel) }

// stamped reports whether old is data stamped as the fleet's, without
// building the stamped file.
func (o owner) stamped(old, data []byte) bool {
	return len(old) == len(o.header)+len(data) && bytes.HasPrefix(old, o.header) && bytes.Equal(old[len(o.header):], data)
}

// owns reads a file of the folder at rel: whether computeplane-fn wrote
// it (managed, see IsManaged), and whether the fleet owns it: it names the
// fleet, or it names none (written before identities) or a fleet whose
// config is gone, and sits in one of the layout's places or where the
// render writes a file (generated). fleet
// is the other fleet a managed file names. docs are the documents of a
// managed file, when keep is set.
func (o owner) owns(rel string, data []byte, generated, keep bool) (docs []*yaml.Node, mine bool, fleet string, managed bool) {
	if len(o.header) > 0 {
		if f, named := FleetOf(data); named && f != o.fleet && (o.gone == nil || !o.gone(f)) {
			// Another fleet's: looked at no further, whatever it holds.
			_, managed = managedDocuments(data, false)
			return nil, false, f, managed
		}
	}
	docs, managed = managedDocuments(data, keep)
	if !managed {
		return nil, false, "", false
	}
	if !generated && !o.inPlace(rel) {
		return nil, false, "", true
	}
	return docs, true, "", true
}

// Prune consent: a write that would remove more than MaxPruneShare of the
// fleet's files in the folder, and more than PruneHandful of them, needs
// DirOptions.AllowPrune. A render that removes most of a fleet is far more
// often a wrong folder, a wrong config or a broken checkout than a meant
// change.
const (
	MaxPruneShare = 0.5
	PruneHandful  = 10
)

// PruneError is the refusal of a write that would remove more of the
// fleet's files than it may without DirOptions.AllowPrune.
type PruneError struct {
	Dir string
	// Removed are the paths that would go, sorted; Owned is how many files
	// of the fleet the folder holds.
	Removed []string
	Owned   int
}

func (e *PruneError) Error() string {
	return e.Message("")
}

// Message is the error's text, with how to consent (a flag) when given.
func (e *PruneError) Message(consent string) string {
	if consent != "" {
		consent = " without " + consent
	}
	return fmt.Sprintf("refusing to remove %d of the %d files of this fleet in %s, more than half of them,%s; the folder was left as it was. The files:\n  %s",
		len(e.Removed), e.Owned, e.Dir, consent, strings.Join(capLines(e.Removed, 20), "\n  "))
}

// checkPrune refuses a write that removes more of the fleet's files than
// it may, counting a file whose every object the render still has, at
// another path, as moved rather than removed: a change of layout (the
// default layout to Flux units, a unit split into parts) moves most files
// of a fleet and removes none of its objects. Only then, past the plain
// count, are the files' objects read.
func (p *folderPlan) checkPrune(allow bool, files []File) error {
	removed := p.changes.Paths(Removed)
	within := func(n int) bool { return n <= PruneHandful || float64(n) <= MaxPruneShare*float64(p.owned) }
	if allow || within(len(removed)) {
		return nil
	}
	rendered := map[string]bool{}
	for _, f := range files {
		for _, k := range objectKeys(f.Data) {
			rendered[k] = true
		}
	}
	var gone []string
	for _, c := range p.changes {
		if c.Op != Removed {
			continue
		}
		keys := objectKeys(c.Old)
		moved := len(keys) > 0
		for _, k := range keys {
			moved = moved && rendered[k]
		}
		if !moved {
			gone = append(gone, c.Path)
		}
	}
	if within(len(gone)) {
		return nil
	}
	slices.Sort(gone)
	return &PruneError{Dir: p.dir, Removed: gone, Owned: p.owned}
}

// objectKeys names the objects of a file of the fleet: apiVersion, kind,
// namespace and name of each document. A file that is not the fleet's
// (managedDocuments) names none.
func objectKeys(data []byte) []string {
	docs, managed := managedDocuments(data, true)
	if !managed {
		return nil
	}
	keys := make([]string, 0, len(docs))
	for _, n := range docs {
		field := func(path ...string) string {
			if v := yamlnode.Lookup(n, path...); v != nil && v.Kind == yaml.ScalarNode {
				return v.Value
			}
			return ""
		}
		keys = append(keys, field("apiVersion")+" "+field("kind")+" "+field("metadata", "namespace")+"/"+field("metadata", "name"))
	}
	return keys
}

// Compare is WriteDir's check against files held in memory (a folder as a
// Git revision holds it, by slash path relative to the folder) instead of
// a folder on disk: the changes that would turn old into files, with the
// same rules for what is the fleet's (opts.Fleet, opts.Places) and the
// same documents shown to opts.Read. A file of old that is not the fleet's
// is no part of the comparison: where a file of files goes, it counts as
// added. opts.Check and opts.AllowPrune play no part.
func Compare(old, files []File, opts DirOptions) (Changes, error) {
	want, err := checkFiles(files)
	if err != nil {
		return nil, err
	}
	o := newOwner(opts)
	var changes Changes
	seen := make(map[string]bool, len(old))
	for _, f := range old {
		if seen[f.Path] || checkPath(f.Path) != nil || len(f.Data) > MaxManagedFileBytes {
			continue
		}
		newData, generated := want[f.Path]
		if generated && o.stamped(f.Data, newData) {
			seen[f.Path] = true
			continue
		}
		docs, mine, _, _ := o.owns(f.Path, f.Data, generated, opts.Read != nil)
		if !mine {
			continue
		}
		seen[f.Path] = true
		if opts.Read != nil {
			opts.Read(f.Path, true, docs)
		}
		if generated {
			changes = append(changes, Change{Op: Changed, Path: f.Path, Old: f.Data, New: newData, header: o.header})
		} else {
			changes = append(changes, Change{Op: Removed, Path: f.Path, Old: f.Data})
		}
	}
	for _, f := range files {
		if !seen[f.Path] {
			changes = append(changes, Change{Op: Added, Path: f.Path, New: f.Data, header: o.header})
		}
	}
	slices.SortFunc(changes, func(a, b Change) int { return cmp.Compare(a.Path, b.Path) })
	if err := checkManaged(changes, opts.Read); err != nil {
		return nil, err
	}
	return changes, nil
}
