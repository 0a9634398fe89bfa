package model

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/knobs"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Role is what the fleet makes of one object read: Reader.Read decides it
// once, and Build acts on it.
type Role uint8

// The roles of the objects read.
const (
	// Passthrough is an object that is no input of this function: it is
	// checked and written as it was read.
	Passthrough Role = iota
	// DefinitionInput is an ApplicationDefinition: it says which kinds are
	// apps and how they are released.
	DefinitionInput
	// ConfigInput is a function config among the inputs (kpt sends the
	// file at configPath as an item too; a folder input may hold it):
	// local configuration, an input like the others, kept only with
	// keepInputs.
	ConfigInput
	// EarlierOutput is an object this function generated on an earlier
	// run: it is generated anew, and what was read is dropped.
	EarlierOutput
	// UnsupportedInput is an object of the apps API group in a version
	// other than apps.cozystack.io/v1alpha1: refused.
	UnsupportedInput
	// TenantInput is a Tenant of the tenant list.
	TenantInput
	// KnobsInput is a ComputePlane knob object.
	KnobsInput
	// AppInput is any other object of apps.cozystack.io/v1alpha1: an app,
	// if a definition declares its kind (Build checks).
	AppInput
)

// Input is one object as the fleet reads it: its identity, the role
// Reader.Read gave it, and, for a tenant, knob object or app, what was
// decoded of it. Its node stays only where it is still needed: for
// definitions (decoded by Build, once every definition is known), for the
// objects that pass through, and for the inputs a config keeps
// (keepInputs), which are written as they were read.
type Input struct {
	api.Object
	Role Role

	tenant *api.Tenant
	knobs  *api.Knobs
	app    *api.App
	// values are the app's spec as the text it takes in its release
	// (Reader.EncodeValues).
	values   []byte
	problems api.Problems
	// shape of an app's values, for their check against its definition
	// (checkAppValues); nil under spec.apps.values: Ignore.
	shape knobs.Shape
}

// Reader reads objects as inputs of one run.
type Reader struct {
	Config *api.Config
	// EncodeValues turns an app's spec into the text its release holds at
	// spec.values (the pipeline gives package yamltext's): a large fleet
	// holds compact text instead of node trees, and the model carries that
	// text without reading it (App.Values). A spec it cannot encode (too
	// deep, a merge key) is a problem of the app's, with the path of its
	// *yamlnode.PathError below spec.
	EncodeValues func(spec *yaml.Node) ([]byte, error)
}

// Read classifies one object and decodes it if it is a tenant, knob object
// or app; readers call it on every object right after its file is decoded,
// on the goroutine that decoded it, so that a large fleet never holds the
// node trees of all its files at once.
func (r Reader) Read(o api.Object) *Input {
	in := &Input{Object: o, Role: classify(o)}
	switch in.Role {
	case TenantInput:
		in.tenant, in.problems = api.DecodeTenant(o)
	case KnobsInput:
		in.knobs, in.problems = api.DecodeKnobs(o)
	case AppInput:
		var spec *yaml.Node
		in.app, spec, in.problems = api.DecodeApp(o)
		if len(in.problems) == 0 {
			var err error
			if in.values, err = r.EncodeValues(spec); err != nil {
				in.problems = api.Problems{valuesProblem(in.app, o.Origin, err)}
			} else if r.Config.Apps.Values != api.AppValuesIgnore {
				in.shape = knobs.ShapeOf(spec)
			}
		}
	}
	if !in.keepsNode(r.Config) {
		in.Node = nil
	}
	return in
}

// ReadAll is Read on each of objs, for objects read already (the items of
// a ResourceList).
func (r Reader) ReadAll(objs []api.Object) []*Input {
	out := make([]*Input, len(objs))
	for i, o := range objs {
		out[i] = r.Read(o)
	}
	return out
}

// valuesProblem reports why an app's spec cannot be copied into its
// release: a *yamlnode.PathError names the path below spec.
func valuesProblem(app *api.App, origin api.Origin, err error) api.Problem {
	field := "spec"
	var pe *yamlnode.PathError
	if errors.As(err, &pe) {
		if pe.Path != "" {
			field += "." + pe.Path
		}
		err = pe.Err
	}
	return api.Errorf(app.Ref, origin, field, "%v", err)
}

// keepsNode reports whether the input's node is needed after Reader.Read.
func (in *Input) keepsNode(cfg *api.Config) bool {
	switch in.Role {
	case Passthrough, DefinitionInput:
		return true
	case EarlierOutput:
		return false
	}
	return cfg.KeepInputs
}

// Read returns the object as read (input.Prepared); a reader that numbers
// a file's documents only once it has decoded them all sets its origin
// there, which Build gives what was decoded of it.
func (in *Input) Read() *api.Object { return &in.Object }

// classify is the one place that says what an object is.
func classify(o api.Object) Role {
	switch {
	case o.APIVersion == api.DefinitionAPIVersion && o.Kind == api.DefinitionKind:
		return DefinitionInput
	case o.APIVersion == api.ConfigAPIVersion && o.Kind == api.ConfigKind:
		return ConfigInput
	case o.Generated:
		return EarlierOutput
	case o.Group() != api.AppsGroup:
		return Passthrough
	case o.APIVersion != api.AppsAPIVersion:
		return UnsupportedInput
	case o.Kind == api.TenantKind:
		return TenantInput
	case o.Kind == api.KnobsKind:
		return KnobsInput
	}
	return AppInput
}
