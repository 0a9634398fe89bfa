package api

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// Defaults and limits of spec.fleet.
const (
	DefaultFleetInterval          = 10 * time.Minute
	DefaultMaxObjectsPerUnit      = 500
	DefaultFleetShards            = 1
	DefaultWiringNamespace        = "flux-system"
	DefaultWiringPath             = "_flux"
	DefaultWiringGroups           = 64
	MinObjectsPerUnit             = 10
	MaxObjectsPerUnit             = 5000
	MaxFleetShards                = 100
	MaxWiringGroups               = 1000
	fleetSourceKindGitRepository  = "GitRepository"
	fleetSourceKindOCIRepository  = "OCIRepository"
	fleetSourceKindBucket         = "Bucket"
	fleetSourceKindsForMessages   = "GitRepository, OCIRepository or Bucket"
	fleetFolderCharsForMessages   = "letters, digits, '-', '_' and '.'"
	fleetWiringPathRuleForMessage = "a single folder name that starts with '_' (a namespace's folder never does)"
)

var (
	dns1123SubdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	folderNameRE       = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// FleetConfig is spec.fleet: how the fleet folder written with --output-dir
// is laid out in Flux units and wired to Flux (docs/flux-wiring.md). It is
// read and checked in every mode, and used only by the fleet-folder writer.
type FleetConfig struct {
	// SourceRef is the Flux source that serves the fleet repo itself.
	SourceRef FleetSourceRef
	// Path is the output folder inside that source, cleaned and relative,
	// without a leading "./" ("." for the source's root).
	Path string
	// Interval is how often every Kustomization of the wiring reconciles.
	Interval time.Duration
	// MaxObjectsPerUnit bounds the objects of one unit (and of one wiring
	// group); a larger unit is split.
	MaxObjectsPerUnit int
	// Shards is the number of kustomize-controller shards the units are
	// spread over; 1 means no sharding label.
	Shards int
	// WiringNamespace is where the wiring Kustomizations live.
	WiringNamespace string
	// WiringPath is the folder of the wiring inside the output folder.
	WiringPath string
	// WiringGroups is the number of wiring groups the unit Kustomizations
	// are hashed into.
	WiringGroups int
}

// FleetSourceRef names the Flux source of the fleet repo.
type FleetSourceRef struct {
	Kind      string // GitRepository, OCIRepository or Bucket
	Name      string
	Namespace string
}

// FluxPath returns the path a Kustomization gives for a folder inside the
// output folder: "./<path>/<folder>".
func (c *FleetConfig) FluxPath(folder string) string {
	return "./" + path.Join(c.Path, folder)
}

// decodeFleet reads spec.fleet; it returns nil when the section is absent.
func (d *decoder) decodeFleet(n *yaml.Node) *FleetConfig {
	const f = "spec.fleet"
	if yamlnode.IsNull(n) {
		return nil
	}
	m := d.mapping(n, f)
	if m == nil {
		return nil
	}
	d.keys(m, f, "sourceRef", "path", "interval", "maxObjectsPerUnit", "shards", "wiringNamespace", "wiringPath", "wiringGroups")
	c := &FleetConfig{}

	ref := d.mapping(yamlnode.Get(m, "sourceRef"), f+".sourceRef")
	if ref == nil && yamlnode.IsNull(yamlnode.Get(m, "sourceRef")) {
		d.fail(f+".sourceRef", "is required: the Flux source (kind, name, namespace) that serves the fleet repo")
	}
	d.keys(ref, f+".sourceRef", "kind", "name", "namespace")
	if ref != nil {
		c.SourceRef = FleetSourceRef{
			Kind:      d.requiredStr(yamlnode.Get(ref, "kind"), f+".sourceRef.kind"),
			Name:      d.requiredStr(yamlnode.Get(ref, "name"), f+".sourceRef.name"),
			Namespace: d.str(yamlnode.Get(ref, "namespace"), f+".sourceRef.namespace"),
		}
	}
	switch c.SourceRef.Kind {
	case "", fleetSourceKindGitRepository, fleetSourceKindOCIRepository, fleetSourceKindBucket:
	default:
		d.fail(f+".sourceRef.kind", "must be %s, not %q", fleetSourceKindsForMessages, c.SourceRef.Kind)
	}
	if c.SourceRef.Name != "" && (len(c.SourceRef.Name) > 253 || !dns1123SubdomainRE.MatchString(c.SourceRef.Name)) {
		d.fail(f+".sourceRef.name", "%q is not a valid object name", c.SourceRef.Name)
	}

	c.WiringNamespace = d.str(yamlnode.Get(m, "wiringNamespace"), f+".wiringNamespace")
	if c.WiringNamespace == "" {
		c.WiringNamespace = DefaultWiringNamespace
	} else if !ValidDNSLabel(c.WiringNamespace) {
		d.fail(f+".wiringNamespace", "%q is not a valid namespace name", c.WiringNamespace)
	}
	if c.SourceRef.Namespace == "" {
		c.SourceRef.Namespace = c.WiringNamespace
	} else if !ValidDNSLabel(c.SourceRef.Namespace) {
		d.fail(f+".sourceRef.namespace", "%q is not a valid namespace name", c.SourceRef.Namespace)
	}

	if p := yamlnode.Get(m, "path"); yamlnode.IsNull(p) {
		d.fail(f+".path", "is required: the path of the output folder inside the fleet repo, such as ./fleet")
	} else if raw := d.str(p, f+".path"); raw != "" || yamlnode.Resolve(p).ShortTag() == yamlnode.TagString {
		if clean, msg := cleanFleetPath(raw); msg != "" {
			d.fail(f+".path", "%q %s", raw, msg)
		} else {
			c.Path = clean
		}
	}

	c.Interval = DefaultFleetInterval
	if s := d.str(yamlnode.Get(m, "interval"), f+".interval"); s != "" {
		if t, ok := d.timeout(s, f+".interval"); ok {
			c.Interval = t
		}
	}

	c.MaxObjectsPerUnit = d.integer(yamlnode.Get(m, "maxObjectsPerUnit"), f+".maxObjectsPerUnit", DefaultMaxObjectsPerUnit, MinObjectsPerUnit, MaxObjectsPerUnit,
		"kustomize build time grows with the square of a unit's size")
	c.Shards = d.integer(yamlnode.Get(m, "shards"), f+".shards", DefaultFleetShards, 1, MaxFleetShards,
		"1 means no sharding label; N labels the units shard1 to shardN")
	c.WiringGroups = d.integer(yamlnode.Get(m, "wiringGroups"), f+".wiringGroups", DefaultWiringGroups, 1, MaxWiringGroups,
		"the unit Kustomizations are hashed into this many wiring groups")

	c.WiringPath = d.str(yamlnode.Get(m, "wiringPath"), f+".wiringPath")
	if yamlnode.Get(m, "wiringPath") == nil {
		c.WiringPath = DefaultWiringPath
	}
	switch {
	case !strings.HasPrefix(c.WiringPath, "_") || !folderNameRE.MatchString(c.WiringPath):
		d.fail(f+".wiringPath", "%q must be %s, made of %s", c.WiringPath, fleetWiringPathRuleForMessage, fleetFolderCharsForMessages)
	case c.WiringPath == PlatformUnitFolder:
		d.fail(f+".wiringPath", "%q is the folder of the platform unit; choose another name", c.WiringPath)
	}
	return c
}

// PlatformUnitFolder is the folder of the platform unit inside the output
// folder; spec.fleet.wiringPath must differ from it.
const PlatformUnitFolder = "_platform"

// cleanFleetPath checks a path inside the fleet repo and returns it cleaned,
// relative and without a leading "./"; msg says what is wrong.
func cleanFleetPath(p string) (clean, msg string) {
	switch {
	case p == "":
		return "", "must not be empty; use \".\" for the root of the source"
	case strings.HasPrefix(p, "/"):
		return "", "must be relative to the root of the source, such as ./fleet"
	case strings.Contains(p, `\`):
		return "", "must use '/' between folders"
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", "must not leave the source with '..'"
		}
	}
	return path.Clean(p), ""
}

// integer reads an optional integer field within [lo, hi].
func (d *decoder) integer(n *yaml.Node, field string, def, lo, hi int, why string) int {
	if yamlnode.IsNull(n) {
		return def
	}
	n = yamlnode.Resolve(n)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != yamlnode.TagInt {
		d.fail(field, "must be a whole number, not %s", yamlnode.Describe(n))
		return def
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil || v < lo || v > hi {
		d.fail(field, "must be between %d and %d, not %s (%s)", lo, hi, n.Value, why)
		return def
	}
	return v
}
