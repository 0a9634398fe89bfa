package disttest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain lets the test binary stand in for the docker command (see
// fakedocker_test.go) when it is started under that name.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "docker" {
		os.Exit(fakeDocker(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
