package yamltext

// The emitter alone, without the library's fallback, for the tests that
// compare the two.
var (
	EmitDocument   = emitDocument
	EmitNormalized = emitNormalized
)
