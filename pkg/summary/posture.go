package summary

import (
	"fmt"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
)

// MaxPostureChanges is the most posture changes stated in the Markdown; the
// JSON summary always has all of them.
const MaxPostureChanges = 60

// writePosture states every posture change in words, weakening first,
// grouped by tenant, each with one line of why it matters, then the
// diagram of the tenants it touches.
func writePosture(b *strings.Builder, r Report, tenants map[string]Tenant) {
	b.WriteString("### Isolation posture\n\n")
	if r.Base != "" {
		fmt.Fprintf(b, "From `%s` at the base `%s`%s to what this change's inputs render.\n\n", cell(r.Dir), cell(r.Base), shortCommit(r.BaseCommit, r.Base))
	}
	res := r.Review
	changes := res.Changes
	weak := 0
	for _, c := range changes {
		if c.Weakens {
			weak++
		}
	}
	switch {
	case len(changes) == 0:
		b.WriteString("No change to any tenant's isolation posture.\n\n")
	case weak == 1 && len(changes) == 1:
		b.WriteString("**⚠️ The posture change weakens isolation** and needs a security review.\n\n")
	case weak == 1:
		fmt.Fprintf(b, "**⚠️ 1 of %d posture changes weakens isolation** and needs a security review.\n\n", len(changes))
	case weak == len(changes):
		fmt.Fprintf(b, "**⚠️ All %d posture changes weaken isolation** and need a security review.\n\n", weak)
	case weak > 0:
		fmt.Fprintf(b, "**⚠️ %d of %d posture changes weaken isolation** and need a security review.\n\n", weak, len(changes))
	default:
		fmt.Fprintf(b, "No change weakens isolation (%s).\n\n", plural(len(changes), "posture change", "posture changes"))
	}
	written := 0
	for _, group := range []struct {
		title   string
		weakens bool
	}{{"Weakening", true}, {"Not weakening", false}} {
		var lastNS = "\x00"
		header := false
		for _, c := range changes {
			if c.Weakens != group.weakens {
				continue
			}
			if written == MaxPostureChanges {
				break
			}
			if !header {
				fmt.Fprintf(b, "**%s**\n\n", group.title)
				header = true
			}
			if c.Namespace != lastNS {
				lastNS = c.Namespace
				if c.Namespace == "" {
					b.WriteString("- the fleet (management plane)\n")
				} else {
					fmt.Fprintf(b, "- `%s` (%s)\n", cell(c.Namespace), cell(c.Tenant))
				}
			}
			mark := ""
			if c.Weakens {
				mark = "⚠️ **weakens**: "
			}
			fmt.Fprintf(b, "  - %s%s%s.<br>_Why it matters:_ %s\n", mark, sentence(c, tenants), causeWords(c.Cause), posture.Why(c))
			written++
		}
		if header {
			b.WriteString("\n")
		}
	}
	if left := len(changes) - written; left > 0 {
		fmt.Fprintf(b, "... and %d more posture changes (all of them are in the JSON summary, --summary-json).\n\n", left)
	}
	for _, p := range res.Problems {
		fmt.Fprintf(b, "- **Could not be read**, look at it yourself: %s\n", cell(p))
	}
	if len(res.Problems) > 0 {
		b.WriteString("\n")
	}
	writeDiagram(b, changes, tenants)
	writeLifecycle(b, res.Facts)
}

// MaxLifecycleFacts is the most lifecycle facts stated in the Markdown; the
// JSON summary always has all of them.
const MaxLifecycleFacts = 60

// writeLifecycle states what the change does to what runs, grouped by
// tenant: apps installed, uninstalled or reinstalled elsewhere, clusters
// left running, apps that leave Cozystack's dashboard.
func writeLifecycle(b *strings.Builder, facts []posture.Fact) {
	b.WriteString("### Lifecycle\n\n")
	if len(facts) == 0 {
		b.WriteString("No app is added, removed or moved, and no cluster is left behind.\n\n")
		return
	}
	fmt.Fprintf(b, "What this change does to what runs (%s):\n\n", plural(len(facts), "fact", "facts"))
	lastNS := "\x00"
	for i, f := range facts {
		if i == MaxLifecycleFacts {
			fmt.Fprintf(b, "\n... and %d more lifecycle facts (all of them are in the JSON summary, --summary-json).\n", len(facts)-MaxLifecycleFacts)
			break
		}
		if f.Namespace != lastNS {
			lastNS = f.Namespace
			fmt.Fprintf(b, "- `%s` (%s)\n", cell(f.Namespace), cell(f.Tenant))
		}
		fmt.Fprintf(b, "  - %s%s.\n", posture.FactSentence(f), causeWords(f.Cause))
	}
	b.WriteString("\n")
}

// causeWords names the input that caused a change or a fact.
func causeWords(cause string) string {
	if cause == "" {
		return ""
	}
	return fmt.Sprintf(" (caused by `%s`)", cell(cause))
}

// shortCommit is " (<12 hex digits>)" naming the commit of the base, or ""
// when the base is given as that commit already.
func shortCommit(commit, base string) string {
	short := commit[:min(12, len(commit))]
	if short == "" || strings.HasPrefix(base, short) {
		return ""
	}
	return " (`" + short + "`)"
}

// sentence is the change in words; a tenant added says what it comes with.
func sentence(c posture.Change, tenants map[string]Tenant) string {
	s := posture.Sentence(c)
	if t, ok := tenants[c.Namespace]; ok && c.Change == posture.ChangeTenant && c.To == posture.Present {
		if t.ComputePlane {
			s += fmt.Sprintf(", with a ComputePlane (Pod Security `%s`)", t.PodSecurity)
		} else {
			s += ", without a ComputePlane"
		}
	}
	if t, ok := tenants[c.Namespace]; ok && c.Change == posture.ChangeComputePlane && c.To == posture.Enabled && t.PodSecurity != "" {
		s += fmt.Sprintf(" (Pod Security `%s`)", t.PodSecurity)
	}
	return s
}
