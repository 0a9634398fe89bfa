package api_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
)

// decodeSpec decodes a ComputePlaneGenerator of the given spec and returns
// it with its problems as "field: message".
func decodeSpec(t *testing.T, spec string) (*api.Config, []string) {
	t.Helper()
	n, err := yaml.Parse("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata: {name: fleet}\nspec: " + spec + "\n")
	if err != nil {
		t.Fatal(err)
	}
	cfg, problems := api.DecodeConfig(api.NewObject(n.YNode(), api.Origin{File: "config.yaml"}))
	var msgs []string
	for _, p := range problems {
		msgs = append(msgs, p.Field+": "+p.Message)
	}
	return cfg, msgs
}

func decodeFleet(t *testing.T, fleet string) (*api.FleetConfig, []string) {
	t.Helper()
	spec := ""
	if fleet != "" {
		spec = "\n  fleet:"
		for _, line := range strings.Split(strings.TrimSpace(fleet), "\n") {
			spec += "\n    " + line
		}
	}
	cfg, msgs := decodeSpec(t, spec)
	if cfg == nil {
		return nil, msgs
	}
	return cfg.Fleet, msgs
}

func TestFleetConfigDefaults(t *testing.T) {
	got, problems := decodeFleet(t, "sourceRef: {kind: GitRepository, name: fleet}\npath: ./fleet/")
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	want := &api.FleetConfig{
		SourceRef:          api.FleetSourceRef{Kind: "GitRepository", Name: "fleet", Namespace: "flux-system"},
		Path:               "fleet",
		Interval:           10 * time.Minute,
		MaxObjectsPerUnit:  500,
		Shards:             1,
		WiringNamespace:    "flux-system",
		ServiceAccountName: "computeplane-fleet",
		WiringPath:         "_flux",
		WiringGroups:       api.DefaultWiringGroups,
		UnitSource:         api.UnitSourceExternalArtifact, // Cozystack's Flux, the default platform, reads it
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p := got.FluxPath("tenant-foo/part1"); p != "./fleet/tenant-foo/part1" {
		t.Errorf("FluxPath: %s", p)
	}
	if none, _ := decodeFleet(t, ""); none != nil {
		t.Errorf("no spec.fleet gives %+v", none)
	}
}

// TestUnitSourceFollowsFlux: spec.fleet.unitSource defaults to what the
// Flux of spec.platform.flux reads, and stock Flux refuses
// ExternalArtifact, whose feature gate it leaves off.
func TestUnitSourceFollowsFlux(t *testing.T) {
	const fleet = "\n  fleet: {sourceRef: {kind: GitRepository, name: fleet}, path: fleet"
	for _, tc := range []struct {
		spec, want, problem string
	}{
		{fleet + "}", api.UnitSourceExternalArtifact, ""},
		{"\n  platform: {flux: Cozystack}" + fleet + "}", api.UnitSourceExternalArtifact, ""},
		{"\n  platform: {flux: Cozystack}" + fleet + ", unitSource: FleetSource}", api.UnitSourceFleet, ""},
		{"\n  platform: {flux: FluxInstall}" + fleet + "}", api.UnitSourceFleet, ""},
		{"\n  platform: {flux: FluxInstall}" + fleet + ", unitSource: ExternalArtifact}", "", "spec.fleet.unitSource: ExternalArtifact needs kustomize-controller's ExternalArtifact feature gate, which the Flux that spec.platform.flux names, FluxInstall, leaves off; use FleetSource (the default there), or name Cozystack's Flux, which has the gate on (docs/platforms.md)"},
		{"\n  platform: {flux: flux}", "", "spec.platform.flux: must be Cozystack or FluxInstall, not \"flux\""},
	} {
		cfg, problems := decodeSpec(t, tc.spec)
		switch {
		case tc.problem != "":
			if !slices.Equal(problems, []string{tc.problem}) {
				t.Errorf("%s: problems %q, want %q", tc.spec, problems, tc.problem)
			}
		case len(problems) > 0:
			t.Errorf("%s: %q", tc.spec, problems)
		case cfg.Fleet.UnitSource != tc.want:
			t.Errorf("%s: unitSource %s, want %s", tc.spec, cfg.Fleet.UnitSource, tc.want)
		}
	}
	if cfg, _ := decodeSpec(t, ""); cfg.Platform.Flux != api.FluxCozystack {
		t.Errorf("platform.flux defaults to %q, want %q", cfg.Platform.Flux, api.FluxCozystack)
	}
}

func TestFleetConfigSet(t *testing.T) {
	got, problems := decodeFleet(t, `
sourceRef: {kind: OCIRepository, name: fleet-repo, namespace: infra}
path: .
interval: 1h30m
maxObjectsPerUnit: 200
shards: 4
wiringNamespace: fleet-wiring
serviceAccountName: fleet
wiringPath: _wiring
wiringGroups: 8
unitSource: ExternalArtifact`)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	want := &api.FleetConfig{
		SourceRef:          api.FleetSourceRef{Kind: "OCIRepository", Name: "fleet-repo", Namespace: "infra"},
		Path:               ".",
		Interval:           90 * time.Minute,
		IntervalText:       "1h30m",
		MaxObjectsPerUnit:  200,
		Shards:             4,
		WiringNamespace:    "fleet-wiring",
		ServiceAccountName: "fleet",
		WiringPath:         "_wiring",
		WiringGroups:       8,
		UnitSource:         api.UnitSourceExternalArtifact,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if p := got.FluxPath("_platform"); p != "./_platform" {
		t.Errorf("FluxPath at the root: %s", p)
	}
}

func TestFleetConfigProblems(t *testing.T) {
	for _, tc := range []struct {
		fleet string
		want  []string
	}{
		{"path: fleet", []string{"spec.fleet.sourceRef: is required: the Flux source (kind, name, namespace) that serves the fleet repo"}},
		{"sourceRef: {kind: GitRepository, name: fleet}", []string{"spec.fleet.path: is required: the path of the output folder inside the fleet repo, such as ./fleet"}},
		{"sourceRef: {kind: HelmRepository, name: Fleet, namespace: Flux, ref: main}\npath: fleet", []string{
			"spec.fleet.sourceRef.ref: unknown field; known fields here: kind, name, namespace",
			"spec.fleet.sourceRef.kind: must be GitRepository, OCIRepository or Bucket, not \"HelmRepository\"",
			"spec.fleet.sourceRef.name: \"Fleet\" is not a valid object name",
			"spec.fleet.sourceRef.namespace: \"Flux\" is not a valid namespace name",
		}},
		{"sourceRef: {name: fleet}\npath: fleet", []string{"spec.fleet.sourceRef.kind: is required"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: ../fleet", []string{"spec.fleet.path: \"../fleet\" must not leave the source with '..'"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: /fleet", []string{"spec.fleet.path: \"/fleet\" must be relative to the root of the source, such as ./fleet"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: \"\"", []string{"spec.fleet.path: \"\" must not be empty; use \".\" for the root of the source"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\ninterval: 10 minutes", []string{"spec.fleet.interval: \"10 minutes\" is not a duration such as 10m or 1h30m"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nmaxObjectsPerUnit: 5", []string{"spec.fleet.maxObjectsPerUnit: must be between 10 and 5000, not 5 (kustomize build time grows with the square of a unit's size)"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nmaxObjectsPerUnit: \"500\"", []string{"spec.fleet.maxObjectsPerUnit: must be a whole number, not the string \"500\""}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nshards: 0", []string{"spec.fleet.shards: must be between 1 and 100, not 0 (1 means no sharding label; N labels the units shard1 to shardN)"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nwiringGroups: -1", []string{"spec.fleet.wiringGroups: must be between 0 and 1000, not -1 (the unit Kustomizations are hashed into this many wiring groups; 0 lets the fleet's size choose)"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nwiringPath: flux", []string{"spec.fleet.wiringPath: \"flux\" must be a single folder name that starts with '_' (a namespace's folder never does), made of letters, digits, '-', '_' and '.'"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nwiringPath: _a/b", []string{"spec.fleet.wiringPath: \"_a/b\" must be a single folder name that starts with '_' (a namespace's folder never does), made of letters, digits, '-', '_' and '.'"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nwiringPath: _platform", []string{"spec.fleet.wiringPath: \"_platform\" is the folder of the platform unit; choose another name"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nwiringNamespace: Flux_System", []string{"spec.fleet.wiringNamespace: \"Flux_System\" is not a valid namespace name"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nshard: 2", []string{"spec.fleet.shard: unknown field; known fields here: sourceRef, path, interval, maxObjectsPerUnit, shards, wiringNamespace, wiringPath, wiringGroups, unitSource, serviceAccountName"}},
		{"sourceRef: {kind: Bucket, name: fleet}\npath: fleet\nunitSource: OCIArtifact", []string{"spec.fleet.unitSource: must be FleetSource or ExternalArtifact, not \"OCIArtifact\""}},
		{"[]", nil},
	} {
		t.Run(tc.fleet, func(t *testing.T) {
			_, got := decodeFleet(t, tc.fleet)
			if tc.want == nil {
				if len(got) != 1 || !strings.HasPrefix(got[0], "spec.fleet: must be a map") {
					t.Fatalf("got %q", got)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfigTypeErrors: a value of the wrong type is reported at its path
// with what the field must be and what the config holds there.
func TestConfigTypeErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"inputs: {a: b}":                    "spec.inputs: must be a list of strings, not a map",
		"inputs: [a, 3]":                    "spec.inputs[1]: must be a string, not the number 3",
		"keepInputs: \"true\"":              `spec.keepInputs: must be true or false, not the string "true"`,
		"source: {name: [a]}":               "spec.source.name: must be a string, not a list",
		"cluster: {values: [a]}":            "spec.cluster.values: must be a map, not a list",
		"cluster: {podSecurity: 1}":         "spec.cluster.podSecurity: must be a string, not the number 1",
		"fleet: {maxObjectsPerUnit: \"5\"}": `spec.fleet.maxObjectsPerUnit: must be a whole number, not the string "5"`,
		"routing: {editableThroughAPI: 1}":  "spec.routing.editableThroughAPI: must be true or false, not the number 1",
		"source: {kind: Git, nmae: x}":      "spec.source.nmae: unknown field; known fields here: generate, kind, name, namespace, path",
	} {
		n, err := yaml.Parse("apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata:\n  name: fleet\nspec:\n  " + spec + "\n")
		if err != nil {
			t.Fatal(err)
		}
		_, problems := api.DecodeConfig(api.NewObject(n.YNode(), api.Origin{File: "config.yaml"}))
		if len(problems) == 0 || problems[0].Field+": "+problems[0].Message != want {
			t.Errorf("%s: problems = %v, want first %q", spec, problems, want)
		}
	}
}

// TestConfigAllProblemsAtOnce: unknown fields, every value of the wrong
// type and the checks of what decoded are reported in one run.
func TestConfigAllProblemsAtOnce(t *testing.T) {
	_, got := decodeSpec(t, "\n  keepInputs: \"yes\"\n  delivery: Somewhere\n  source: {generate: 1, colour: red}\n  guard: {enabled: \"no\"}")
	want := []string{
		"spec.source.colour: unknown field; known fields here: generate, kind, name, namespace, path",
		// In the order of the keys, which the decoder meets sorted.
		`spec.guard.enabled: must be true or false, not the string "no"`,
		`spec.keepInputs: must be true or false, not the string "yes"`,
		"spec.source.generate: must be true or false, not the number 1",
		`spec.delivery: must be Direct or Platform, not "Somewhere"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestConfigListItems: every item of the wrong kind is reported at its
// index, and the list keeps its default.
func TestConfigListItems(t *testing.T) {
	c, got := decodeSpec(t, "{inputs: [a, 3, {b: c}], guard: {fluxIdentities: [x, [y]]}}")
	want := []string{
		"spec.guard.fluxIdentities[1]: must be a string, not a list",
		"spec.inputs[1]: must be a string, not the number 3",
		"spec.inputs[2]: must be a string, not a map",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if c.Inputs != nil || !slices.Equal(c.Guard.FluxIdentities, []string{"system:serviceaccount:flux-system:computeplane-fleet"}) {
		t.Errorf("inputs %q, flux identities %q: want the defaults", c.Inputs, c.Guard.FluxIdentities)
	}
}
