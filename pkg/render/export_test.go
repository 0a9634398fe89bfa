package render

// Unexported parts, for the tests of package render_test.
var (
	ToNode             = toNode
	ReleaseSpec        = releaseSpec
	ReleaseLabels      = releaseLabels
	ReleaseAnnotations = releaseAnnotations
	ObjectMeta         = objectMeta
)
