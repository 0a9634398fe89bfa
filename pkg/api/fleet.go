package api

import (
	"path"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults and limits of spec.fleet.
const (
	DefaultFleetInterval       = 10 * time.Minute
	DefaultMaxObjectsPerUnit   = 500
	DefaultFleetShards         = 1
	DefaultWiringNamespace     = "flux-system"
	DefaultFleetServiceAccount = "computeplane-fleet"
	DefaultWiringPath          = "_flux"
	// DefaultWiringGroups (0) lets the fleet's size choose the number of
	// wiring groups (package units, docs/flux-wiring.md).
	DefaultWiringGroups           = AutoWiringGroups
	AutoWiringGroups              = 0
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
	folderNameRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// FleetConfig is spec.fleet: how the fleet folder written with --output-dir
// is laid out in Flux units and wired to Flux (docs/flux-wiring.md). It is
// read and checked in every mode, and used only by the fleet-folder writer.
type FleetConfig struct {
	// SourceRef is the Flux source that serves the fleet repo itself.
	SourceRef FleetSourceRef `json:"sourceRef"`
	// Path is the output folder inside that source, cleaned and relative,
	// without a leading "./" ("." for the source's root).
	Path string `json:"path"`
	// Interval is how often every Kustomization of the wiring reconciles,
	// read from IntervalText.
	Interval     time.Duration `json:"-"`
	IntervalText string        `json:"interval"`
	// MaxObjectsPerUnit bounds the objects of one unit (and of one wiring
	// group); a larger unit is split.
	MaxObjectsPerUnit int `json:"maxObjectsPerUnit"`
	// Shards is the number of kustomize-controller shards the units are
	// spread over; 1 means no sharding label.
	Shards int `json:"shards"`
	// WiringNamespace is where the wiring Kustomizations live.
	WiringNamespace string `json:"wiringNamespace"`
	// WiringPath is the folder of the wiring inside the output folder.
	WiringPath string `json:"wiringPath"`
	// WiringGroups is the number of wiring groups the unit Kustomizations
	// are hashed into; AutoWiringGroups (0, the default) lets the number of
	// units choose it.
	WiringGroups int `json:"wiringGroups"`
	// ServiceAccountName is the fleet's own account, in WiringNamespace:
	// every Kustomization the function renders applies as it (Flux
	// impersonates it), so the guard tells the fleet from everything else
	// that shares the Flux controllers' account.
	ServiceAccountName string `json:"serviceAccountName"`
}

// FleetSourceRef names the Flux source of the fleet repo.
type FleetSourceRef struct {
	Kind      string `json:"kind"` // GitRepository, OCIRepository or Bucket
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// newFleetConfig returns the defaults that a value in the config, even a
// zero one, overrides: they are set before decoding.
func newFleetConfig() *FleetConfig {
	return &FleetConfig{
		MaxObjectsPerUnit: DefaultMaxObjectsPerUnit,
		Shards:            DefaultFleetShards,
		WiringGroups:      DefaultWiringGroups,
		WiringPath:        DefaultWiringPath,
	}
}

// FluxPath returns the path a Kustomization gives for a folder inside the
// output folder: "./<path>/<folder>".
func (c *FleetConfig) FluxPath(folder string) string {
	return "./" + path.Join(c.Path, folder)
}

// Default fills in what spec.fleet leaves out.
func (c *FleetConfig) Default() {
	if c.WiringNamespace == "" {
		c.WiringNamespace = DefaultWiringNamespace
	}
	if c.ServiceAccountName == "" {
		c.ServiceAccountName = DefaultFleetServiceAccount
	}
	if c.SourceRef.Namespace == "" {
		c.SourceRef.Namespace = c.WiringNamespace
	}
	c.Interval = DefaultFleetInterval
}

// validate checks spec.fleet, cleans its path and reads its interval.
// written is [Config]'s.
func (c *FleetConfig) validate(d *decoder, written map[string]bool) {
	const f = "spec.fleet"
	if written["fleet.sourceRef"] {
		if c.SourceRef.Kind == "" {
			d.fail(f+".sourceRef.kind", "is required")
		}
		if c.SourceRef.Name == "" {
			d.fail(f+".sourceRef.name", "is required")
		}
	} else {
		d.fail(f+".sourceRef", "is required: the Flux source (kind, name, namespace) that serves the fleet repo")
	}
	switch c.SourceRef.Kind {
	case "", fleetSourceKindGitRepository, fleetSourceKindOCIRepository, fleetSourceKindBucket:
	default:
		d.fail(f+".sourceRef.kind", "must be %s, not %q", fleetSourceKindsForMessages, c.SourceRef.Kind)
	}
	if c.SourceRef.Name != "" && !validDNSSubdomain(c.SourceRef.Name) {
		d.fail(f+".sourceRef.name", "%q is not a valid object name", c.SourceRef.Name)
	}
	if !ValidDNSLabel(c.WiringNamespace) {
		d.fail(f+".wiringNamespace", "%q is not a valid namespace name", c.WiringNamespace)
	}
	if len(validation.IsDNS1123Subdomain(c.ServiceAccountName)) > 0 {
		d.fail(f+".serviceAccountName", "%q is not a valid service account name", c.ServiceAccountName)
	}
	if written["fleet.sourceRef.namespace"] && !ValidDNSLabel(c.SourceRef.Namespace) {
		d.fail(f+".sourceRef.namespace", "%q is not a valid namespace name", c.SourceRef.Namespace)
	}

	if !written["fleet.path"] {
		d.fail(f+".path", "is required: the path of the output folder inside the fleet repo, such as ./fleet")
	} else if clean, msg := cleanFleetPath(c.Path); msg != "" {
		d.fail(f+".path", "%q %s", c.Path, msg)
	} else {
		c.Path = clean
	}

	if c.IntervalText != "" {
		if t, ok := d.timeout(c.IntervalText, f+".interval"); ok {
			c.Interval = t
		}
	}
	d.between(f+".maxObjectsPerUnit", c.MaxObjectsPerUnit, MinObjectsPerUnit, MaxObjectsPerUnit, "kustomize build time grows with the square of a unit's size")
	d.between(f+".shards", c.Shards, 1, MaxFleetShards, "1 means no sharding label; N labels the units shard1 to shardN")
	d.between(f+".wiringGroups", c.WiringGroups, AutoWiringGroups, MaxWiringGroups, "the unit Kustomizations are hashed into this many wiring groups; 0 lets the fleet's size choose")

	switch {
	case !strings.HasPrefix(c.WiringPath, "_") || !folderNameRE.MatchString(c.WiringPath):
		d.fail(f+".wiringPath", "%q must be %s, made of %s", c.WiringPath, fleetWiringPathRuleForMessage, fleetFolderCharsForMessages)
	case c.WiringPath == PlatformUnitFolder:
		d.fail(f+".wiringPath", "%q is the folder of the platform unit; choose another name", c.WiringPath)
	case c.WiringPath == AccountUnitFolder:
		d.fail(f+".wiringPath", "%q is the folder of the fleet's account unit; choose another name", c.WiringPath)
	}
}

// PlatformUnitFolder is the folder of the platform unit inside the output
// folder; spec.fleet.wiringPath must differ from it.
const PlatformUnitFolder = "_platform"

// AccountUnitFolder is the folder of the unit of the fleet's own account
// (its ServiceAccount, ClusterRole and ClusterRoleBinding), which the
// platform unit depends on; spec.fleet.wiringPath must differ from it.
const AccountUnitFolder = "_account"

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

// between reports v outside [lo, hi], saying why the bounds are there.
func (d *decoder) between(field string, v, lo, hi int, why string) {
	if v < lo || v > hi {
		d.fail(field, "must be between %d and %d, not %d (%s)", lo, hi, v, why)
	}
}
