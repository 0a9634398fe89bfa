package render

// Unexported parts, for the tests of package render_test.
var (
	ReleaseSpec        = releaseSpec
	ReleaseLabels      = releaseLabels
	ReleaseAnnotations = releaseAnnotations
	ObjectMeta         = objectMeta
)

// The installer's rules, for the test that reads them against the chart.
var (
	InstallerRules           = installerRules
	InstallerClusterRules    = installerClusterRules
	InstallerKubeSystemRules = installerKubeSystemRules
)
