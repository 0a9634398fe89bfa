package api

import (
	"fmt"
	"strconv"
	"strings"
)

// The Kubernetes minors of the management cluster the function supports
// (docs/platforms.md): the line Cozystack supports is the oldest and the
// default, so that a config that names nothing renders what applies there.
const (
	DefaultKubernetesVersion = "1.33"
	oldestKubernetesMinor    = 33
	newestKubernetesMinor    = 36
)

// PlatformConfig is spec.platform: what the management cluster serves, as
// the operator names it. The function never asks a cluster; it renders an
// object, a field or a CEL function only where the named version serves it
// (see [Feature]).
type PlatformConfig struct {
	// KubernetesVersion is the management cluster's Kubernetes minor,
	// "1.33" to "1.36" (default "1.33").
	KubernetesVersion string `json:"kubernetesVersion"`
	// ShardOperator says whether Cozystack's flux-shard-operator runs on
	// the management cluster: ShardOperatorPresent (the default, as
	// Cozystack v1.6 deploys it in cozy-fluxcd) or ShardOperatorAbsent.
	// It chooses spec.releases.shardLabel's default; the function never
	// asks the cluster.
	ShardOperator string `json:"shardOperator"`
	// Flux is the Flux the management cluster runs, FluxCozystack (the
	// default) or FluxInstall: what follows from it is in [Config.Default]
	// and docs/platforms.md.
	Flux string `json:"flux"`

	// ClusterChart is the Cozystack line of the apps/kubernetes chart the
	// platform serves (default Combined): where a ComputePlane's workers
	// come from (see [ClusterChart]).
	ClusterChart ClusterChart `json:"clusterChart"`

	// PoolMigration is the step of the move from the Combined line to
	// SplitPools that this render makes ("" when no move is under way; see
	// [PoolMigration]).
	PoolMigration PoolMigration `json:"poolMigration"`

	minor int // of KubernetesVersion, once validated; 0 before
}

// The values of spec.platform.shardOperator.
const (
	ShardOperatorPresent = "Present"
	ShardOperatorAbsent  = "Absent"
)

// The values of spec.platform.flux.
const (
	// FluxCozystack is the Flux Cozystack installs: its controllers run in
	// cozy-fluxcd as one service account, with source-watcher, and
	// kustomize- and helm-controller have the ExternalArtifact feature
	// gate on.
	FluxCozystack = "Cozystack"
	// FluxInstall is stock Flux, as `flux install` and `flux bootstrap`
	// run it: each controller its own service account in flux-system, the
	// ExternalArtifact gate off.
	FluxInstall = "FluxInstall"
	// DefaultFlux is the Flux of the platform the function targets.
	DefaultFlux = FluxCozystack
)

// ServesExternalArtifact reports whether the named Flux's
// kustomize-controller reads an ExternalArtifact (its feature gate is on).
func (p PlatformConfig) ServesExternalArtifact() bool { return p.Flux != FluxInstall }

// ClusterChart names a line of Cozystack's apps/kubernetes chart: the
// function renders a ComputePlane's workers as that line takes them, and
// never guesses the line (docs/platforms.md, "The Cozystack line").
type ClusterChart string

const (
	// ClusterChartCombined: apps/kubernetes renders the workers from
	// values.nodeGroups (every Cozystack release up to v1.6.2, 3c780acd).
	// The default.
	ClusterChartCombined ClusterChart = "Combined"
	// ClusterChartSplitPools: apps/kubernetes renders no worker (after
	// cozystack#3315) and each node group is a release of
	// apps/kubernetes-nodes that attaches to the cluster its values name in
	// clusterReleaseName, as Cozystack's ComputePlane module (6a645043)
	// requires of the chart.
	ClusterChartSplitPools ClusterChart = "SplitPools"
	// ClusterChartSplitPoolsByConvention: the split as merged in
	// cozystack#3315 (9853e47b), whose apps/kubernetes-nodes attaches a pool
	// only to the cluster kubernetes-<cluster>. The function cannot serve
	// it: a ComputePlane's cluster is released as computeplane, so no pool
	// of that chart would ever join it. Named so that the config can say it
	// and be refused with the reason.
	ClusterChartSplitPoolsByConvention ClusterChart = "SplitPoolsByConvention"
)

// Split reports whether the line takes workers as pool releases.
func (c ClusterChart) Split() bool { return c == ClusterChartSplitPools }

// PoolMigration is a step of the move of ComputePlanes rendered for the
// Combined line to SplitPools (docs/flux-wiring.md, "Moving to split worker
// pools"). The function cannot know what the previous render was; the
// config says which step this render is.
type PoolMigration string

const (
	// PoolMigrationPin (with clusterChart Combined): the cluster releases
	// pin their worker objects with helm.sh/resource-policy: keep, so that
	// the platform's upgrade to the split chart, which renders no worker,
	// leaves every MachineDeployment, KubevirtMachineTemplate,
	// MachineHealthCheck and worker WorkloadMonitor, and so every worker VM,
	// in place. Rendered, and reconciled, before the platform upgrades.
	PoolMigrationPin PoolMigration = "Pin"
	// PoolMigrationAdopt (with clusterChart SplitPools): the pool releases
	// adopt the worker objects that Pin kept through the platform's
	// upgrade. The render also hands each pool's MachineDeployment to its
	// pool release (Helm's ownership annotations, which the pool chart
	// checks before it renders), applied by the fleet. Rendered after the
	// platform upgraded, until every pool release is Ready.
	PoolMigrationAdopt PoolMigration = "Adopt"
)

// PoolReleasePrefix is how Cozystack names the release of a worker pool of
// the cluster released as cluster: kubernetes-nodes-<cluster>-<pool>
// (apps/kubernetes-nodes derives the pool's name from it).
func PoolReleasePrefix(cluster string) string { return "kubernetes-nodes-" + cluster + "-" }

// Feature is something in the render that not every supported platform
// serves: what it is, in the words of an error message, and the Kubernetes
// minor that serves it by default.
type Feature struct {
	What  string
	Since string
	minor int
}

// The features that need more than the oldest supported platform.
var (
	// FeatureMutatingAdmissionPolicy: admissionregistration.k8s.io/v1
	// MutatingAdmissionPolicy, GA and on by default from 1.36 (beta and
	// off by default in 1.34 and 1.35, alpha in 1.33). The shard-label
	// policy needs it (spec.releases.shardLabel: Admission).
	FeatureMutatingAdmissionPolicy = Feature{What: "admissionregistration.k8s.io/v1 MutatingAdmissionPolicy", Since: "1.36", minor: 36}

	// FeatureIsolatedPolicyVariables: ValidatingAdmissionPolicy
	// variables compiled into a type of each policy's own. Before 1.36
	// every policy's variables share one type whose field map a compile
	// writes while evaluations read it, and kube-apiserver can die of
	// it (kubernetes/kubernetes#135757). The guard uses variables only
	// where this is served and inlines them elsewhere (docs/guard.md).
	FeatureIsolatedPolicyVariables = Feature{What: "ValidatingAdmissionPolicy variables of a type of each policy's own (kubernetes/kubernetes#135757)", Since: "1.36", minor: 36}
)

// Serves reports whether the named platform serves f. Before the config is
// validated (or when its version is not one the function knows) it serves
// only what the oldest supported platform does.
func (p PlatformConfig) Serves(f Feature) bool {
	minor := p.minor
	if minor == 0 {
		minor, _ = kubernetesMinor(p.KubernetesVersion)
	}
	return minor >= f.minor
}

// validate checks spec.platform and reports whether the version is known.
func (p *PlatformConfig) validate(d *decoder) bool {
	minor, ok := kubernetesMinor(p.KubernetesVersion)
	if !ok {
		d.fail("spec.platform.kubernetesVersion", "%s", kubernetesVersionProblem(p.KubernetesVersion))
		return false
	}
	p.minor = minor
	return true
}

// validateLine checks spec.platform.clusterChart and poolMigration against
// each other and the delivery.
func (p *PlatformConfig) validateLine(d *decoder, delivery Delivery) {
	switch p.ClusterChart {
	case ClusterChartSplitPoolsByConvention:
		d.fail("spec.platform.clusterChart", "SplitPoolsByConvention is the split as merged in cozystack#3315, whose apps/kubernetes-nodes attaches a pool only to the cluster kubernetes-<cluster>; a ComputePlane's cluster is released as %s (every routed app reads its admin kubeconfig by that name), so no pool of that chart would ever join it and the ComputePlane would run without workers. The function cannot serve this line: use Combined until the platform's apps/kubernetes-nodes reads clusterReleaseName (as Cozystack's ComputePlane module requires), then SplitPools",
			map[Delivery]string{Direct: "computeplane", Platform: "computeplane-cluster"}[delivery])
	}
	switch p.PoolMigration {
	case PoolMigrationAdopt:
		if p.ClusterChart != ClusterChartSplitPools {
			d.fail("spec.platform.poolMigration", "Adopt hands the workers that Pin kept to the pool releases of the split chart, so it needs clusterChart: SplitPools, not %s; render Pin with Combined first, upgrade the platform, then render Adopt with SplitPools", p.ClusterChart)
		} else if delivery != Direct {
			d.fail("spec.platform.poolMigration", "Adopt changes the worker pools this function renders under delivery: Direct; under delivery: Platform the platform's computeplane module owns the cluster and its move")
		}
	case PoolMigrationPin:
		if p.ClusterChart != ClusterChartCombined {
			d.fail("spec.platform.poolMigration", "Pin readies clusters rendered for the Combined line for the platform's upgrade to the split chart, so it needs clusterChart: Combined, not %s; render Pin while the platform still serves the Combined chart, then upgrade the platform, then render clusterChart: SplitPools without poolMigration", p.ClusterChart)
		} else if delivery != Direct {
			d.fail("spec.platform.poolMigration", "Pin changes the cluster releases this function renders under delivery: Direct; under delivery: Platform the platform's computeplane module owns the cluster and its move")
		}
	}
}

// kubernetesVersionProblem says why v is no spec.platform.kubernetesVersion,
// for the schema's pattern and for what it lets through (a patch beyond
// 65535).
func kubernetesVersionProblem(v string) string {
	return fmt.Sprintf("must be the management cluster's Kubernetes minor, one of %s, not %q (quote it: 1.30 unquoted is the number 1.3)", supportedKubernetesVersions(), v)
}

// kubernetesMinor reads "1.<minor>" (a leading "v" and a patch are
// allowed: "v1.33.5") and reports whether it is a supported minor.
func kubernetesMinor(v string) (int, bool) {
	v = strings.TrimPrefix(v, "v")
	rest, ok := strings.CutPrefix(v, "1.")
	if !ok {
		return 0, false
	}
	minorText, patch, hasPatch := strings.Cut(rest, ".")
	if hasPatch {
		if _, err := strconv.ParseUint(patch, 10, 16); err != nil {
			return 0, false
		}
	}
	minor, err := strconv.Atoi(minorText)
	if err != nil || minorText != strconv.Itoa(minor) || minor < oldestKubernetesMinor || minor > newestKubernetesMinor {
		return 0, false
	}
	return minor, true
}

// supportedKubernetesVersions lists the supported minors for messages.
func supportedKubernetesVersions() string {
	var out []string
	for m := oldestKubernetesMinor; m <= newestKubernetesMinor; m++ {
		out = append(out, strconv.Quote("1."+strconv.Itoa(m)))
	}
	return strings.Join(out, ", ")
}

// BaselineChartVersion is the version of the computeplane-baseline chart
// (charts/computeplane-baseline) that this function renders releases of;
// it changes with the chart's values contract.
const BaselineChartVersion = "0.1.0"

// DefaultBaselineChartURL is where the project publishes the chart, beside
// its image (docs/release.md).
const DefaultBaselineChartURL = "oci://ghcr.io/computeplane-dev/charts/computeplane-baseline"

// BaselineConfig is spec.baseline: where the chart of the in-cluster
// baseline comes from when the output is a stream (no spec.fleet). The
// fleet folder carries the baseline as files instead, so it is refused
// together with spec.fleet.
type BaselineConfig struct {
	// URL is the chart's OCI repository (an oci:// address).
	URL string `json:"url"`
	// Tag is the chart's version in it (default BaselineChartVersion).
	Tag string `json:"tag"`
	// Namespace holds the OCIRepository that every tenant's baseline
	// release reads the chart from (default: the fleet's namespace, where
	// its account lives).
	Namespace string `json:"namespace"`
}

// Default fills in the chart's address, version and namespace.
func (b *BaselineConfig) Default(c *Config) {
	if b.URL == "" {
		b.URL = DefaultBaselineChartURL
	}
	if b.Tag == "" {
		b.Tag = BaselineChartVersion
	}
	if b.Namespace == "" {
		b.Namespace, _ = c.FleetAccount()
	}
}

func (b *BaselineConfig) validate(d *decoder, written map[string]bool) {
	if _, set := written["baseline"]; set && written["fleet"] {
		d.fail("spec.baseline", "is only used without spec.fleet: the fleet folder carries each tenant's baseline as files (<namespace>/_baseline), applied by a Kustomization; remove spec.baseline")
		return
	}
	if written["fleet"] {
		return // not used
	}
	if rest, ok := strings.CutPrefix(b.URL, "oci://"); !ok || rest == "" || strings.ContainsAny(rest, " \t\n") {
		d.fail("spec.baseline.url", "must be an oci:// address of the computeplane-baseline chart, not %q", b.URL)
	}
	if !validOCITag(b.Tag) {
		d.fail("spec.baseline.tag", "%q is not an OCI tag (letters, digits, '_', '.', '-', at most 128, not starting with '.' or '-')", b.Tag)
	}
	if !ValidDNSLabel(b.Namespace) {
		d.fail("spec.baseline.namespace", "%q is not a valid namespace name", b.Namespace)
	}
}

// validOCITag reports whether s is a tag of the OCI distribution spec:
// [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}.
func validOCITag(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
		default:
			return false
		}
	}
	return true
}
