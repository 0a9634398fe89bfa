package units

import (
	"fmt"
	"path"
	"slices"
	"strings"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	swv1 "github.com/fluxcd/source-watcher/api/v2/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

// A source per namespace (spec.fleet.unitSource: ExternalArtifact,
// docs/flux-wiring.md "A source per namespace"). kustomize-controller
// extracts the whole artifact of a Kustomization's source at every
// reconcile, so with one fleet source every unit costs the whole fleet.
// Here source-watcher cuts the fleet source in two levels:
//
//   - the fleet's ArtifactGenerator (FleetGeneratorName, in the wiring
//     folder, applied by the root from the fleet source) makes one
//     ExternalArtifact per wiring group, named like the group's
//     Kustomization, of the group's folder. A namespace's folder lies
//     below its group's (<wiringPath>/<g>-of-<n>/<namespace>), so these
//     copy rules name the groups only: they never change when a tenant
//     comes or goes, only when the number of groups does;
//   - one ArtifactGenerator per wiring group that holds a namespace (named
//     like the group, in the wiring folder too, so also applied by the root
//     from the fleet source) makes one ExternalArtifact per namespace of
//     the group (NamespaceArtifactName) from the group's artifact. Its copy
//     rules change with the group's membership; a new tenant is a new
//     output, so a new ExternalArtifact object, never stale content.
//
// The namespace's units, parts, routed units and its tenant's baseline read
// the namespace's artifact; the group's Kustomization reads the group's.
// The fleet's own units (the account's and the platform's, with its parts)
// read one artifact of their own, FleetUnitsArtifactName, which the fleet's
// generator makes of their two folders: one artifact, because
// kustomize-controller orders dependsOn by revision only between
// Kustomizations of one source, and the platform waits for the account's
// unit at the same revision (plan.go); of their own, so that a commit that
// changes neither (a tenant without a ComputePlane added) leaves them
// alone. Only the root reads the fleet source itself.
//
// Every unit waits for the platform unit. With artifacts, the wait accepts
// a platform unit that is reconciling an artifact after it had applied one
// (platformReadyExpr): each reconcile of the platform would otherwise put
// off every unit that meets it, thousands of retries at 1,000 tenants.

// FleetGeneratorName is the ArtifactGenerator that cuts the fleet source
// into one ExternalArtifact per wiring group, and one for the fleet's own
// units.
const FleetGeneratorName = NamePrefix + "wiring"

// FleetUnitsArtifactName is the ExternalArtifact of the fleet's own units:
// the account's folder and the platform unit's, below _account/ and
// _platform/ as in the fleet folder. No namespace's artifact is named so:
// theirs start with a group's name (NamespaceArtifactName).
const FleetUnitsArtifactName = PlatformUnitName

// platformReadyExpr is the readyExpr of a unit's dependsOn entry on the
// platform unit (or the account's, without one) when units read artifacts:
// ready when kustomize-controller's own check would say so (the Ready
// condition true at the observed generation), and also, once the platform
// unit has applied a revision, while it reconciles again (Ready unknown,
// Progressing) or waits for its own dependencies to do so (Ready false,
// DependencyNotReady: the account's unit, or the next of its parts, which
// at 1,000 tenants are five). What a unit needs of the
// platform, the guard and the ArtifactGenerator in force and the account's
// grants, is then in place: a reconcile never removes it, and a new
// generation of the platform's Kustomization still waits. Without the
// AdditiveCELDependencyCheck gate (off in Cozystack's and stock Flux), the
// expression replaces the built-in check, which for Kustomizations of two
// sources compares nothing more; kustomize-controller has read readyExpr
// since v1.7, older than every supported platform (docs/platforms.md).
//
// The fields are tested with has() first: kustomize-controller hands the
// Kustomization over without the fields that are empty.
const platformReadyExpr = `has(dep.status.observedGeneration) && dep.status.observedGeneration == dep.metadata.generation && ` +
	`has(dep.status.conditions) && dep.status.conditions.exists(c, c.type == 'Ready' && (c.status == 'True' || ` +
	`(has(dep.status.lastAppliedRevision) && ((c.status == 'Unknown' && c.reason == 'Progressing') || ` +
	`(c.status == 'False' && c.reason == 'DependencyNotReady')))))`

// MaxArtifactsPerGenerator is source-watcher's bound on the artifacts of one
// ArtifactGenerator (spec.artifacts, maxItems in its CRD).
const MaxArtifactsPerGenerator = 1000

// Aliases of the sources in the generators' copy rules.
const (
	fleetAlias = "fleet"
	groupAlias = "group"
)

// NamespaceArtifactName is the ExternalArtifact of a namespace in wiring
// group g: <group's Kustomization>-<namespace>. The group is in the name so
// that when the number of groups changes (every group is replaced) the new
// group's generator never writes an artifact the old one still owns and
// deletes when it goes.
func NamespaceArtifactName(g *Group, namespace string) string { return g.Name + "-" + namespace }

// placeInArtifacts moves every namespace's folder below its wiring group's
// folder and names the artifacts the Kustomizations read. It runs once the
// groups are final. The problems: a group whose generator would make more
// artifacts than source-watcher allows.
func (p *Plan) placeInArtifacts(cfg *api.Config) api.Problems {
	// The fleet's generator makes one artifact per group, and the schema
	// bounds spec.fleet.wiringGroups (and MaxAutoWiringGroups the count
	// the fleet's size chooses) within source-watcher's bound; a group's
	// generator makes one per namespace of the group, which only the
	// group's size bounds.
	var problems api.Problems
	for _, g := range p.Groups {
		g.Artifact = g.Name
		if n := len(g.namespaces()); n > MaxArtifactsPerGenerator {
			problems = append(problems, api.Errorf(cfg.Ref, cfg.Origin, "spec.fleet.wiringGroups",
				"wiring group %s would hold %d namespaces, one ExternalArtifact each, more than the %d artifacts source-watcher allows an ArtifactGenerator; raise spec.fleet.wiringGroups to at least %d, in a commit of its own (docs/flux-wiring.md)",
				g.Name, n, MaxArtifactsPerGenerator, suggestGroups(len(p.Units), MaxArtifactsPerGenerator)))
		}
	}
	for _, u := range p.Units {
		if u.Namespace == "" {
			// The account's unit and the platform's parts: their folders
			// keep their place in the artifact of the fleet's own units.
			u.Artifact = FleetUnitsArtifactName
			continue
		}
		g := p.Groups[u.Group]
		u.Artifact = NamespaceArtifactName(g, u.Namespace)
		u.ArtifactFolder = path.Join(g.Folder, u.Namespace)
		u.Folder = path.Join(g.Folder, u.Folder)
	}
	return problems
}

// namespaces are the namespaces of a group's units, sorted, each once.
func (g *Group) namespaces() []string {
	var out []string
	for _, u := range g.Units {
		if u.Namespace != "" {
			out = append(out, u.Namespace)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// artifactPath is the path of a folder of the fleet folder inside the
// artifact that holds root, as a Kustomization gives it: "./" or
// "./part1", "./_routed"...
func artifactPath(root, folder string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(folder, root), "/")
	return "./" + rel
}

// artifactSource is a Kustomization's reference to an ExternalArtifact in
// the wiring namespace.
func (p *Plan) artifactSource(name string) kustomizev1.CrossNamespaceSourceReference {
	return kustomizev1.CrossNamespaceSourceReference{Kind: sourcev1.ExternalArtifactKind, Name: name, Namespace: p.Fleet.WiringNamespace}
}

// FleetGenerator is the ArtifactGenerator that makes one ExternalArtifact
// per wiring group, of the group's folder, and one of the fleet's own units
// (FleetUnitsArtifactName), from the fleet source. Its artifacts are
// revisioned by their content (no spec revision), so a group's artifact
// changes, and the group's Kustomization and generator work, only when
// something in the group changed; the same holds for the fleet's units.
func (p *Plan) FleetGenerator() *swv1.ArtifactGenerator {
	fc := p.Fleet
	outputs := make([]swv1.OutputArtifact, 0, len(p.Groups)+1)
	var own []swv1.CopyOperation
	for _, folder := range []string{api.AccountUnitFolder, api.PlatformUnitFolder} {
		if slices.ContainsFunc(p.Units, func(u *Unit) bool { return u.Artifact == FleetUnitsArtifactName && u.Folder == folder }) {
			own = append(own, swv1.CopyOperation{From: "@" + fleetAlias + "/" + path.Join(fc.Path, folder) + "/**", To: "@artifact/" + folder + "/"})
		}
	}
	if len(own) > 0 {
		outputs = append(outputs, swv1.OutputArtifact{Name: FleetUnitsArtifactName, Copy: own})
	}
	for _, g := range p.Groups {
		outputs = append(outputs, swv1.OutputArtifact{
			Name: g.Artifact,
			Copy: []swv1.CopyOperation{{From: "@" + fleetAlias + "/" + path.Join(fc.Path, g.Folder) + "/**", To: "@artifact/"}},
		})
	}
	return p.generator(FleetGeneratorName, swv1.SourceReference{
		Alias: fleetAlias, Kind: fc.SourceRef.Kind, Name: fc.SourceRef.Name, Namespace: fc.SourceRef.Namespace,
	}, outputs)
}

// GroupGenerator is the ArtifactGenerator that makes one ExternalArtifact
// per namespace of a wiring group from the group's artifact, or nil for a
// group without namespaces (source-watcher wants at least one artifact).
func (p *Plan) GroupGenerator(g *Group) *swv1.ArtifactGenerator {
	namespaces := g.namespaces()
	if len(namespaces) == 0 {
		return nil
	}
	outputs := make([]swv1.OutputArtifact, 0, len(namespaces))
	for _, ns := range namespaces {
		outputs = append(outputs, swv1.OutputArtifact{
			Name: NamespaceArtifactName(g, ns),
			Copy: []swv1.CopyOperation{{From: "@" + groupAlias + "/" + ns + "/**", To: "@artifact/"}},
		})
	}
	return p.generator(g.Name, swv1.SourceReference{
		Alias: groupAlias, Kind: sourcev1.ExternalArtifactKind, Name: g.Artifact, Namespace: p.Fleet.WiringNamespace,
	}, outputs)
}

func (p *Plan) generator(name string, source swv1.SourceReference, outputs []swv1.OutputArtifact) *swv1.ArtifactGenerator {
	return &swv1.ArtifactGenerator{
		TypeMeta: metav1.TypeMeta{APIVersion: swv1.GroupVersion.String(), Kind: swv1.ArtifactGeneratorKind},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: p.Fleet.WiringNamespace,
			Labels:    map[string]string{wire.ManagedByLabel: wire.ManagedByValue},
		},
		Spec: swv1.ArtifactGeneratorSpec{Sources: []swv1.SourceReference{source}, OutputArtifacts: outputs},
	}
}

// generatorFiles are the files of the generators, in the wiring folder, by
// file name: the fleet's, then the groups' that hold a namespace.
func (p *Plan) generatorFiles() ([]File, error) {
	gens := []*swv1.ArtifactGenerator{p.FleetGenerator()}
	for _, g := range p.Groups {
		if gen := p.GroupGenerator(g); gen != nil {
			gens = append(gens, gen)
		}
	}
	files := make([]File, 0, len(gens))
	for _, gen := range gens {
		data, err := encode(gen)
		if err != nil {
			return nil, fmt.Errorf("failed to encode ArtifactGenerator %s: %w", gen.Name, err)
		}
		files = append(files, File{Path: path.Join(p.Fleet.WiringPath, generatorFile(gen.Name)), Data: data})
	}
	return files, nil
}

// generatorFile is the file of an ArtifactGenerator in the wiring folder.
func generatorFile(name string) string { return "artifactgenerator-" + name + ".yaml" }
