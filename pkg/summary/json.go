package summary

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
)

// JSON is the summary for a bot (docs/fleet-repo.md): the tenants of the new render,
// the posture changes sorted weakening first, and the files that change.
// Every list is sorted and present, empty rather than null. APIVersion and
// Kind come first and name the shape (JSONAPIVersion, JSONKind), as a
// Kubernetes object names its own, for a bot to check before it reads the
// rest: a change of the shape that a bot could misread gets a new
// apiVersion.
type JSON struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Tenants    []Tenant         `json:"tenants"`
	Changes    []posture.Change `json:"changes"`
	// Lifecycle are the lifecycle facts (posture.Lifecycle): apps added,
	// removed or moved between clusters, clusters left running, apps that
	// leave Cozystack's dashboard.
	Lifecycle []posture.Fact `json:"lifecycle"`
	Files     Files          `json:"files"`
	// Warnings are the app values that break their definition's schema
	// under spec.apps.values: Warn, rendered as written (the Markdown's
	// warning block), in the order the run found them.
	Warnings []Warning `json:"warnings"`
	// Base is set with --base: the revision the posture changes are
	// counted from, and what the render changes from the fleet folder
	// there. Files stays what the run changes (or would) in the folder as
	// it is.
	Base *Base `json:"base,omitempty"`
}

// Base is the comparison with a Git revision of the fleet folder (a pull
// request's base).
type Base struct {
	// Ref is the revision as given, Commit the commit it names.
	Ref    string `json:"ref"`
	Commit string `json:"commit"`
	Files  Files  `json:"files"`
}

// Warning is one warning of the run: the file, the object and the field it
// is about (each empty when it names none), and what is wrong.
type Warning struct {
	File    string `json:"file"`
	Object  string `json:"object"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// The apiVersion and kind of the JSON summary's shape.
const (
	JSONAPIVersion = "summary.computeplane.dev/v1"
	JSONKind       = "Summary"
)

// Files are the paths, relative to the fleet folder, of what the run adds,
// changes and removes (or would, with --check).
type Files struct {
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
}

// NewJSON builds the JSON summary of a rendered run; it has no changes
// without a fleet folder.
func NewJSON(r Report) JSON {
	j := JSON{APIVersion: JSONAPIVersion, Kind: JSONKind, Tenants: []Tenant{}, Changes: []posture.Change{}, Lifecycle: []posture.Fact{}, Files: Files{Added: []string{}, Changed: []string{}, Removed: []string{}}, Warnings: []Warning{}}
	if r.Fleet != nil {
		j.Tenants = Tenants(r.Fleet)
		for _, w := range r.Fleet.ValueWarnings() {
			j.Warnings = append(j.Warnings, Warning{File: w.File, Object: w.Object.String(), Field: w.Field, Message: w.Message})
		}
	}
	if r.Dir == "" || r.Failure != nil {
		return j
	}
	if r.Review != nil {
		j.Changes = append(j.Changes, r.Review.Changes...)
		j.Lifecycle = append(j.Lifecycle, r.Review.Facts...)
	}
	// Changes are sorted by path.
	j.Files.Added = append(j.Files.Added, r.Changes.Paths(output.Added)...)
	j.Files.Changed = append(j.Files.Changed, r.Changes.Paths(output.Changed)...)
	j.Files.Removed = append(j.Files.Removed, r.Changes.Paths(output.Removed)...)
	if r.Base != "" {
		j.Base = &Base{Ref: r.Base, Commit: r.BaseCommit, Files: Files{
			Added:   append([]string{}, r.BaseChanges.Paths(output.Added)...),
			Changed: append([]string{}, r.BaseChanges.Paths(output.Changed)...),
			Removed: append([]string{}, r.BaseChanges.Paths(output.Removed)...),
		}}
	}
	return j
}

// WriteJSON writes the JSON summary of a rendered run, indented.
func WriteJSON(w io.Writer, r Report) error {
	data, err := json.MarshalIndent(NewJSON(r), "", "  ")
	if err != nil {
		return fmt.Errorf("failed to write JSON summary: %w", err)
	}
	if _, err := w.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("failed to write JSON summary: %w", err)
	}
	return nil
}
