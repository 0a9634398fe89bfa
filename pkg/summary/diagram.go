package summary

import (
	"fmt"
	"slices"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
)

// Limits of the diagram, which GitHub renders only up to a size.
const (
	// MaxDiagramTenants is the most tenants drawn.
	MaxDiagramTenants = 6
	// MaxDiagramApps is the most apps drawn per tenant; apps whose
	// posture changes are drawn first.
	MaxDiagramApps = 12
)

// edge is one arrow of the diagram: an app runs on the ComputePlane, or the
// ComputePlane reaches an app. change is "" for an edge that stays, "added"
// or "removed"; weakens colours a changed edge.
type edge struct {
	from, to, label, change string
	weakens                 bool
}

// writeDiagram draws, as a Mermaid flowchart, the tenants whose posture
// changes: each tenant's ComputePlane, the apps routed onto it, those it may
// reach and those kept on the management plane, as the new render has them,
// with the edges that appear (thick, red when they weaken isolation, green
// otherwise) and those that go (dotted, "was ...").
func writeDiagram(b *strings.Builder, changes []posture.Change, tenants map[string]Tenant) {
	var namespaces []string
	byNS := map[string][]posture.Change{}
	for _, c := range changes {
		if c.Namespace == "" {
			continue
		}
		if _, seen := byNS[c.Namespace]; !seen {
			namespaces = append(namespaces, c.Namespace)
		}
		byNS[c.Namespace] = append(byNS[c.Namespace], c)
	}
	if len(namespaces) == 0 {
		return
	}
	slices.Sort(namespaces)
	var d strings.Builder
	d.WriteString("```mermaid\nflowchart LR\n")
	var edges []edge
	for i, ns := range namespaces {
		if i == MaxDiagramTenants {
			fmt.Fprintf(&d, "  more[\"... and %d more tenants\"]\n", len(namespaces)-MaxDiagramTenants)
			break
		}
		edges = append(edges, drawTenant(&d, fmt.Sprintf("t%d", i), ns, tenants, byNS[ns])...)
	}
	var styles []string
	for i, e := range edges {
		arrow := "-->"
		switch e.change {
		case "added":
			arrow = "==>"
			colour := "#1a7f37"
			if e.weakens {
				colour = "#cf222e"
			}
			styles = append(styles, fmt.Sprintf("  linkStyle %d stroke:%s,stroke-width:3px", i, colour))
		case "removed":
			arrow = "-.->"
			styles = append(styles, fmt.Sprintf("  linkStyle %d stroke:#8c959f", i))
		}
		fmt.Fprintf(&d, "  %s %s|\"%s\"| %s\n", e.from, arrow, e.label, e.to)
	}
	for _, s := range styles {
		d.WriteString(s + "\n")
	}
	d.WriteString("```\n\n")
	b.WriteString("Tenants whose posture changes (thick: new, red if it weakens isolation; dotted: gone):\n\n")
	b.WriteString(d.String())
}

// drawTenant writes the subgraph of one tenant and returns its edges.
func drawTenant(d *strings.Builder, id, ns string, tenants map[string]Tenant, changes []posture.Change) []edge {
	t, present := tenants[ns]
	title := ns
	if present {
		title = fmt.Sprintf("%s (%s)", ns, t.Name)
	} else {
		title += " (removed)"
	}
	fmt.Fprintf(d, "  subgraph %s[\"%s\"]\n", id, label(title))
	defer d.WriteString("  end\n")
	if !present {
		fmt.Fprintf(d, "    %sx[\"its objects are pruned\"]\n", id)
		return nil
	}
	runsOn := newLink(t.Routed, "runs on", "moved onto", "was running on")
	reaches := newLink(t.Reachable, "reaches", "now reaches", "reached before")
	reaches.fromCP = true
	changed := map[string]bool{}
	cpChange := ""
	for _, c := range changes {
		switch c.Change {
		case posture.ChangePlacement:
			changed[c.Subject] = true
			if c.From == "ComputePlane" {
				runsOn.was[c.Subject] = true
			} else {
				runsOn.added[c.Subject] = c
			}
		case posture.ChangeExposure:
			changed[c.Subject] = true
			if c.To == posture.Reachable {
				reaches.added[c.Subject] = c
			} else {
				reaches.was[c.Subject] = true
			}
		case posture.ChangeComputePlane:
			cpChange = c.To
		}
	}
	hasCP := t.ComputePlane || cpChange == posture.Disabled
	cp := id + "cp"
	if hasCP {
		name := "ComputePlane"
		switch {
		case cpChange == posture.Enabled:
			name += " (enabled now)"
		case cpChange == posture.Disabled:
			name += " (disabled now)"
		case t.PodSecurity != "":
			name += ", Pod Security " + t.PodSecurity
		}
		fmt.Fprintf(d, "    %s{{\"%s\"}}\n", cp, label(name))
	}
	// Apps: changed ones first, then the rest, within the limit.
	all := slices.Concat(t.Routed, t.Management)
	for app := range changed {
		if !slices.Contains(all, app) {
			all = append(all, app)
		}
	}
	slices.SortFunc(all, func(a, b string) int {
		if changed[a] != changed[b] {
			if changed[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	all = slices.Compact(all)
	shown := all[:min(len(all), MaxDiagramApps)]
	var onCP, onMP []string
	for _, app := range shown {
		if runsOn.now[app] {
			onCP = append(onCP, app)
		} else {
			onMP = append(onMP, app)
		}
	}
	node := func(i int) string { return fmt.Sprintf("%sa%d", id, i) }
	ids := map[string]string{}
	for i, app := range shown {
		ids[app] = node(i)
	}
	for _, app := range onCP {
		fmt.Fprintf(d, "    %s[\"%s\"]\n", ids[app], label(app))
	}
	if len(onMP) > 0 {
		fmt.Fprintf(d, "    subgraph %smp[\"management plane\"]\n", id)
		for _, app := range onMP {
			fmt.Fprintf(d, "      %s[\"%s\"]\n", ids[app], label(app))
		}
		d.WriteString("    end\n")
	}
	if left := len(all) - len(shown); left > 0 {
		fmt.Fprintf(d, "    %smore[\"... and %d more apps\"]\n", id, left)
	}
	if !hasCP {
		return nil
	}
	var edges []edge
	for _, app := range shown {
		for _, l := range []*link{runsOn, reaches} {
			if e, ok := l.edge(app, ids[app], cp); ok {
				edges = append(edges, e)
			}
		}
	}
	return edges
}

// link is one relation between a tenant's apps and its ComputePlane, drawn
// as an edge per app that has it in the new render (now: labelled label, or
// addedLabel where a change gave it) or had it before a change took it away
// (was: labelled wasLabel).
type link struct {
	now, was                    map[string]bool
	added                       map[string]posture.Change
	label, addedLabel, wasLabel string
	// fromCP draws the edge from the ComputePlane to the app.
	fromCP bool
}

func newLink(now []string, label, addedLabel, wasLabel string) *link {
	return &link{now: setOf(now), was: map[string]bool{}, added: map[string]posture.Change{},
		label: label, addedLabel: addedLabel, wasLabel: wasLabel}
}

// edge returns the edge of app, between its node appID and the
// ComputePlane's node cpID, when it has one.
func (l *link) edge(app, appID, cpID string) (edge, bool) {
	e := edge{from: appID, to: cpID}
	if l.fromCP {
		e.from, e.to = cpID, appID
	}
	switch {
	case l.now[app]:
		e.label = l.label
		if c, ok := l.added[app]; ok {
			e.change, e.weakens, e.label = "added", c.Weakens, l.addedLabel
		}
	case l.was[app]:
		e.change, e.label = "removed", l.wasLabel
	default:
		return edge{}, false
	}
	return e, true
}

func setOf(l []string) map[string]bool {
	m := make(map[string]bool, len(l))
	for _, s := range l {
		m[s] = true
	}
	return m
}

// label keeps a text from breaking out of a quoted Mermaid label.
func label(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "\n", " ", "<", "#lt;", ">", "#gt;").Replace(s)
}
