package units

import (
	"cmp"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/order"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// Names of the wiring.
const (
	// NamePrefix starts the name of every Kustomization of the wiring, so
	// that they stand apart from the operator's own in the wiring namespace.
	NamePrefix = "computeplane-"
	// PlatformUnitName is the Kustomization of the platform unit, which
	// every other unit depends on.
	PlatformUnitName = NamePrefix + "platform"
	// AccountUnitName is the Kustomization of the unit of the fleet's own
	// account, which the platform unit depends on: the fleet's ClusterRole
	// grants bind on a new tenant's installer roles before the platform
	// unit binds them (kustomize-controller applies a unit's RBAC in one
	// stage, and the API server checks bind at the dry run).
	AccountUnitName = NamePrefix + "fleet-account"
	// ShardLabel is the label kustomize-controller shards select on
	// (--watch-label-selector).
	ShardLabel = wire.ShardingLabel
	// RoutedUnitPrefix starts the name of the unit of a namespace's routed
	// releases: computeplane-routed-<namespace>. It waits for the tenant's
	// baseline Kustomization, which the namespace's own unit applies.
	RoutedUnitPrefix = NamePrefix + "routed-"
	// RoutedFolder is the folder of that unit inside the namespace's
	// folder: <namespace>/_routed (a part folder is never named so).
	RoutedFolder = "_routed"
	// KustomizationFile is the kustomize file of every unit and wiring folder.
	KustomizationFile = "kustomization.yaml"
	// maxNameLength keeps a Kustomization name usable as the label value
	// kustomize-controller stamps on every object it applies.
	maxNameLength = 63
)

// Plan is the layout of a fleet in Flux units: which objects each unit
// holds, where it lives and how it is wired.
type Plan struct {
	// Fleet is the spec.fleet the plan was made for.
	Fleet *api.FleetConfig
	// Units in a fixed order: the platform unit's parts first, then the
	// namespaces' units by name, each unit's parts in order.
	Units []*Unit
	// Groups are the wiring groups, all of them, empty ones included.
	Groups []*Group
	// fleetUnits are the names of the fleet's own units: the account's
	// and the platform unit's parts.
	fleetUnits map[string]bool
}

// Unit is one folder of the fleet reconciled by one Flux Kustomization. A
// namespace whose objects exceed the bound is split into parts, each of
// them a Unit of its own.
type Unit struct {
	// Name is the name of the unit's Kustomization in the wiring namespace.
	Name string
	// Folder is the unit's folder, relative to the output folder.
	Folder string
	// Namespace is the namespace whose objects the unit holds; empty for
	// the platform unit, which holds cozy-system, the platform objects and
	// every cluster-scoped object.
	Namespace string
	// Platform marks the parts of the platform unit.
	Platform bool
	// Account marks the unit of the fleet's own account.
	Account bool
	// Part is the index of this part (0 for a unit that is not split) and
	// Parts the number of parts of the unit.
	Part, Parts int
	// Objects are the objects of the part, in order.Compare order.
	Objects []render.Object
	// Files are the objects' files, relative to Folder, in the same order.
	Files []string
	// Shard is the kustomize-controller shard (1..spec.fleet.shards), or 0
	// when the fleet is not sharded: the namespace's (model.KustomizationShard)
	// for a namespace's units, see assignShards for the others.
	Shard int
	// Group is the index of the wiring group that holds the unit's
	// Kustomization.
	Group int
	// DependsOn are the Kustomizations, in the wiring namespace, that must
	// be ready at the same revision before this one is applied: the
	// platform unit (the account's unit for the platform unit), the
	// platform part that holds the tenant's objects for the unit that holds
	// its cluster, the next part for the parts of a split namespace, and
	// the first part for the platform unit's other parts (platformParts).
	DependsOn []string
	// Orphan is true for the parts after the first: deleting their
	// Kustomization leaves their objects in place (see docs/flux-wiring.md).
	Orphan bool
	// Baseline is the namespace whose baseline Kustomization
	// (wire.BaselineKustomization) must be ready before this unit is
	// applied: set for the units of routed releases, empty otherwise.
	Baseline string
	// Artifact is the ExternalArtifact, in the wiring namespace, that the
	// unit's Kustomization reads, and ArtifactFolder the folder of the fleet
	// folder it holds (the namespace's, below its wiring group's): set for
	// a namespace's units with spec.fleet.unitSource: ExternalArtifact,
	// empty when the Kustomization reads the fleet source (artifacts.go).
	Artifact, ArtifactFolder string
}

// Group is one wiring group: a folder of Kustomizations of units, itself
// reconciled by a Kustomization listed in the wiring folder.
type Group struct {
	Name   string
	Folder string
	Index  int
	Shard  int
	Units  []*Unit
	// Artifact is the ExternalArtifact, in the wiring namespace, that the
	// group's Kustomization reads (its folder, cut from the fleet source):
	// set with spec.fleet.unitSource: ExternalArtifact (artifacts.go).
	Artifact string
}

// NewPlan lays the objects out in units. cfg.Fleet must be set. The
// problems say what a user can act on: a wiring group over the bound, two
// units that would share a Kustomization name, a group with more namespaces
// than one ArtifactGenerator makes artifacts for. What only objects built
// by hand reach (a namespace that is no DNS label, two objects in one file,
// a unit named like a wiring group) is a bug, api.Internal.
func NewPlan(cfg *api.Config, objs []render.Object) (*Plan, api.Problems) {
	if cfg == nil || cfg.Fleet == nil {
		return nil, api.Problems{api.Internal(errors.New("failed to lay out the fleet: the config has no spec.fleet"))}
	}
	fc := cfg.Fleet
	byFolder := map[string]*unitObjects{}
	var folders []string
	var problems api.Problems
	for _, o := range objs {
		folder, file, ns := placement(o)
		if ns != "" && !api.ValidDNSLabel(ns) {
			// The read stage refuses such a namespace in every input.
			problems = append(problems, api.Internal(fmt.Errorf("%s %s/%s is in namespace %q, which is not a valid namespace name, so it cannot have a unit", o.Kind, o.Namespace, o.Name, o.Namespace)))
			continue
		}
		u := byFolder[folder]
		if u == nil {
			u = &unitObjects{folder: folder, namespace: ns, platform: folder == api.PlatformUnitFolder,
				account: folder == api.AccountUnitFolder, routed: o.Routed && ns != ""}
			byFolder[folder] = u
			folders = append(folders, folder)
		}
		u.objs = append(u.objs, fileObject{o, file})
	}
	// The account's unit first, then the platform unit: every other unit
	// depends on them.
	slices.SortFunc(folders, func(a, b string) int {
		return cmp.Or(-cmp.Compare(boolInt(a == api.AccountUnitFolder), boolInt(b == api.AccountUnitFolder)),
			-cmp.Compare(boolInt(a == api.PlatformUnitFolder), boolInt(b == api.PlatformUnitFolder)), cmp.Compare(a, b))
	})

	p := &Plan{Fleet: fc}
	// Every unit waits for the platform unit, and the platform unit for
	// the account's; without a platform unit, every unit waits for the
	// account's.
	var accountDep, platformDep string
	if byFolder[api.AccountUnitFolder] != nil {
		accountDep = AccountUnitName
	}
	if byFolder[api.PlatformUnitFolder] != nil {
		platformDep = PlatformUnitName
	}
	// tenantParts are the platform parts after the first that hold a
	// tenant's objects (its installer's rights), by tenant namespace. The
	// platform unit comes before every namespace's.
	tenantParts := map[string]string{}
	for _, folder := range folders {
		u := byFolder[folder]
		slices.SortFunc(u.objs, func(a, b fileObject) int { return order.Compare(a.Object, b.Object) })
		files := make(map[string]fileObject, len(u.objs))
		for _, b := range u.objs {
			if a, dup := files[b.file]; dup {
				// Only the render names the objects laid out here, and no
				// two of its kinds share a kind's name.
				problems = append(problems, api.Internal(fmt.Errorf("%s %s %s/%s would be written to %s/%s like %s %s %s/%s; two objects must not share a file", b.APIVersion, b.Kind, b.Namespace, b.Name, folder, b.file, a.APIVersion, a.Kind, a.Namespace, a.Name)))
				continue
			}
			files[b.file] = b
		}
		base := NamePrefix + folder
		switch {
		case u.account:
			base = AccountUnitName
		case u.platform:
			base = PlatformUnitName
		case u.routed:
			base = RoutedUnitPrefix + u.namespace
		}
		pinned, key := isCluster, objectKey
		if u.platform {
			pinned, key = mayBePruned, tenantKey
		}
		parts, pinnedFit := split(u.objs, fc.MaxObjectsPerUnit, pinned, key)
		// The platform unit's parts wait for its first part instead of
		// each for the next when every object that may be pruned is in the
		// first part (platformParts).
		star := u.platform && pinnedFit && len(parts) > 1
		for i, part := range parts {
			unit := &Unit{
				Name:      partName(base, i),
				Folder:    partFolder(folder, i),
				Namespace: u.namespace,
				Platform:  u.platform,
				Account:   u.account,
				Part:      i,
				Parts:     len(parts),
				Orphan:    i > 0,
			}
			if u.routed {
				unit.Baseline = u.namespace
			}
			for _, fo := range part {
				unit.Objects = append(unit.Objects, fo.Object)
				unit.Files = append(unit.Files, fo.file)
			}
			dep := cmp.Or(platformDep, accountDep)
			switch {
			case u.account:
				dep = ""
			case u.platform && star && i > 0:
				dep = base
			case u.platform:
				dep = accountDep
			}
			if dep != "" {
				unit.DependsOn = append(unit.DependsOn, dep)
			}
			if tenantPart := tenantParts[u.namespace]; i == 0 && !u.routed && tenantPart != "" {
				// The unit that holds the tenant's cluster waits for the
				// installer's rights too.
				unit.DependsOn = append(unit.DependsOn, tenantPart)
			}
			if i+1 < len(parts) && !star {
				// A part waits for the next one, so that an object moving to
				// a new part on growth is taken over before the part it
				// leaves prunes it (docs/flux-wiring.md).
				unit.DependsOn = append(unit.DependsOn, partName(base, i+1))
			}
			if star && i > 0 {
				for _, o := range part {
					if o.Tenant != "" {
						tenantParts[o.Tenant] = unit.Name
					}
				}
			}
			p.Units = append(p.Units, unit)
		}
	}

	problems = append(problems, p.assignNames(cfg)...)
	if len(problems) > 0 {
		return nil, problems.Compact()
	}
	p.fleetUnits = map[string]bool{}
	for _, u := range p.Units {
		if u.Platform || u.Account {
			p.fleetUnits[u.Name] = true
		}
	}

	groups, auto := fc.WiringGroups, fc.WiringGroups == api.AutoWiringGroups
	if auto {
		groups = sizedGroups(len(p.Units))
	}
	for {
		p.group(groups)
		// Doubling keeps the count a power of two, so that the count a
		// fleet can have stays few and changes seldom.
		if !auto || groups >= MaxAutoWiringGroups || p.largestGroup() <= fc.MaxObjectsPerUnit {
			break
		}
		groups *= 2
	}
	p.assignShards()
	if fc.ArtifactPerNamespace() {
		problems = append(problems, p.placeInArtifacts(cfg)...)
	}
	byName := make(map[string]*Unit, len(p.Units))
	for _, u := range p.Units {
		byName[u.Name] = u
	}
	for _, g := range p.Groups {
		if u := byName[g.Name]; u != nil {
			// A unit's name is its namespace's, and Cozystack's tenant
			// namespaces start with "tenant-".
			problems = append(problems, api.Internal(fmt.Errorf("the unit in %s would be reconciled by Kustomization %s, which is the name of a wiring group", u.Folder, g.Name)))
		}
		if len(g.Units) > fc.MaxObjectsPerUnit {
			how := "raise spec.fleet.wiringGroups to at least %d, in a commit of its own"
			if auto {
				how = "set spec.fleet.wiringGroups to at least %d (it follows the fleet's size up to " + strconv.Itoa(MaxAutoWiringGroups) + " groups), or raise spec.fleet.maxObjectsPerUnit"
			}
			problems = append(problems, api.Errorf(cfg.Ref, cfg.Origin, "spec.fleet.wiringGroups",
				"wiring group %s would hold %d Kustomizations, more than spec.fleet.maxObjectsPerUnit (%d); "+how+" (docs/flux-wiring.md)",
				g.Name, len(g.Units), fc.MaxObjectsPerUnit, suggestGroups(len(p.Units), fc.MaxObjectsPerUnit)))
		}
	}
	if len(problems) > 0 {
		return nil, problems.Compact()
	}
	return p, nil
}

// MaxAutoWiringGroups is the most wiring groups the fleet's size chooses
// (spec.fleet.wiringGroups: 0): the largest power of two within
// api.MaxWiringGroups. At that count a group holds about 100 unit
// Kustomizations for a fleet of 50,000 units, a fraction of the bound.
const MaxAutoWiringGroups = 512

// sizedGroups is the number of wiring groups for a fleet of n units when
// spec.fleet.wiringGroups is 0: the smallest power of two g with g*g >= n,
// at most MaxAutoWiringGroups. The root Kustomization then builds about as
// many objects as each group (about the square root of n each, the least
// for the larger of the two), and the count changes only when n crosses a
// power of 4 (4, 16, 64, 256, 1,024, 4,096, ...): rarely, and each change
// doubles or halves it. A change replaces every group (groupLabel), which
// docs/flux-wiring.md shows is safe.
func sizedGroups(n int) int {
	g := 1
	for g*g < n && g < MaxAutoWiringGroups {
		g *= 2
	}
	return g
}

// group spreads the units over n wiring groups by a jump consistent hash of
// their names; every group is kept, empty ones too. When each namespace
// reads an artifact of its own (spec.fleet.unitSource: ExternalArtifact),
// a namespace's units are hashed by the namespace instead, so that all of
// them are in the one group whose folder holds the namespace's (the
// fleet's own units, which have no namespace, keep their names).
func (p *Plan) group(n int) {
	fc := p.Fleet
	byNamespace := fc.ArtifactPerNamespace()
	p.Groups = make([]*Group, 0, n)
	for g := range n {
		label := groupLabel(g, n)
		if byNamespace {
			// Other names than the groups hashed by unit name, so that
			// switching spec.fleet.unitSource replaces every group, as a
			// change of their count does, instead of moving units between
			// groups that stay (docs/flux-wiring.md).
			label = ByNamespaceGroupPrefix + label
		}
		p.Groups = append(p.Groups, &Group{Index: g, Name: NamePrefix + "wiring-" + label, Folder: path.Join(fc.WiringPath, label)})
	}
	for _, u := range p.Units {
		key := u.Name
		if byNamespace && u.Namespace != "" {
			key = u.Namespace
		}
		u.Group = model.Bucket("group", key, n)
		p.Groups[u.Group].Units = append(p.Groups[u.Group].Units, u)
	}
}

func (p *Plan) largestGroup() int {
	largest := 0
	for _, g := range p.Groups {
		largest = max(largest, len(g.Units))
	}
	return largest
}

type unitObjects struct {
	folder    string
	namespace string
	platform  bool
	account   bool
	routed    bool
	objs      []fileObject
}

type fileObject struct {
	render.Object
	file string
}

// placement returns the unit folder of an object, its file inside that
// folder and the namespace of the unit (empty for the platform unit).
// Namespace units keep the default layout <namespace>/<kind>-<name>.yaml;
// routed releases go to their namespace's routed unit,
// <namespace>/_routed/<kind>-<name>.yaml; the platform unit spans
// namespaces, so its files keep their namespace folder.
func placement(o render.Object) (folder, file, namespace string) {
	p := o.Path()
	if o.Account {
		return api.AccountUnitFolder, p, ""
	}
	if o.Platform || o.Namespace == "" || o.Namespace == render.PlatformNamespace {
		return api.PlatformUnitFolder, p, ""
	}
	if o.Routed {
		return path.Join(path.Dir(p), RoutedFolder), path.Base(p), o.Namespace
	}
	return path.Dir(p), path.Base(p), o.Namespace
}

// split cuts a unit's objects into parts of at most limit objects. A unit
// within the bound is one part. A larger one is hashed into k parts by each
// object's key (objectKey: its identity, group, kind, namespace and name),
// k the smallest count from ceil(n/limit) up at which no part is over the
// bound; each part keeps order.Compare order. The pinned objects are not
// hashed: they always go to the base unit, part 0. For a namespace's unit
// those are a tenant's cluster and its hardening (render.Object.Cluster:
// the cluster HelmRelease, its Pod Security ConfigMap and its egress
// policy), so that they are applied together, by one Kustomization; for
// the platform unit, every object that may be pruned (platformParts).
// Because the hash of a key ignores every other object, adding an object
// never moves another one unless k grows, and then objects only move into
// the new parts (see hash.go). Should no k up to n satisfy the bound (it
// takes a pathological set of names, or more pinned objects than the
// bound) the objects are cut in order into ceil(n/limit) parts, the pinned
// objects first, still deterministically; pinnedFit is then false.
func split(objs []fileObject, limit int, isPinned func(render.Object) bool, key func(render.Object) string) (parts [][]fileObject, pinnedFit bool) {
	n := len(objs)
	if n <= limit {
		return [][]fileObject{objs}, true
	}
	keys := make([]string, n)
	pinned := 0
	for i, o := range objs {
		if isPinned(o.Object) {
			pinned++
			continue
		}
		keys[i] = key(o.Object)
	}
	counts := make([]int, 0, n)
	idx := make([]int, n)
	for k := (n + limit - 1) / limit; k <= n; k++ {
		counts = counts[:0]
		for range k {
			counts = append(counts, 0)
		}
		counts[0] = pinned
		over := pinned > limit
		for i, o := range objs {
			if over {
				break
			}
			if isPinned(o.Object) {
				idx[i] = 0
				continue
			}
			b := model.Bucket("part", keys[i], k)
			idx[i] = b
			counts[b]++
			over = counts[b] > limit
		}
		if over {
			continue
		}
		parts := make([][]fileObject, k)
		for i, o := range objs {
			parts[idx[i]] = append(parts[idx[i]], o)
		}
		// An empty part is kept: its Kustomization applies nothing, and
		// dropping it would renumber the parts after it.
		return parts, true
	}
	ordered := make([]fileObject, 0, n)
	for _, o := range objs {
		if isPinned(o.Object) {
			ordered = append(ordered, o)
		}
	}
	for _, o := range objs {
		if !isPinned(o.Object) {
			ordered = append(ordered, o)
		}
	}
	k := (n + limit - 1) / limit
	parts = make([][]fileObject, 0, k)
	for start := 0; start < n; start += limit {
		part := slices.Clone(ordered[start:min(start+limit, n)])
		slices.SortFunc(part, func(a, b fileObject) int { return order.Compare(a.Object, b.Object) })
		parts = append(parts, part)
	}
	return parts, pinned <= limit
}

// The platform unit's parts (platformParts). Most of the platform unit
// of a large fleet is per tenant: each installer's ClusterRole,
// ClusterRoleBinding, and Role and RoleBinding in kube-system, all kept
// (render.Object.Kept: prune disabled), so that no Kustomization ever
// deletes one. Moving a kept object between parts is safe in any order
// (the part it leaves never prunes it), so only the objects that may be
// pruned need the order that the chain of a namespace's parts gives them.
// The platform unit therefore pins every object that may be pruned (the
// guard, the generator, the shard-label policy, cluster-scoped inputs) in
// its first part, hashes the kept ones by tenant (a tenant's four objects
// share a part), and, when the pinned objects fit in the first part, wires
// its parts as a star instead of a chain: the first part waits for the
// account's unit, every other part for the first, and the unit that holds
// a tenant's cluster also for the part that holds the tenant's objects.
// Waiting for the platform unit then takes two dependency checks at most,
// however many parts the fleet's size gives it, where a chain of k parts
// took k: at kustomize-controller's --requeue-dependency (30 s on
// Cozystack), a reconcile of every Kustomization at once, which meets each
// part reconciling, spent (k-1) x 30 s waiting (docs/flux-wiring.md).
//
// isCluster pins a namespace unit's cluster and its hardening;
// mayBePruned pins the platform unit's objects that are not kept.
func isCluster(o render.Object) bool { return o.Cluster }

func mayBePruned(o render.Object) bool { return !o.Kept }

// tenantKey hashes a tenant's objects together, and any other object by
// its identity.
func tenantKey(o render.Object) string {
	if o.Tenant != "" {
		return "tenant/" + o.Tenant
	}
	return objectKey(o)
}

// objectKey is what an object is hashed by: its identity without the API
// version, so that moving to a new version of a kind moves nothing.
func objectKey(o render.Object) string {
	group := ""
	if g, _, ok := strings.Cut(o.APIVersion, "/"); ok {
		group = g
	}
	return group + "/" + o.Kind + "/" + o.Namespace + "/" + o.Name
}

// PartSeparator joins a split unit's name and its part: the Kustomization
// of part 1 of computeplane-tenant-acme is computeplane-tenant-acme.part1.
// A namespace name cannot hold a dot (a DNS label), so no namespace's unit
// (computeplane-<namespace>) is ever named like another one's part: a
// child tenant named part1 (namespace tenant-acme-part1) and the second
// part of tenant-acme's unit are two names.
const PartSeparator = "."

func partName(base string, i int) string {
	if i == 0 {
		return base
	}
	return base + PartSeparator + "part" + strconv.Itoa(i)
}

func partFolder(folder string, i int) string {
	if i == 0 {
		return folder
	}
	return folder + "/part" + strconv.Itoa(i)
}

// groupLabel names group g of n: "07-of-32". The count is in the name so
// that changing spec.fleet.wiringGroups replaces every group instead of
// moving Kustomizations between groups that stay (docs/flux-wiring.md).
func groupLabel(g, n int) string {
	width := len(strconv.Itoa(n - 1))
	return fmt.Sprintf("%0*d-of-%d", width, g, n)
}

// ByNamespaceGroupPrefix starts the label of a wiring group whose units are
// hashed by namespace (spec.fleet.unitSource: ExternalArtifact):
// _flux/ns-07-of-32, Kustomization computeplane-wiring-ns-07-of-32.
const ByNamespaceGroupPrefix = "ns-"

// ShardValue is the value of the sharding label for shard s (1-based), as
// the shard controllers select it: sharding.fluxcd.io/key in (shard1).
func ShardValue(s int) string { return model.ShardValue(s) }

// assignNames shortens names over the label-value limit and refuses two
// units with one name.
func (p *Plan) assignNames(cfg *api.Config) api.Problems {
	var problems api.Problems
	seen := map[string]*Unit{}
	for _, u := range p.Units {
		u.Name = shorten(u.Name)
		for i, d := range u.DependsOn {
			u.DependsOn[i] = shorten(d)
		}
		if prev, ok := seen[u.Name]; ok {
			problems = append(problems, api.Errorf(cfg.Ref, cfg.Origin, "spec.fleet",
				"the units in %s and %s would both be reconciled by Kustomization %s; a namespace that is no tenant's named like another's routed unit (routed-<namespace>) or like the fleet's own units cannot have a unit", prev.Folder, u.Folder, u.Name))
			continue
		}
		seen[u.Name] = u
	}
	return problems
}

// shorten keeps a name within 63 characters: a longer one is cut to its
// first characters and ends in the whole SHA-256 of the whole name, in
// lowercase base32 without padding (52 characters, which a name may
// hold), so the head is the first 10 characters, computepla. Two names
// that differ are shortened alike only if SHA-256 collides: a shortened
// name is as unique as the name it stands for. A name of 63 characters or
// less is kept, and is never one a longer name is shortened to: every
// unit's name starts with computeplane- (NamePrefix), whose 11th
// character is an n, where a shortened name has its dash.
func shorten(name string) string {
	if len(name) <= maxNameLength {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	hash := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))
	head := strings.TrimRight(name[:maxNameLength-len(hash)-1], "-.")
	return head + "-" + hash
}

// suggestGroups is a group count that leaves room to grow: units spread
// over groups of about 60% of the bound.
func suggestGroups(units, limit int) int {
	return max(1, (units*10+limit*6-1)/(limit*6))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Files lays the objects of a run out as the files the fleet-folder writer
// writes with --output-dir: the one layout function. With the config's
// spec.fleet, the Flux units and their wiring (NewPlan, Plan.Files), sorted
// by path; without it, one file per object (flatFiles). Only generated
// objects are laid out, and this is the one place that says so: kept inputs
// and objects that pass through are the user's own files, already in the
// repository, and a copy without the managed-by label could never be pruned
// (docs/fleet-repo.md). The problems are the user's (NewPlan says which);
// any other failure is a bug, reported as one (api.Internal).
func Files(cfg *api.Config, objs []render.Object) ([]File, api.Problems) {
	generated := make([]render.Object, 0, len(objs))
	for _, o := range objs {
		if o.Generated {
			generated = append(generated, o)
		}
	}
	var files []File
	var err error
	if cfg.Fleet == nil {
		files, err = flatFiles(generated)
	} else {
		p, problems := NewPlan(cfg, generated)
		if len(problems) > 0 {
			return nil, problems
		}
		files, err = p.Files()
	}
	if err != nil {
		return nil, api.Problems{api.Internal(fmt.Errorf("failed to lay out the fleet folder: %w", err))}
	}
	return files, nil
}
