package fn

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Processor runs computeplane-fn on a ResourceList.
type Processor struct {
	// Dir is the folder spec.inputs is relative to; empty means the
	// working directory.
	Dir string
	// Budget counts what the run reads against the limits of package
	// input; nil starts a new one. Execute shares one with the reading of
	// stdin.
	Budget *input.Budget
	// Warnings, when not nil, receives each warning as a line too
	// ("computeplane-fn: warning: ...", as the standalone CLI prints them),
	// besides its result of severity warning: kustomize drops a function's
	// results, so a warning only there never reaches a kustomize user. The
	// command sets it to stderr.
	Warnings io.Writer
}

// Refusal is returned when the inputs are refused: it carries the problems
// the error results were made from.
type Refusal struct {
	Problems api.Problems
}

// Error lists the problems, one per line, each naming file, object and field.
func (r *Refusal) Error() string { return r.Problems.Error() }

// Process implements framework.ResourceListProcessor. On a refusal it leaves
// no items in the list, sets the results and returns a *Refusal, so that the
// process exits non-zero and nothing half-rendered is written.
//
// A panic is a bug of this function, never the user's mistake: it is turned
// into a refusal that says so, rather than a Go stack trace, and no item is
// written.
//
// Warnings (pipeline.Result.Warnings) are set as results of severity warning beside
// the items, and Process returns nil: they never change the exit status.
func (p Processor) Process(rl *framework.ResourceList) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = refuse(rl, api.Problems{api.Internal(fmt.Errorf("%v", r))})
		}
	}()
	if panicForTest != nil {
		panicForTest()
	}
	out, problems := p.run(rl)
	if len(problems) > 0 {
		return refuse(rl, problems)
	}
	rl.Items = out
	if nodes := resourceListSize(rl); nodes > MaxResourceListNodes {
		return refuse(rl, api.Problems{{Message: fmt.Sprintf(
			"the ResourceList to write would hold %s YAML nodes; the KRM function writes at most %s (kyaml holds a whole ResourceList in memory several times over to write it): render a fleet this large with the standalone CLI (computeplane-fn CONFIG, or --output-dir for a fleet folder)",
			yamlnode.Count(nodes), yamlnode.Count(MaxResourceListNodes))}})
	}
	return nil
}

// resourceListSize counts the nodes of the items and the function config.
func resourceListSize(rl *framework.ResourceList) int {
	n := 0
	for _, item := range rl.Items {
		c, _ := yamlnode.Size(item.YNode())
		n += c
	}
	if rl.FunctionConfig != nil {
		c, _ := yamlnode.Size(rl.FunctionConfig.YNode())
		n += c
	}
	return n
}

// panicForTest, set by a test, makes Process panic, to check that a panic
// ends as a refusal; no input can.
var panicForTest func()

// WarningPrefix starts every warning line on stderr, in every mode.
const WarningPrefix = "computeplane-fn: warning: "

// BugMessage starts the message of a refusal that is a bug of this function
// (api.BugMessage, the one spelling of such a failure).
const BugMessage = api.BugMessage

// refuse empties the list, sets the results of the problems and returns the
// refusal. The problems are capped already (api.Problems.Capped).
func refuse(rl *framework.ResourceList, problems api.Problems) *Refusal {
	rl.Items = nil
	rl.Results = results(problems, framework.Error)
	return &Refusal{Problems: problems}
}

// run reads the function config and the items of the list and runs the
// pipeline on them, with the config's spec.inputs relative to p.Dir.
func (p Processor) run(rl *framework.ResourceList) ([]*yaml.RNode, api.Problems) {
	budget := p.Budget
	if budget == nil {
		budget = new(input.Budget)
	}
	budget.ForResourceList = true
	if rl.FunctionConfig == nil || yamlnode.IsNull(rl.FunctionConfig.YNode()) {
		return nil, api.Problems{{Message: fmt.Sprintf("a function config (%s %s) is required", api.ConfigAPIVersion, api.ConfigKind)}}
	}
	cfgNode := yamlnode.Resolve(rl.FunctionConfig.YNode())
	if cfgNode.Kind != yaml.MappingNode {
		return nil, api.Problems{{Message: fmt.Sprintf("the function config must be a %s %s object, not %s", api.ConfigAPIVersion, api.ConfigKind, yamlnode.Describe(cfgNode))}}
	}
	cfg := api.Object{Node: cfgNode, Origin: originOf(rl.FunctionConfig)}
	items := make([]api.Object, len(rl.Items))
	for i, item := range rl.Items {
		items[i] = api.Object{Node: item.YNode(), Origin: originOf(item)}
	}
	dir, shown, problems := p.configDir(rl)
	if len(problems) > 0 {
		return nil, problems
	}
	r, problems := pipeline.Run(pipeline.Options{Dir: p.Dir, ConfigDir: dir, ConfigDirShown: shown, ConfigObject: &cfg, Items: items, Budget: budget})
	if len(problems) > 0 {
		return nil, problems
	}
	rl.Results = results(r.Warnings, framework.Warning)
	if p.Warnings != nil {
		for _, w := range r.Warnings {
			fmt.Fprintf(p.Warnings, "%s%s\n", WarningPrefix, w.Error())
		}
	}
	out := make([]*yaml.RNode, 0, len(r.Objects))
	for _, o := range r.Objects {
		// kyaml's encoder writes these nodes: the last line of defence
		// against a plain << key (package yamltext's own is in the standalone
		// writers).
		n, err := o.Node()
		if err != nil {
			return nil, api.Problems{{Object: o.From, Message: err.Error()}}
		}
		yamlnode.QuoteMergeKeys(n)
		rn := yaml.NewRNode(n)
		if o.Generated {
			if err := rn.PipeE(yaml.SetAnnotation(kioutil.PathAnnotation, o.Path())); err != nil {
				return nil, api.Problems{{Object: o.From, Message: fmt.Sprintf("failed to annotate output: %v", err)}}
			}
		}
		out = append(out, rn)
	}
	return out, nil
}

// originOf reads where an item came from: the path and index annotations
// that kpt and kustomize set. framework.Execute has copied the legacy
// spellings (config.kubernetes.io/path, /index) to these before Process.
func originOf(n *yaml.RNode) api.Origin {
	ann := n.GetAnnotations(kioutil.PathAnnotation, kioutil.IndexAnnotation)
	index, _ := strconv.Atoi(ann[kioutil.IndexAnnotation])
	return api.Origin{File: ann[kioutil.PathAnnotation], Index: index}
}

// results turns problems into KRM results: the message, the object as
// resourceRef, the field path and the file path. Warnings have severity
// warning, which kpt and kustomize show without failing the run.
func results(problems api.Problems, severity framework.Severity) framework.Results {
	out := make(framework.Results, 0, len(problems))
	for _, p := range problems {
		r := &framework.Result{Message: p.Message, Severity: severity}
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
