package schema

import (
	"cmp"
	"fmt"
	"slices"
)

// Schema is a compiled OpenAPI v3 schema. It is immutable once compiled, so
// one Schema can validate values from many goroutines at once.
//
// The zero Schema, and a nil *Schema, accept every value.
type Schema struct {
	root         *node
	allowUnknown bool
}

// Violation is one way in which a value does not match a schema.
type Violation struct {
	// Path is the field path from the validated root, dotted for fields and
	// bracketed for list indexes, such as "spec.nodeGroups.md0.roles[0]";
	// see [ChildPath]. It is empty for the root itself.
	Path string
	// Message says what is wrong, in kube-openapi's words where it found
	// the problem, such as `must be of type integer: "string"`,
	// "is required" or "unknown field".
	Message string
}

// String returns "path: message", or only the message at the root.
func (v Violation) String() string {
	if v.Path == "" {
		return v.Message
	}
	return v.Path + ": " + v.Message
}

// Rule is an x-kubernetes-validations CEL rule that applies to a value but
// that this package does not evaluate.
type Rule struct {
	// Path is the path of the value the rule applies to (its "self").
	Path string
	// Rule is the CEL expression.
	Rule string
	// Message is the rule's message, or its messageExpression when it has
	// no message.
	Message string
}

// AllowUnknown returns a copy of s that accepts fields the schema does not
// declare, as a schema with x-kubernetes-preserve-unknown-fields everywhere
// would. Fields forbidden by an explicit additionalProperties: false are
// still violations. The copy shares the compiled schema with s.
func (s *Schema) AllowUnknown() *Schema {
	if s == nil {
		return &Schema{allowUnknown: true}
	}
	c := *s
	c.allowUnknown = true
	return &c
}

// Validate returns every violation of value against s, sorted by path and
// then by message, without duplicates; nil when value is valid.
//
// value is normally made of map[string]any, []any, string, bool, float64 or
// int64 and nil, as decoded from JSON or YAML; other Go values (other
// numbers, typed maps and slices, structs) are converted the way
// encoding/json would marshal them. Validate never panics.
func (s *Schema) Validate(value any) []Violation {
	vs, _ := s.check(value, false)
	return vs
}

// SkippedRules returns the x-kubernetes-validations rules that apply to
// value (those on schemas that value reaches and where it is not null),
// sorted by path and rule. They are not evaluated, because doing so needs a
// CEL interpreter; callers can show them so that a reader knows what was not
// checked.
func (s *Schema) SkippedRules(value any) []Rule {
	_, rules := s.check(value, true)
	return rules
}

func (s *Schema) check(value any, withRules bool) (vs []Violation, rules []Rule) {
	if s == nil || s.root == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			vs = append(vs, Violation{Message: fmt.Sprintf("internal error while validating: %v", r)})
			vs = sortViolations(vs)
		}
	}()
	v, bad := normalize(value, "", 0)
	if bad != nil {
		return []Violation{*bad}, nil
	}
	w := &walker{withRules: withRules}
	w.validate(v, s.root, "")
	if !s.allowUnknown {
		w.unknown(v, []*node{s.root}, "")
	}
	return sortViolations(w.violations), sortRules(w.rules)
}

func sortViolations(vs []Violation) []Violation {
	slices.SortFunc(vs, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(vs)
}

func sortRules(rs []Rule) []Rule {
	slices.SortFunc(rs, func(a, b Rule) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(rs)
}
