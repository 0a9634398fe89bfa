package disttest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSchemaShipped: the release ships the config's JSON Schema, the file
// in the repository, and the release binary of this machine prints the
// same bytes with computeplane-fn schema.
func TestSchemaShipped(t *testing.T) {
	e := setup(t)
	want, err := os.ReadFile(filepath.Join(e.project, "pkg", "api", "computeplanegenerator.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(e.dist, "computeplanegenerator.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("dist/computeplanegenerator.schema.json is not pkg/api/computeplanegenerator.schema.json")
	}
	out, err := exec.Command(e.binary(hostPlatform), "schema").Output()
	if err != nil {
		t.Fatalf("computeplane-fn schema: %v", err)
	}
	if !bytes.Equal(out, want) {
		t.Errorf("computeplane-fn schema of the release binary prints other bytes than the schema file")
	}
}
