package cluster

import "testing"

func (e *env) testCozystackAPI(t *testing.T) {
	e.cozystackDir(t, e.bins.cozystackAPI)
	t.Skip("not yet")
}
