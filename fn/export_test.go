package fn

// SetPanicForTest makes every Process panic with v until the returned
// function is called.
func SetPanicForTest(v any) (restore func()) {
	panicForTest = func() { panic(v) }
	return func() { panicForTest = nil }
}
