package posture

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// Collector gathers the records of the files that change, from the
// documents the folder writer parses anyway: Read is its output.Reader. It
// is safe for concurrent use.
type Collector struct {
	mu       sync.Mutex
	old, new []pathRecord
	changed  map[Key]bool
	problems []string
}

type pathRecord struct {
	path string
	Record
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{changed: map[Key]bool{}} }

// Read takes the documents of one version of a changed file: the committed
// one (old) or the one the render writes.
func (c *Collector) Read(path string, old bool, docs []*yaml.Node) {
	recs := make([]pathRecord, 0, len(docs))
	var problems []string
	// <namespace>/_baseline/..., below its wiring group's folder with
	// spec.fleet.unitSource: ExternalArtifact: the namespace is the last
	// folder before _baseline.
	before, _, inCluster := strings.Cut(path, InClusterFolder)
	tenantNS := before[strings.LastIndex(before, "/")+1:]
	for _, d := range docs {
		var r Record
		var err error
		if inCluster {
			r, err = ReadInCluster(tenantNS, d)
		} else {
			r, err = ReadDocument(d)
		}
		if err != nil {
			side := "the new render"
			if old {
				side = "the committed folder"
			}
			problems = append(problems, fmt.Sprintf("%s (%s): %v", path, side, err))
		}
		recs = append(recs, pathRecord{path, r})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range recs {
		c.changed[r.Key] = true
	}
	if old {
		c.old = append(c.old, recs...)
	} else {
		c.new = append(c.new, recs...)
	}
	c.problems = append(c.problems, problems...)
}

// Result is the review of a change: both sides' posture where files
// change, and what changes.
type Result struct {
	Old, New *State
	Changes  []Change
	// Facts are the lifecycle facts: apps added, removed or moved, clusters
	// left running, apps that leave Cozystack's dashboard.
	Facts []Fact
	// Problems are posture objects that could not be read (a hand edit
	// that broke one): what they say is left out, and a reviewer must look
	// at them.
	Problems []string
}

// Weakens reports whether any change weakens isolation.
func (r *Result) Weakens() bool {
	return slices.ContainsFunc(r.Changes, func(c Change) bool { return c.Weakens })
}

// Review compares the committed side of the changed files, which c
// collected, with the new render objs. Both sides share the objects whose
// files do not change: of those it reads only the posture objects of the
// tenant namespaces where something changes (and, for a ComputePlane
// without a cluster release or egress policy on one side, the releases
// there), so that its cost follows the size of the change, not the fleet.
func Review(objs []render.Object, c *Collector) (*Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	touched := map[string]bool{}
	for k := range c.changed {
		if IsTenantNamespace(k.Namespace) {
			touched[k.Namespace] = true
		}
	}
	shared, err := sharedRecords(objs, c.changed, func(o render.Object) bool {
		return touched[o.Namespace] && isPostureObject(o)
	})
	if err != nil {
		return nil, err
	}
	old, new := sorted(c.old), sorted(c.new)
	res := &Result{Old: Assemble(append(slices.Clone(shared), old...)), New: Assemble(append(slices.Clone(shared), new...))}
	// A ComputePlane under delivery: Platform shows only by its egress
	// policy or its routed releases. Where neither side has a cluster
	// release and the reading differs, read the unchanged releases too.
	// Where the in-cluster baseline changes (a grant), the rights of the
	// routed apps there come from their releases too.
	again := map[string]bool{}
	for ns := range touched {
		o, n := res.Old.Tenants[ns], res.New.Tenants[ns]
		if o != nil && n != nil && o.ComputePlane != n.ComputePlane && !o.direct && !n.direct {
			again[ns] = true
		}
	}
	for k := range c.changed {
		if touched[k.Namespace] && (strings.HasPrefix(k.Name, inClusterKeyPrefix) || (k.Kind == "HelmRelease" && k.Name == wire.BaselineRelease)) {
			again[k.Namespace] = true
		}
	}
	if len(again) > 0 {
		more, err := sharedRecords(objs, c.changed, func(o render.Object) bool {
			return again[o.Namespace] && o.Kind == "HelmRelease" && !isPostureObject(o)
		})
		if err != nil {
			return nil, err
		}
		shared = append(shared, more...)
		res.Old, res.New = Assemble(append(slices.Clone(shared), old...)), Assemble(append(slices.Clone(shared), new...))
	}
	res.Changes = Compare(res.Old, res.New)
	res.Facts = Lifecycle(res.Old, res.New)
	res.Problems = slices.Clone(c.problems)
	slices.Sort(res.Problems)
	return res, nil
}

// sharedRecords reads the generated objects whose files do not change and
// that want selects; every unchanged object of a tenant namespace where
// something changes counts as being there on both sides.
func sharedRecords(objs []render.Object, changed map[Key]bool, want func(render.Object) bool) ([]Record, error) {
	touched := map[string]bool{}
	for k := range changed {
		touched[k.Namespace] = true
	}
	var out []Record
	present := map[string]bool{}
	for _, o := range objs {
		if !o.Generated || !touched[o.Namespace] {
			continue
		}
		for _, in := range o.InCluster {
			// The in-cluster baseline's grants, where their files do not
			// change (those that do come through the Collector).
			if in.Kind != "ClusterRoleBinding" || changed[InClusterKey(o.Namespace, in.Kind, in.Namespace, in.Name)] {
				continue
			}
			n, err := in.Node()
			if err != nil {
				return nil, err
			}
			r, err := ReadInCluster(o.Namespace, n)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		key := Key{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
		if changed[key] {
			continue
		}
		if !want(o) {
			if !present[o.Namespace] {
				present[o.Namespace] = true
				out = append(out, Record{Key: key, Kind: KindOther})
			}
			continue
		}
		r, err := readObject(o)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// isPostureObject tells the objects that carry a tenant's posture, other
// than app releases, by their metadata alone.
func isPostureObject(o render.Object) bool {
	switch o.Kind {
	case "HelmRelease":
		return o.Name == wire.DirectClusterRelease || o.Name == wire.BaselineRelease
	case "ConfigMap":
		return o.Name == wire.AdmissionConfigMapName
	case "CiliumNetworkPolicy":
		return o.Name == wire.EgressPolicyName
	case "Kustomization":
		return o.Name == wire.BaselineKustomization
	case "ValidatingAdmissionPolicy":
		return o.Name == wire.GuardName
	}
	return false
}

func sorted(recs []pathRecord) []Record {
	slices.SortFunc(recs, func(a, b pathRecord) int {
		return cmp.Or(cmp.Compare(a.Key.Namespace, b.Key.Namespace), cmp.Compare(a.Key.Kind, b.Key.Kind),
			cmp.Compare(a.Key.Name, b.Key.Name), strings.Compare(a.path, b.path))
	})
	out := make([]Record, len(recs))
	for i, r := range recs {
		out[i] = r.Record
	}
	return out
}

// ReadObjects reads the posture of a whole render: every generated object
// is read. The summary does not need it (see Review); tests use it to prove
// that the render's model and its objects say the same.
func ReadObjects(objs []render.Object) (*State, error) {
	var recs []Record
	for _, o := range objs {
		if !o.Generated {
			continue
		}
		r, err := readObject(o)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return Assemble(recs), nil
}

// readObject reads what one rendered object says of posture.
func readObject(o render.Object) (Record, error) {
	n, err := o.Node()
	if err != nil {
		return Record{}, err
	}
	return ReadDocument(n)
}
