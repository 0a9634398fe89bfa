package fn

import (
	"errors"
	"fmt"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Processor runs computeplane-fn on a ResourceList.
type Processor struct {
	// Dir is the folder spec.inputs is relative to; empty means the
	// working directory.
	Dir string
}

// Refusal is returned when the inputs are refused: it carries the KRM
// results and the problems they were made from.
type Refusal struct {
	Results  framework.Results
	Problems api.Problems
}

// Error lists the problems, one per line, each naming file, object and field.
func (r *Refusal) Error() string { return r.Problems.Error() }

// Process implements framework.ResourceListProcessor. On a refusal it leaves
// no items in the list, sets the results and returns a *Refusal, so that the
// process exits non-zero and nothing half-rendered is written.
func (p Processor) Process(rl *framework.ResourceList) error {
	out, problems := p.run(rl)
	if len(problems) > 0 {
		rl.Items = nil
		rl.Results = Results(problems)
		return &Refusal{Results: rl.Results, Problems: problems}
	}
	rl.Items = out
	return nil
}

func (p Processor) run(rl *framework.ResourceList) ([]*yaml.RNode, api.Problems) {
	if rl.FunctionConfig == nil || yamlnode.IsNull(rl.FunctionConfig.YNode()) {
		return nil, api.Problems{{Message: fmt.Sprintf("a function config (%s %s) is required", api.ConfigAPIVersion, api.ConfigKind)}}
	}
	cfgObj := api.NewObject(rl.FunctionConfig.YNode(), originOf(rl.FunctionConfig))
	cfg, problems := api.DecodeConfig(cfgObj)
	if len(problems) > 0 {
		return nil, problems
	}
	objects := make([]api.Object, 0, len(rl.Items))
	for _, item := range rl.Items {
		objs, err := input.Unwrap(item.YNode(), originOf(item))
		if err != nil {
			return nil, api.Problems{{File: originOf(item).File, Message: err.Error()}}
		}
		objects = append(objects, objs...)
	}
	if len(cfg.Inputs) > 0 {
		fromFiles, err := input.ReadAll(p.Dir, cfg.Inputs)
		if err != nil {
			return nil, api.Problems{api.Errorf(cfg.Ref, cfg.Origin, "spec.inputs", "%v", err)}
		}
		objects = append(objects, fromFiles...)
	}
	objs, problems := render.Run(cfg, objects)
	if len(problems) > 0 {
		return nil, problems
	}
	items := make([]*yaml.RNode, 0, len(objs))
	for _, o := range objs {
		rn := yaml.NewRNode(o.Node)
		if o.Generated {
			if err := rn.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, o.Path())); err != nil {
				return nil, api.Problems{{Object: o.From, Message: fmt.Sprintf("failed to annotate output: %v", err)}}
			}
		}
		items = append(items, rn)
	}
	return items, nil
}

// originOf reads where an item came from: the path and index annotations
// that kpt and kustomize set.
func originOf(n *yaml.RNode) api.Origin {
	ann := n.GetAnnotations(kioutil.PathAnnotation, kioutil.LegacyPathAnnotation, kioutil.IndexAnnotation, kioutil.LegacyIndexAnnotation)
	o := api.Origin{File: ann[kioutil.PathAnnotation]}
	if o.File == "" {
		o.File = ann[kioutil.LegacyPathAnnotation]
	}
	idx := ann[kioutil.IndexAnnotation]
	if idx == "" {
		idx = ann[kioutil.LegacyIndexAnnotation]
	}
	o.Index, _ = strconv.Atoi(idx)
	return o
}

// Results turns problems into KRM results of severity error.
func Results(problems api.Problems) framework.Results {
	out := make(framework.Results, 0, len(problems))
	for _, p := range problems {
		r := &framework.Result{Message: p.Message, Severity: framework.Error}
		if p.Object != (api.ObjectRef{}) {
			r.ResourceRef = &yaml.ResourceIdentifier{
				TypeMeta: yaml.TypeMeta{APIVersion: p.Object.APIVersion, Kind: p.Object.Kind},
				NameMeta: yaml.NameMeta{Name: p.Object.Name, Namespace: p.Object.Namespace},
			}
		}
		if p.Field != "" {
			r.Field = &framework.Field{Path: p.Field}
		}
		if p.File != "" {
			r.File = &framework.File{Path: p.File}
		}
		out = append(out, r)
	}
	return out
}

// AsProblems extracts the problems of a refusal.
func AsProblems(err error) (api.Problems, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Problems, true
	}
	return nil, false
}
