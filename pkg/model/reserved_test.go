package model_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/crdtest"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
)

func readTemplates(t *testing.T, glob string) map[string]string {
	t.Helper()
	// The apps/kubernetes chart the tables of this package are read from
	// (Cozystack at 3c780acd).
	chartTemplates := filepath.Join(crdtest.SharedDir(t), "third_party", "cozystack", "packages", "apps", "kubernetes", "templates")
	if _, err := os.Stat(chartTemplates); err != nil {
		t.Skipf("the apps/kubernetes chart is not beside the project (%v): its templates cannot be compared with the tables", err)
	}
	files, err := filepath.Glob(filepath.Join(chartTemplates, glob))
	if err != nil || len(files) == 0 {
		t.Fatalf("no templates %s in %s: %v", glob, chartTemplates, err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	return out
}

// TestClusterAddonReleasesMatchChart reads the metadata.name of every
// HelmRelease in templates/helmreleases: the table must name exactly those.
func TestClusterAddonReleasesMatchChart(t *testing.T) {
	name := regexp.MustCompile(`(?m)^kind: HelmRelease\s*\nmetadata:\s*\n(?:  .*\n)*?  name: \{\{ \.Release\.Name \}\}-([a-z0-9-]+)\s*$`)
	var got []string
	for f, text := range readTemplates(t, "helmreleases/*.yaml") {
		ms := name.FindAllStringSubmatch(text, -1)
		if len(ms) == 0 && strings.Contains(text, "kind: HelmRelease") {
			t.Errorf("%s: a HelmRelease whose name is not {{ .Release.Name }}-<addon>", f)
		}
		for _, m := range ms {
			got = append(got, m[1])
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(model.ClusterAddonReleases))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("model.ClusterAddonReleases against the chart's addon HelmReleases (-table +chart):\n%s", diff)
	}
}

// TestReservedReleasesCoverChart reads every name the chart's templates give
// an object, or a Secret they mount, as {{ .Release.Name }}-<name>: each
// must be a reserved release name.
func TestReservedReleasesCoverChart(t *testing.T) {
	name := regexp.MustCompile(`(?m)^\s*-?\s*(?:name|secretName|serviceAccountName): "?\{\{ \$?\.Release\.Name \}\}-([a-z0-9-]+)"?\s*$`)
	seen := 0
	for f, text := range readTemplates(t, "*/*.yaml") {
		for _, m := range name.FindAllStringSubmatch(text, -1) {
			seen++
			if why := model.ReservedRelease("computeplane", "computeplane-"+m[1]); why == "" {
				t.Errorf("%s: the chart names an object computeplane-%s, which no table reserves", f, m[1])
			}
		}
	}
	for f, text := range readTemplates(t, "*.yaml") {
		for _, m := range name.FindAllStringSubmatch(text, -1) {
			seen++
			if why := model.ReservedRelease("computeplane", "computeplane-"+m[1]); why == "" {
				t.Errorf("%s: the chart names an object computeplane-%s, which no table reserves", f, m[1])
			}
		}
	}
	if seen < 50 {
		t.Errorf("only %d names read from the chart: the pattern no longer fits its templates", seen)
	}
}

// TestClusterCredentialsCoverChart: every Secret the chart writes or mounts
// by a {{ .Release.Name }}-<name> is a credential (the values override of
// the cert-manager CRDs addon holds no secret and is the one exception).
func TestClusterCredentialsCoverChart(t *testing.T) {
	secretName := regexp.MustCompile(`(?m)secretName: "?\{\{ \$?\.Release\.Name \}\}-([a-z0-9-]+)"?\s*$`)
	secretObject := regexp.MustCompile(`(?m)^kind: Secret\s*\nmetadata:\s*\n(?:  .*\n)*?  name: \{\{ \.Release\.Name \}\}-([a-z0-9-]+)\s*$`)
	creds := model.ClusterCredentials("computeplane")
	for _, glob := range []string{"*.yaml", "*/*.yaml"} {
		for f, text := range readTemplates(t, glob) {
			for _, re := range []*regexp.Regexp{secretName, secretObject} {
				for _, m := range re.FindAllStringSubmatch(text, -1) {
					if m[1] == "cert-manager-crds-values-override" {
						continue
					}
					if !slices.Contains(creds, "computeplane-"+m[1]) {
						t.Errorf("%s: Secret computeplane-%s is not in model.ClusterCredentials", f, m[1])
					}
				}
			}
		}
	}
}

func TestReservedRelease(t *testing.T) {
	for _, c := range []struct {
		cluster, name string
		reserved      bool
	}{
		{"computeplane", "computeplane", true},
		{"computeplane", "computeplane-cilium", true},
		{"computeplane", "computeplane-csi", true},
		{"computeplane", "computeplane-cozy-victoria-metrics-operator", true},
		{"computeplane", "computeplane-kcsi", true},
		{"computeplane", "computeplane-ca", true},
		{"computeplane", "computeplane-md0-abc-bootstrap-data", true},
		{"computeplane", "computeplane-cluster-csi", false},
		{"computeplane", "computeplane-notebooks", false},
		{"computeplane", "csi", false},
		{"computeplane", "computeplanecsi", false},
		{"computeplane-cluster", "computeplane-cluster-csi", true},
		{"computeplane-cluster", "computeplane-cluster-ingress-nginx", true},
		{"computeplane-cluster", "computeplane-cluster-admin-kubeconfig", true},
		{"computeplane-cluster", "computeplane-csi", false},
	} {
		if got := model.ReservedRelease(c.cluster, c.name) != ""; got != c.reserved {
			t.Errorf("ReservedRelease(%q, %q) reserved = %v, want %v", c.cluster, c.name, got, c.reserved)
		}
	}
}

func TestIsClusterCredential(t *testing.T) {
	for _, c := range []struct {
		release, name string
		want          bool
	}{
		{"computeplane", "computeplane-admin-kubeconfig", true},
		{"computeplane", "computeplane-kubeconfig", true},
		{"computeplane", "computeplane-ca", true},
		{"computeplane", "computeplane-datastore-config", true},
		{"computeplane", "computeplane-talos", true},
		{"computeplane", "computeplane-md0-7c9f-x8k2p-bootstrap-data", true},
		{"computeplane", "computeplane-md0-7c9f-x8k2p-bootstrap-data-userdata", true},
		{"computeplane", "computeplane-bootstrap-data", false},
		{"computeplane", "computeplane-ca-bundle", false},
		{"computeplane", "computeplane", false},
		{"computeplane", "other-ca", false},
		{"computeplane-cluster", "computeplane-cluster-ca", true},
		{"computeplane-cluster", "computeplane-ca", false},
	} {
		if got := model.IsClusterCredential(c.release, c.name); got != c.want {
			t.Errorf("IsClusterCredential(%q, %q) = %v, want %v", c.release, c.name, got, c.want)
		}
	}
	for _, r := range model.ClusterReleases {
		for _, name := range model.ClusterCredentials(r) {
			if !model.IsClusterCredential(r, name) {
				t.Errorf("IsClusterCredential(%q, %q) = false for a name of ClusterCredentials", r, name)
			}
		}
	}
	for _, want := range []string{"computeplane-admin-kubeconfig", "computeplane-kubeconfig", "computeplane-ca"} {
		if !slices.Contains(model.ClusterCredentials("computeplane"), want) {
			t.Errorf("ClusterCredentials lacks %s", want)
		}
	}
}
