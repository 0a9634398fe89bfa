package order

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// Compare orders objects: platform objects first, then by namespace, kind,
// name and apiVersion.
func Compare(a, b render.Object) int { return compare(&a, &b) }

func compare(a, b *render.Object) int {
	if a.Platform != b.Platform {
		if a.Platform {
			return -1
		}
		return 1
	}
	return cmp.Or(
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.APIVersion, b.APIVersion),
		// Ties only between objects that collide: order them by what they
		// were made from, so that the message is the same for any input order.
		cmp.Compare(a.From.Kind, b.From.Kind),
		cmp.Compare(a.From.Namespace, b.From.Namespace),
		cmp.Compare(a.From.Name, b.From.Name),
		cmp.Compare(a.Origin.File, b.Origin.File),
		cmp.Compare(a.Origin.Index, b.Origin.Index),
	)
}

// id is the identity of an output object for collision checks.
type id struct {
	group, kind, namespace, name string
}

func idOf(o render.Object) id {
	g, _, _ := strings.Cut(o.APIVersion, "/")
	if !strings.Contains(o.APIVersion, "/") {
		g = ""
	}
	return id{g, o.Kind, o.Namespace, o.Name}
}

// Objects adds the kept inputs and the objects that pass through (others) to
// the generated ones, refuses two objects with one identity where one of
// them is generated, and sorts the result by Compare.
func Objects(generated []render.Object, others []render.Object) ([]render.Object, api.Problems) {
	all := generated
	if len(others) > 0 {
		all = make([]render.Object, 0, len(generated)+len(others))
		all = append(all, generated...)
		all = append(all, others...)
	}
	out := sorted(all, compare)
	var problems api.Problems
	for i := 1; i < len(out); i++ {
		a, b := out[i-1], out[i]
		if idOf(a) != idOf(b) || (!a.Generated && !b.Generated) {
			continue
		}
		if !a.Generated {
			a, b = b, a
		}
		what := fmt.Sprintf("%s %s/%s", b.Kind, b.Namespace, b.Name)
		if b.Generated {
			problems = append(problems, api.Errorf(b.From, b.Origin, "metadata.name",
				"would produce %s, which %s (%s) produces too; two inputs must not produce the same object", what, a.From, a.Origin.Describe()))
		} else {
			problems = append(problems, api.Errorf(b.From, b.Origin, "metadata.name",
				"%s is generated from %s (%s) and must not also be among the inputs", what, a.From, a.Origin.Describe()))
		}
	}
	if len(problems) > 0 {
		return nil, problems.Compact()
	}
	return out, nil
}
