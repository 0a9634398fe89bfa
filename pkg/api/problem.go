package api

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ObjectRef identifies an object in messages and KRM results.
type ObjectRef struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

// String renders the reference as apiVersion/kind namespace/name, leaving out
// what is empty.
func (r ObjectRef) String() string {
	var b strings.Builder
	b.WriteString(Printable(r.Kind))
	if r.Namespace != "" || r.Name != "" {
		b.WriteByte(' ')
		if r.Namespace != "" {
			b.WriteString(Printable(r.Namespace))
			b.WriteByte('/')
		}
		b.WriteString(Printable(r.Name))
	}
	return b.String()
}

// Printable returns s for a message: as it is when it holds only printable
// characters, else quoted with Go escapes, so that a name with a newline or
// a NUL in it cannot garble or fake a line of the output. Long strings are
// clipped.
func Printable(s string) string {
	s = clipRunes(s, 200)
	for _, r := range s {
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			return strconv.Quote(s)
		}
	}
	return s
}

func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// Origin is where an input object was read from: a file (relative to the
// working directory, or the path annotation of a ResourceList item) and the
// position of the document in it.
type Origin struct {
	File  string
	Index int
}

// Describe names the origin's file for messages; items of a ResourceList
// that carry no path annotation have none.
func (o Origin) Describe() string {
	if o.File == "" {
		return "ResourceList items"
	}
	return o.File
}

// Problem is one user mistake: the object, the field path inside it, the file
// it came from and a message a person can act on.
type Problem struct {
	Object  ObjectRef
	Field   string
	File    string
	Message string
}

// Error formats the problem on one line for stderr.
func (p Problem) Error() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(Printable(p.File))
		b.WriteString(": ")
	}
	if p.Object.Kind != "" {
		b.WriteString(p.Object.String())
		b.WriteString(": ")
	}
	if p.Field != "" {
		b.WriteString(Printable(p.Field))
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is a list of problems: the one way the core fails on its input.
// A function that a user's input can make fail returns Problems as its last
// result, empty when it succeeded, every mistake it found at once; an error
// is left for what is none of the user's doing (an encoder, the disk), and
// a caller that meets one there reports it as a problem of its own. Only the
// two adapters, fn and cmd, turn problems into KRM results and stderr lines.
// Problems is an error too, so that an adapter can pass it on as one.
type Problems []Problem

// Error joins the problems, one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Sort orders problems by file, object, field and message, so that the same
// input always reports the same list in the same order.
func (ps Problems) Sort() {
	slices.SortFunc(ps, func(a, b Problem) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Object.Namespace, b.Object.Namespace),
			cmp.Compare(a.Object.Kind, b.Object.Kind),
			cmp.Compare(a.Object.Name, b.Object.Name),
			cmp.Compare(a.Field, b.Field),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// Compact sorts the problems and drops exact duplicates.
func (ps Problems) Compact() Problems {
	ps.Sort()
	return slices.Compact(ps)
}

// Errorf builds a Problem for the object described by ref and origin.
func Errorf(ref ObjectRef, origin Origin, field, format string, args ...any) Problem {
	return Problem{Object: ref, Field: field, File: origin.File, Message: fmt.Sprintf(format, args...)}
}

// MaxProblems is the most problems one run reports; a fleet with a million
// broken apps needs the first few to be fixed, not a million lines.
const MaxProblems = 1000

// Capped returns at most MaxProblems problems, sorted, and a last one that
// says how many more there are.
func (ps Problems) Capped() Problems {
	if len(ps) <= MaxProblems {
		return ps
	}
	ps = ps.Compact()
	if len(ps) <= MaxProblems {
		return ps
	}
	more := len(ps) - MaxProblems
	return append(ps[:MaxProblems:MaxProblems], Problem{Message: fmt.Sprintf("... and %d more problems", more)})
}

// BugMessage starts the message of every failure that is no mistake of the
// user's: a bug of this function.
const BugMessage = "internal error (this is a bug in computeplane-fn; please report it with the input that caused it)"

// Internal is the problem of a failure that is no mistake of the user's (an
// encoder that failed, a default that does not decode): the one spelling of
// such a failure in a list of problems. It names no object, since no input
// is to blame.
func Internal(err error) Problem {
	return Problem{Message: BugMessage + ": " + err.Error()}
}
