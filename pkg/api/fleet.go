package api

import (
	"path"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Defaults of spec.fleet; its bounds are the schema's.
const (
	DefaultFleetInterval       = 10 * time.Minute
	DefaultMaxObjectsPerUnit   = 500
	DefaultFleetShards         = 1
	DefaultWiringNamespace     = "flux-system"
	DefaultFleetServiceAccount = "computeplane-fleet"
	DefaultWiringPath          = "_flux"
	// DefaultWiringGroups (AutoWiringGroups, 0) lets the fleet's size
	// choose the number of wiring groups (package units,
	// docs/flux-wiring.md).
	DefaultWiringGroups           = AutoWiringGroups
	AutoWiringGroups              = 0
	fleetFolderCharsForMessages   = "letters, digits, '-', '_' and '.'"
	fleetWiringPathRuleForMessage = "a single folder name that starts with '_' (a namespace's folder never does)"
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
	// UnitSource is what the units' Kustomizations read: UnitSourceFleet
	// or UnitSourceExternalArtifact; by default the latter where the named
	// Flux serves it (spec.platform.flux), the former elsewhere.
	UnitSource string `json:"unitSource"`
}

// ArtifactPerNamespace reports whether each namespace's units read an
// ExternalArtifact of their own (spec.fleet.unitSource: ExternalArtifact).
func (c *FleetConfig) ArtifactPerNamespace() bool { return c.UnitSource == UnitSourceExternalArtifact }

// The values of spec.fleet.unitSource: what a unit's Kustomization reads.
const (
	// UnitSourceFleet: the fleet source itself (spec.fleet.sourceRef), so
	// that kustomize-controller extracts the whole fleet for every unit.
	UnitSourceFleet = "FleetSource"
	// UnitSourceExternalArtifact: an ExternalArtifact of the unit's
	// namespace, which source-watcher cuts from the fleet source (package
	// units, docs/flux-wiring.md "A source per namespace"). It needs
	// source-watcher and kustomize-controller's ExternalArtifact feature
	// gate, which stock Flux leaves off: the config names it, the function
	// never assumes it.
	UnitSourceExternalArtifact = "ExternalArtifact"
)

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

// Default fills in what spec.fleet leaves out; platform is spec.platform,
// defaulted.
func (c *FleetConfig) Default(platform PlatformConfig) {
	if c.UnitSource == "" {
		c.UnitSource = UnitSourceFleet
		if platform.ServesExternalArtifact() {
			c.UnitSource = UnitSourceExternalArtifact
		}
	}
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
// written is [Config]'s, platform spec.platform.
func (c *FleetConfig) validate(d *decoder, written map[string]bool, platform PlatformConfig) {
	const f = "spec.fleet"
	if c.ArtifactPerNamespace() && !platform.ServesExternalArtifact() {
		d.fail(f+".unitSource", "ExternalArtifact needs kustomize-controller's ExternalArtifact feature gate, which the Flux that spec.platform.flux names, %s, leaves off; use FleetSource (the default there), or name Cozystack's Flux, which has the gate on (docs/platforms.md)", platform.Flux)
	}
	// The schema requires sourceRef, its kind and name, and path: an
	// empty name is as good as none.
	if written["fleet.sourceRef.name"] && c.SourceRef.Name == "" {
		d.fail(f+".sourceRef.name", "is required")
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

	if written["fleet.path"] { // else required by the schema, and reported
		if clean, msg := cleanFleetPath(c.Path); msg != "" {
			d.fail(f+".path", "%q %s", c.Path, msg)
		} else {
			c.Path = clean
		}
	}

	if c.IntervalText != "" {
		if t, ok := d.timeout(c.IntervalText, f+".interval"); ok {
			c.Interval = t
		}
	}
	// The schema bounds maxObjectsPerUnit, shards and wiringGroups, and
	// its pattern makes wiringPath one folder name starting with '_'.
	switch {
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
