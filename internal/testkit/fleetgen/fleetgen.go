package fleetgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Params shape a synthetic fleet.
type Params struct {
	// Tenants is the number of Tenant objects (the root tenant is implicit
	// and comes on top).
	Tenants int `json:"tenants"`
	// AppsPerTenant is the number of app objects in every tenant namespace.
	AppsPerTenant int `json:"appsPerTenant"`
	// ComputePlaneShare is the share of tenants with spec.computeplane: true,
	// spread evenly over the tenant list.
	ComputePlaneShare float64 `json:"computePlaneShare"`
	// RoutedShare is the share of the apps of a tenant with a ComputePlane
	// that are of a kind routed onto it (tenants without one have none).
	RoutedShare float64 `json:"routedShare"`
	// KnobsShare is the share of tenants with a ComputePlane that also have a
	// ComputePlane knob object.
	KnobsShare float64 `json:"knobsShare"`
	// NestedShare is the share of tenants that live below another tenant
	// rather than directly under the root.
	NestedShare float64 `json:"nestedShare"`
	// MaxDepth is the deepest level of the tenant tree (1: every tenant is
	// a child of the root).
	MaxDepth int `json:"maxDepth"`
	// Seed makes another fleet of the same shape.
	Seed uint64 `json:"seed"`
}

// Defaults are the parameters of the benchmark fleets: 10 apps per tenant,
// half of the tenants with a ComputePlane, a third of their apps routed.
func Defaults(tenants int) Params {
	return Params{
		Tenants:           tenants,
		AppsPerTenant:     10,
		ComputePlaneShare: 0.5,
		RoutedShare:       0.3,
		KnobsShare:        0.5,
		NestedShare:       0.3,
		MaxDepth:          3,
		Seed:              1,
	}
}

// Validate reports parameters that cannot make a fleet.
func (p Params) Validate() error {
	var errs []error
	if p.Tenants < 0 || p.AppsPerTenant < 0 {
		errs = append(errs, errors.New("tenants and apps per tenant must not be negative"))
	}
	for name, s := range map[string]float64{"computePlaneShare": p.ComputePlaneShare, "routedShare": p.RoutedShare, "knobsShare": p.KnobsShare, "nestedShare": p.NestedShare} {
		if s < 0 || s > 1 || math.IsNaN(s) {
			errs = append(errs, fmt.Errorf("%s must be between 0 and 1, not %v", name, s))
		}
	}
	if p.MaxDepth < 1 || p.MaxDepth > 3 {
		// Deeper trees would push namespaces over 63 characters.
		errs = append(errs, fmt.Errorf("maxDepth must be 1, 2 or 3, not %d", p.MaxDepth))
	}
	return errors.Join(errs...)
}

// Stats count what Generate wrote.
type Stats struct {
	Files         int   `json:"files"`
	Bytes         int64 `json:"bytes"`
	Definitions   int   `json:"definitions"`
	Tenants       int   `json:"tenants"`
	ComputePlanes int   `json:"computePlanes"`
	Knobs         int   `json:"knobs"`
	Apps          int   `json:"apps"`
	RoutedApps    int   `json:"routedApps"`
}

// ParamsFile is written last into a fleet folder; it holds the Params and
// Stats of the fleet, so that a complete fleet can be recognised and reused.
const ParamsFile = "fleet.json"

// Manifest is the content of ParamsFile.
type Manifest struct {
	Params Params `json:"params"`
	Stats  Stats  `json:"stats"`
	// Generator is the GeneratorVersion that wrote the fleet.
	Generator int `json:"generator"`
}

// GeneratorVersion changes whenever the same Params generate other files,
// so that a fleet generated before is not reused: 1, the definitions'
// schemas declare every value of their apps (their check, spec.apps.values,
// finds nothing).
const GeneratorVersion = 1

// ConfigFile is the function config of a generated fleet; run
// computeplane-fn from the fleet folder with it.
const ConfigFile = "config.yaml"

const config = `apiVersion: fn.computeplane.dev/v1alpha1
kind: ComputePlaneGenerator
metadata:
  name: fleet
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  inputs: [definitions/, tenants.yaml, apps/]
  delivery: Direct
`

// tenant is one generated tenant.
type tenant struct {
	index        int
	parentIndex  int // -1 under the root
	name         string
	parent       string // namespace of the parent tenant
	namespace    string
	depth        int
	computePlane bool
}

// Generate writes the fleet described by p into dir, which must be empty or
// absent: config.yaml, definitions/*.yaml, tenants.yaml and apps/<tenant
// namespace>.yaml with the tenant's ComputePlane knobs and apps.
func Generate(dir string, p Params) (Stats, error) {
	if err := p.Validate(); err != nil {
		return Stats{}, err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return Stats{}, fmt.Errorf("failed to generate fleet: %s is not empty", dir)
	}
	for _, sub := range []string{"definitions", "apps"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return Stats{}, fmt.Errorf("failed to generate fleet: %w", err)
		}
	}
	w := &writer{dir: dir}
	w.write(ConfigFile, []byte(config))

	// Definitions: one file each, like a platform's package folder.
	defRand := rand.New(rand.NewPCG(p.Seed, 0))
	for i := range catalogue {
		k := &catalogue[i]
		w.writeDocs(filepath.Join("definitions", k.Singular+".yaml"), definition(defRand, k))
		w.stats.Definitions++
	}

	tenants := tenantTree(p)
	var docs []*yaml.Node
	for _, t := range tenants {
		docs = append(docs, tenantObject(t, stream(p.Seed, t.index, streamTenant)))
		w.stats.Tenants++
		if t.computePlane {
			w.stats.ComputePlanes++
		}
	}
	w.writeDocs("tenants.yaml", docs...)

	// Apps, one file per tenant, written by as many workers as cores.
	var wg sync.WaitGroup
	next := make(chan *tenant)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				r := stream(p.Seed, t.index, streamApps)
				docs, s := tenantApps(r, p, t)
				if len(docs) > 0 {
					w.writeDocs(filepath.Join("apps", t.namespace+".yaml"), docs...)
				}
				w.add(s)
			}
		}()
	}
	for _, t := range tenants {
		next <- t
	}
	close(next)
	wg.Wait()
	if w.err != nil {
		return Stats{}, w.err
	}
	manifest, err := json.MarshalIndent(Manifest{Params: p, Stats: w.stats, Generator: GeneratorVersion}, "", "  ")
	if err != nil {
		return Stats{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, ParamsFile), append(manifest, '\n'), 0o644); err != nil {
		return Stats{}, fmt.Errorf("failed to generate fleet: %w", err)
	}
	return w.stats, nil
}

// ReadManifest reads the ParamsFile of a generated fleet.
func ReadManifest(dir string) (Manifest, error) {
	var mf Manifest
	data, err := os.ReadFile(filepath.Join(dir, ParamsFile))
	if err != nil {
		return mf, err
	}
	return mf, json.Unmarshal(data, &mf)
}

// tenantTree lays out the tenants: each draws from its own stream whether it
// nests under an earlier tenant, so the tree of the first N tenants is the
// same in every larger fleet.
func tenantTree(p Params) []*tenant {
	out := make([]*tenant, 0, p.Tenants)
	for i := range p.Tenants {
		r := stream(p.Seed, i, streamTree)
		t := &tenant{index: i, parentIndex: -1, parent: "tenant-root", depth: 1}
		var parent *tenant
		if i > 0 && r.Float64() < p.NestedShare {
			parent = out[r.IntN(i)]
			for parent != nil && parent.depth >= p.MaxDepth {
				if parent.parentIndex < 0 {
					parent = nil
				} else {
					parent = out[parent.parentIndex]
				}
			}
		}
		if parent == nil {
			t.name = fmt.Sprintf("%s%d", pick(r, tenantWords), i)
			t.namespace = "tenant-" + t.name
		} else {
			t.name = fmt.Sprintf("%s%d", pick(r, subTenantWords), i)
			t.parentIndex = parent.index
			t.parent = parent.namespace
			t.namespace = parent.namespace + "-" + t.name
			t.depth = parent.depth + 1
		}
		s := p.ComputePlaneShare
		t.computePlane = math.Floor(float64(i+1)*s) > math.Floor(float64(i)*s)
		out = append(out, t)
	}
	return out
}

// Random streams: every tenant has its own three, so that what one tenant
// draws never shifts another.
const (
	streamTree = iota + 1
	streamTenant
	streamApps
)

func stream(seed uint64, tenant, which int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(tenant)<<2|uint64(which)))
}

func tenantObject(t *tenant, r *rand.Rand) *yaml.Node {
	return m(
		"apiVersion", "apps.cozystack.io/v1alpha1",
		"kind", "Tenant",
		"metadata", m("name", t.name, "namespace", t.parent),
		"spec", m(
			"computeplane", t.computePlane,
			"host", fmt.Sprintf("%s.example.org", t.name),
			"etcd", r.IntN(3) == 0,
			"monitoring", r.IntN(2) == 0,
			"ingress", r.IntN(2) == 0,
			"seaweedfs", r.IntN(4) == 0,
			"resourceQuotas", m("cpu", fmt.Sprint(8*(1+r.IntN(8))), "memory", fmt.Sprintf("%dGi", 16*(1+r.IntN(8))), "storage", fmt.Sprintf("%dGi", 100*(1+r.IntN(10)))),
		),
	)
}

// weighted picks a kind of the given plane by weight.
func weighted(r *rand.Rand, routed bool) *kindSpec {
	total := 0
	for i := range catalogue {
		if k := &catalogue[i]; (k.Placement != "") == routed {
			total += k.Weight
		}
	}
	n := r.IntN(total)
	for i := range catalogue {
		if k := &catalogue[i]; (k.Placement != "") == routed {
			if n < k.Weight {
				return k
			}
			n -= k.Weight
		}
	}
	panic("unreachable")
}

func kindNamed(kind string) *kindSpec {
	for i := range catalogue {
		if catalogue[i].Kind == kind {
			return &catalogue[i]
		}
	}
	panic("fleetgen: no kind " + kind)
}

// tenantApps builds the ComputePlane knob object (for some tenants with a
// ComputePlane) and the apps of a tenant.
func tenantApps(r *rand.Rand, p Params, t *tenant) ([]*yaml.Node, Stats) {
	var s Stats
	var docs []*yaml.Node
	if t.computePlane && r.Float64() < p.KnobsShare {
		groups := m("md0", m("minReplicas", 1, "maxReplicas", 2+r.IntN(6), "instanceType", pick(r, instanceTypes), "diskSize", pick(r, sizes[2:5]), "roles", []string{"ingress-nginx"}))
		if r.IntN(3) == 0 {
			groups.Content = append(groups.Content, str("gpu"), m("minReplicas", 0, "maxReplicas", 2, "instanceType", "u1.2xlarge", "diskSize", "100Gi",
				"gpus", []any{m("name", "nvidia.com/AD102GL_L40S")}, "resources", m("cpu", "16", "memory", "64Gi")))
		}
		docs = append(docs, m("apiVersion", "apps.cozystack.io/v1alpha1", "kind", "ComputePlane",
			"metadata", m("name", "computeplane", "namespace", t.namespace),
			"spec", m("nodeGroups", groups)))
		s.Knobs++
	}
	for j := range p.AppsPerTenant {
		var k *kindSpec
		var name string
		switch {
		case j == 0 && r.IntN(4) == 0:
			k, name = kindNamed("Etcd"), "etcd"
		case j == 1 && r.IntN(4) == 0:
			k, name = kindNamed("Monitoring"), "monitoring"
		default:
			routed := t.computePlane && r.Float64() < p.RoutedShare
			k = weighted(r, routed)
			name = fmt.Sprintf("%s%d", pick(r, appWords), j)
		}
		md := m("name", name, "namespace", t.namespace)
		if r.IntN(2) == 0 {
			md.Content = append(md.Content, str("labels"), m("team", pick(r, appWords), "env", pick(r, []string{"prod", "staging", "dev"})))
		}
		var ann []any
		if r.IntN(3) == 0 {
			ann = append(ann, "owner", pick(r, people)+"@example.org")
		}
		if t.computePlane && k.Placement == "" && r.IntN(5) == 0 {
			ann = append(ann, "computeplane.dev/reachable-from-computeplane", "true")
		}
		if len(ann) > 0 {
			md.Content = append(md.Content, str("annotations"), m(ann...))
		}
		docs = append(docs, m("apiVersion", "apps.cozystack.io/v1alpha1", "kind", k.Kind, "metadata", md, "spec", values(r, k, name)))
		s.Apps++
		if k.Placement != "" {
			s.RoutedApps++
		}
	}
	return docs, s
}

// writer writes files and counts them; it is safe for concurrent use.
type writer struct {
	dir   string
	mu    sync.Mutex
	stats Stats
	err   error
}

func (w *writer) add(s Stats) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stats.Knobs += s.Knobs
	w.stats.Apps += s.Apps
	w.stats.RoutedApps += s.RoutedApps
}

func (w *writer) writeDocs(name string, docs ...*yaml.Node) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			w.fail(fmt.Errorf("failed to encode %s: %w", name, err))
			return
		}
	}
	if err := enc.Close(); err != nil {
		w.fail(err)
		return
	}
	w.write(name, buf.Bytes())
}

func (w *writer) write(name string, data []byte) {
	err := os.WriteFile(filepath.Join(w.dir, name), data, 0o644)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("failed to generate fleet: %w", err)
	}
	w.stats.Files++
	w.stats.Bytes += int64(len(data))
}

func (w *writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}
