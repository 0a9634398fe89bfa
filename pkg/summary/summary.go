package summary

import (
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
)

// Limits keep the summary readable in a pull request comment (GitHub cuts
// comments at 65,536 characters) whatever the size of the fleet: longer
// lists are cut with a count of what was left out.
const (
	// MaxTableTenants is the most tenants shown in a table without folding.
	MaxTableTenants = 25
	// MaxFoldedTenants is the most tenants listed in the folded table of all
	// tenants of a large fleet.
	MaxFoldedTenants = 100
	// MaxAppsPerCell is the most apps named in one table cell.
	MaxAppsPerCell = 5
	// MaxPaths is the most file paths listed per kind of change.
	MaxPaths = 50
	// MaxDiffLines is the most diff lines quoted; a longer diff is left to
	// the pull request's own file view.
	MaxDiffLines = 150
	// MaxProblems is the most problems of a refused run quoted.
	MaxProblems = 20
)

// Report is what a summary is made of.
type Report struct {
	// Fleet is the rendered fleet; nil when the run was refused.
	Fleet *model.Fleet
	// Problems are why the run was refused.
	Problems api.Problems
	// Refusal is why the run was refused when no input has a problem (an
	// empty fleet without --allow-empty, say).
	Refusal string
	// Dir is the fleet folder as the user named it; empty when the run had
	// no output folder, and then Changes is ignored.
	Dir string
	// Changes are what the run changed in Dir, or would change with Check.
	Changes output.Changes
	// Check says Dir was only compared (--check), not written.
	Check bool
	// Failure is why Dir could not be written or compared (the folder is
	// then as it was); Changes is ignored.
	Failure error
	// Review is how the tenants' isolation posture changes from what Dir
	// held (with Base, from what Dir held at the base) to the new render;
	// nil without Dir.
	Review *posture.Result
	// Base is the Git revision the render is compared with (--base: a pull
	// request's base), as the user gave it; empty to compare with Dir as
	// it is. BaseCommit is the commit it names, and BaseChanges what
	// differs from Dir at that commit to the render: what the pull request
	// changes in the fleet folder, whatever Dir holds now.
	Base, BaseCommit string
	BaseChanges      output.Changes
}

// compared are the file changes the posture review and the tenants the
// change touches are read from: those from the base with Base, else those
// of the folder.
func (r Report) compared() output.Changes {
	if r.Base != "" {
		return r.BaseChanges
	}
	return r.Changes
}

// Write writes the report as Markdown for a pull request comment: an
// overview of the fleet, what changes in the fleet folder, and per tenant
// whether it has a ComputePlane, which apps are routed onto it and which
// stay on the management plane. Tables of large fleets are folded into
// <details> and cut to the tenants the change touches.
func Write(w io.Writer, r Report) error {
	var b strings.Builder
	b.WriteString("## computeplane-fn\n\n")
	if r.Fleet == nil {
		writeRefusal(&b, r.Problems, r.Refusal, r.Dir)
	} else {
		s := newStats(r.Fleet)
		s.writeOverview(&b)
		writeValueWarnings(&b, r.Fleet.ValueWarnings())
		if r.Dir != "" && r.Failure == nil && r.Review != nil {
			writePosture(&b, r, s.rows)
		}
		touched, gone := touchedTenants(r.Fleet, r.compared())
		switch {
		case r.Dir != "" && r.Failure != nil:
			fmt.Fprintf(&b, "### Fleet folder `%s`\n\n**Failed**, and the folder was left as it was:\n\n```text\n%s\n```\n\n",
				cell(r.Dir), strings.ReplaceAll(r.Failure.Error(), "```", "'''"))
			touched, gone = nil, nil
		case r.Dir != "":
			writeChanges(&b, r)
			if r.Base != "" {
				writeBaseChanges(&b, r)
			}
		}
		s.writeTenants(&b, touched, gone, r.Dir != "" && r.Failure == nil)
		s.writeStray(&b)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("failed to write summary: %w", err)
	}
	return nil
}

// writeValueWarnings states the app values that break their definition's
// schema (spec.apps.values: Warn), before the posture: a typo a reviewer
// can still fix in the pull request.
func writeValueWarnings(b *strings.Builder, warnings api.Problems) {
	if len(warnings) == 0 {
		return
	}
	fmt.Fprintf(b, "**⚠️ %s** about app values and their definitions' schemas: rendered as written, as cozystack-api would take them (`spec.apps.values: Refuse` makes them errors).\n\n```text\n", plural(len(warnings), "warning", "warnings"))
	for i, w := range warnings {
		if i == MaxProblems {
			fmt.Fprintf(b, "... and %d more\n", len(warnings)-MaxProblems)
			break
		}
		b.WriteString(strings.ReplaceAll(w.Error(), "```", "'''"))
		b.WriteByte('\n')
	}
	b.WriteString("```\n\n")
}

func writeRefusal(b *strings.Builder, problems api.Problems, refusal, dir string) {
	left := ""
	if dir != "" {
		left = fmt.Sprintf(" and `%s` was left as it was", cell(dir))
	}
	if len(problems) == 0 {
		// Refused for a reason of the run, not of an input.
		if refusal == "" {
			refusal = "see the run's error output"
		}
		fmt.Fprintf(b, "**Refused**: nothing was rendered%s.\n\n```text\n%s\n```\n", left, strings.ReplaceAll(refusal, "```", "'''"))
		return
	}
	fmt.Fprintf(b, "**Refused**: the inputs have %s, so nothing was rendered%s.\n\n", plural(len(problems), "problem", "problems"), left)
	b.WriteString("```text\n")
	for i, p := range problems {
		if i == MaxProblems {
			fmt.Fprintf(b, "... and %d more\n", len(problems)-MaxProblems)
			break
		}
		b.WriteString(strings.ReplaceAll(p.Error(), "```", "'''"))
		b.WriteByte('\n')
	}
	b.WriteString("```\n")
}

// stats is the fleet sorted for reporting.
type stats struct {
	f       *model.Fleet
	tenants []*model.Tenant
	// apps per tenant namespace, sorted by kind and name.
	routed, managed map[string][]*model.App
	// stray are apps in namespaces of no known tenant, by namespace.
	stray                  []*model.App
	planes, nRouted, nMgmt int
	// rows are the tenants as the JSON summary states them, by namespace.
	rows map[string]Tenant
}

func newStats(f *model.Fleet) *stats {
	s := &stats{f: f, tenants: f.SortedTenants(), routed: map[string][]*model.App{}, managed: map[string][]*model.App{}}
	apps := slices.Clone(f.Apps)
	slices.SortFunc(apps, func(a, b *model.App) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	for _, a := range apps {
		switch {
		case a.Tenant == nil:
			s.stray = append(s.stray, a)
			s.nMgmt++
		case a.Placement == api.PlacementComputePlane:
			s.routed[a.Tenant.Namespace] = append(s.routed[a.Tenant.Namespace], a)
			s.nRouted++
		default:
			s.managed[a.Tenant.Namespace] = append(s.managed[a.Tenant.Namespace], a)
			s.nMgmt++
		}
	}
	for _, t := range s.tenants {
		if t.ComputePlane {
			s.planes++
		}
	}
	s.rows = map[string]Tenant{}
	for _, row := range Tenants(f) {
		s.rows[row.Namespace] = row
	}
	return s
}

func (s *stats) writeOverview(b *strings.Builder) {
	fmt.Fprintf(b, "**%s**, %d with a ComputePlane (delivery: %s). **%s**: %d routed onto a ComputePlane, %d on the management plane.\n\n",
		plural(len(s.tenants), "tenant", "tenants"), s.planes, s.f.Config.Delivery,
		plural(s.nRouted+s.nMgmt, "app", "apps"), s.nRouted, s.nMgmt)
	if s.f.Config.Delivery != api.Platform || s.planes == 0 {
		return
	}
	var names []string
	for _, t := range s.tenants {
		if t.ComputePlane {
			names = append(names, fmt.Sprintf("`%s`", cell(t.Namespace)))
		}
	}
	if len(names) > MaxPaths {
		names = append(names[:MaxPaths], fmt.Sprintf("and %d more", len(names)-MaxPaths))
	}
	fmt.Fprintf(b, "**No Pod Security** (delivery: Platform): the platform's module provisions the clusters and this function cannot wire Pod Security into them, so the ComputePlane of each of these tenants runs without it: %s.\n\n", strings.Join(names, ", "))
}

func writeChanges(b *strings.Builder, r Report) {
	fmt.Fprintf(b, "### Fleet folder `%s`\n\n", cell(r.Dir))
	added, changed, removed := r.Changes.Paths(output.Added), r.Changes.Paths(output.Changed), r.Changes.Paths(output.Removed)
	switch {
	case len(r.Changes) == 0:
		b.WriteString("Up to date: no file changes.\n\n")
		return
	case r.Check:
		fmt.Fprintf(b, "**Out of date**: rendering the inputs again would %s.\n\n", counts("add", "change", "remove", len(added), len(changed), len(removed)))
	default:
		fmt.Fprintf(b, "This run %s.\n\n", counts("added", "changed", "removed", len(added), len(changed), len(removed)))
	}
	writePathGroups(b, added, changed, removed)
	writeDiffs(b, r.Changes)
}

// writePathGroups lists the paths of each kind of change, folded.
func writePathGroups(b *strings.Builder, added, changed, removed []string) {
	for _, group := range []struct {
		title string
		paths []string
	}{{"Added", added}, {"Changed", changed}, {"Removed", removed}} {
		if len(group.paths) == 0 {
			continue
		}
		fmt.Fprintf(b, "<details><summary>%s (%d)</summary>\n\n", group.title, len(group.paths))
		for i, p := range group.paths {
			if i == MaxPaths {
				fmt.Fprintf(b, "- ... and %d more\n", len(group.paths)-MaxPaths)
				break
			}
			fmt.Fprintf(b, "- `%s`\n", cell(p))
		}
		b.WriteString("\n</details>\n\n")
	}
}

// writeBaseChanges lists what the render changes in the fleet folder from
// the base: the pull request's own change, which its file view shows in
// full.
func writeBaseChanges(b *strings.Builder, r Report) {
	fmt.Fprintf(b, "### From the base `%s`\n\n", cell(r.Base))
	added, changed, removed := r.BaseChanges.Paths(output.Added), r.BaseChanges.Paths(output.Changed), r.BaseChanges.Paths(output.Removed)
	if len(r.BaseChanges) == 0 {
		fmt.Fprintf(b, "The render holds what `%s` held at the base: no file changes.\n\n", cell(r.Dir))
		return
	}
	fmt.Fprintf(b, "From `%s` at the base, this change's render %s.\n\n", cell(r.Dir), counts("adds", "changes", "removes", len(added), len(changed), len(removed)))
	writePathGroups(b, added, changed, removed)
}

// writeDiffs quotes the diffs of the changed files when they are short
// enough to read here; added and removed files are whole objects, listed
// above.
func writeDiffs(b *strings.Builder, changes output.Changes) {
	var diff strings.Builder
	lines := 0
	for _, c := range changes {
		if c.Op != output.Changed {
			continue
		}
		d := c.Diff()
		lines += strings.Count(d, "\n")
		if lines > MaxDiffLines {
			b.WriteString("The diff of the changed files is too long to quote here; see the pull request's files.\n\n")
			return
		}
		diff.WriteString(d)
	}
	if diff.Len() == 0 {
		return
	}
	b.WriteString("<details><summary>Diff of the changed files</summary>\n\n```diff\n")
	b.WriteString(strings.ReplaceAll(diff.String(), "```", "'''"))
	b.WriteString("```\n\n</details>\n\n")
}

// touchedTenants finds the tenants whose files change: a folder named like
// a tenant namespace anywhere in a changed path (so that any folder layout
// works). Folders named tenant-... of no known tenant are tenants removed
// from the inputs.
func touchedTenants(f *model.Fleet, changes output.Changes) (map[string]bool, []string) {
	touched := map[string]bool{}
	goneSet := map[string]bool{}
	for _, c := range changes {
		for dir := path.Dir(c.Path); dir != "." && dir != "/"; dir = path.Dir(dir) {
			seg := path.Base(dir)
			if _, ok := f.Tenants[seg]; ok {
				touched[seg] = true
			} else if strings.HasPrefix(seg, "tenant-") {
				goneSet[seg] = true
			}
		}
	}
	gone := make([]string, 0, len(goneSet))
	for ns := range goneSet {
		gone = append(gone, ns)
	}
	slices.Sort(gone)
	return touched, gone
}

func (s *stats) writeTenants(b *strings.Builder, touched map[string]bool, gone []string, withDir bool) {
	b.WriteString("### Tenants\n\n")
	if len(s.tenants)+len(gone) <= MaxTableTenants {
		s.writeTable(b, s.tenants, gone, MaxTableTenants)
		return
	}
	if withDir {
		var rows []*model.Tenant
		for _, t := range s.tenants {
			if touched[t.Namespace] {
				rows = append(rows, t)
			}
		}
		if len(rows)+len(gone) == 0 {
			b.WriteString("No tenant's files change.\n\n")
		} else {
			fmt.Fprintf(b, "Tenants whose files change (%d):\n\n", len(rows)+len(gone))
			s.writeTable(b, rows, gone, MaxTableTenants)
		}
	}
	fmt.Fprintf(b, "<details><summary>All %d tenants</summary>\n\n", len(s.tenants))
	s.writeTable(b, s.tenants, nil, MaxFoldedTenants)
	b.WriteString("</details>\n\n")
}

// writeTable writes at most limit rows, tenants first, then the removed
// ones, and counts the rest.
func (s *stats) writeTable(b *strings.Builder, tenants []*model.Tenant, gone []string, limit int) {
	b.WriteString("| Tenant | ComputePlane | Pod Security | Routed onto its ComputePlane | On the management plane |\n|---|---|---|---|---|\n")
	rows := 0
	for _, t := range tenants {
		if rows == limit {
			break
		}
		plane, level := "no", "–"
		if t.ComputePlane {
			plane, level = "yes", s.rows[t.Namespace].PodSecurity
			if level == posture.PodSecurityNone {
				level = "none: runs without Pod Security"
			}
		}
		fmt.Fprintf(b, "| `%s` (%s) | %s | %s | %s | %s |\n", cell(t.Namespace), cell(t.Name), plane, level,
			appList(s.routed[t.Namespace]), appList(s.managed[t.Namespace]))
		rows++
	}
	for _, ns := range gone {
		if rows == limit {
			break
		}
		fmt.Fprintf(b, "| `%s` | removed | | no longer in the inputs: its generated files are removed | |\n", cell(ns))
		rows++
	}
	if left := len(tenants) + len(gone) - rows; left > 0 {
		var planes, apps int
		for _, t := range tenants[min(rows, len(tenants)):] {
			if t.ComputePlane {
				planes++
			}
			apps += len(s.routed[t.Namespace]) + len(s.managed[t.Namespace])
		}
		word := "tenants"
		if left == 1 {
			word = "tenant"
		}
		fmt.Fprintf(b, "\n... and %d more %s (%d with a ComputePlane, %s).\n", left, word, planes, plural(apps, "app", "apps"))
	}
	b.WriteString("\n")
}

// writeStray lists the apps in namespaces of no known tenant: they stay on
// the management plane (a routed one would have been refused).
func (s *stats) writeStray(b *strings.Builder) {
	if len(s.stray) == 0 {
		return
	}
	fmt.Fprintf(b, "### Apps outside known tenants\n\nThese %s are in namespaces of no Tenant in the inputs and stay on the management plane: %s\n",
		plural(len(s.stray), "app", "apps"), appList(s.stray))
}

func appList(apps []*model.App) string {
	if len(apps) == 0 {
		return "–"
	}
	names := make([]string, 0, MaxAppsPerCell+1)
	for i, a := range apps {
		if i == MaxAppsPerCell {
			names = append(names, fmt.Sprintf("and %d more", len(apps)-MaxAppsPerCell))
			break
		}
		names = append(names, fmt.Sprintf("%s `%s`", cell(a.Kind), cell(a.Name)))
	}
	return strings.Join(names, ", ")
}

// cell keeps a value from breaking out of a table cell or a code span.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "`", "'", "\n", " ", "<", "&lt;").Replace(s)
}

// counts says "add 2 files, change 1 and remove 3", leaving out what is zero.
func counts(add, change, remove string, nAdd, nChange, nRemove int) string {
	var parts []string
	for _, c := range []struct {
		verb string
		n    int
	}{{add, nAdd}, {change, nChange}, {remove, nRemove}} {
		if c.n == 0 {
			continue
		}
		if len(parts) == 0 {
			parts = append(parts, c.verb+" "+plural(c.n, "file", "files"))
		} else {
			parts = append(parts, fmt.Sprintf("%s %d", c.verb, c.n))
		}
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return parts[0]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
