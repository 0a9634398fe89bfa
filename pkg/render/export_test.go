package render

// Unexported parts, for the tests of package render_test.
var (
	ReleaseSpec        = releaseSpec
	ReleaseLabels      = releaseLabels
	ReleaseAnnotations = releaseAnnotations
	ObjectMeta         = objectMeta
)
