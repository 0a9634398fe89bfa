package summary_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/posture"
	"github.com/computeplane-dev/computeplane-fn/pkg/summary"
	"github.com/computeplane-dev/computeplane-fn/pkg/wire"
)

var update = flag.Bool("update", false, "rewrite the golden summaries in testdata/")

// golden compares got with testdata/<name>.md, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenFile(t, name+".md", got)
}

// goldenFile compares got with testdata/<name>, or rewrites it with -update.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("summary differs from %s (-want +got):\n%s", file, diff)
	}
}

func write(t *testing.T, r summary.Report) string {
	t.Helper()
	var buf bytes.Buffer
	if err := summary.Write(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func quickstart(t *testing.T) summary.Report {
	t.Helper()
	dir := "../../examples/quickstart"
	r, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, "config.yaml")})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	return summary.Report{Fleet: r.Fleet}
}

func TestSummarySmallFleet(t *testing.T) {
	golden(t, "small-fleet", write(t, quickstart(t)))
}

func TestSummarySmallFleetWithChanges(t *testing.T) {
	r := quickstart(t)
	r.Dir = "clusters/fleet"
	r.Check = true
	r.Changes = output.Changes{
		{Op: output.Added, Path: "tenant-acme/helmrelease-n8n-automations.yaml", New: []byte("kind: HelmRelease\n")},
		{Op: output.Changed, Path: "tenant-acme/helmrelease-jupyterhub-research.yaml", Old: []byte("a: 1\nb: 2\n"), New: []byte("a: 1\nb: 3\n")},
		{Op: output.Removed, Path: "tenant-old/helmrelease-computeplane.yaml", Old: []byte("kind: HelmRelease\n")},
	}
	golden(t, "small-fleet-changes", write(t, r))
}

func TestSummaryUpToDate(t *testing.T) {
	r := quickstart(t)
	r.Dir = "fleet"
	got := write(t, r)
	if !strings.Contains(got, "### Fleet folder `fleet`\n\nUp to date: no file changes.") {
		t.Errorf("summary of an up-to-date folder:\n%s", got)
	}
}

func TestSummaryRefused(t *testing.T) {
	var problems api.Problems
	for i := range 25 {
		problems = append(problems, api.Problem{File: "apps.yaml", Object: api.ObjectRef{Kind: "JupyterHub", Namespace: "tenant-x", Name: fmt.Sprint("lab", i)}, Field: "metadata.namespace", Message: "JupyterHub apps run only on a ComputePlane, and tenant \"x\" has none"})
	}
	golden(t, "refused", write(t, summary.Report{Problems: problems, Dir: "fleet"}))
}

// TestSummaryLargeFleet renders 600 tenants with 10 apps each, changes a few and
// removes one: the summary folds, names the touched tenants and stays far
// below GitHub's comment limit.
func TestSummaryLargeFleet(t *testing.T) {
	dir := t.TempDir()
	defs, err := filepath.Glob("../../examples/quickstart/definitions/*.yaml")
	if err != nil || len(defs) == 0 {
		t.Fatal("no definitions", err)
	}
	var tenants, apps strings.Builder
	kinds := []string{"JupyterHub", "N8N", "Postgres", "Redis"}
	for i := range 600 {
		fmt.Fprintf(&tenants, "---\napiVersion: apps.cozystack.io/v1alpha1\nkind: Tenant\nmetadata:\n  name: t%04d\n  namespace: tenant-root\nspec:\n  computeplane: %v\n", i, i%2 == 0)
		for j := range 10 {
			kind := kinds[j%4]
			if i%2 == 1 && (kind == "JupyterHub" || kind == "N8N") {
				kind = "Postgres"
			}
			fmt.Fprintf(&apps, "---\napiVersion: apps.cozystack.io/v1alpha1\nkind: %s\nmetadata:\n  name: app%d\n  namespace: tenant-t%04d\nspec: {}\n", kind, j, i)
		}
	}
	files := map[string]string{"tenants.yaml": tenants.String(), "apps.yaml": apps.String(),
		"config.yaml": "apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata:\n  name: fleet\nspec:\n  inputs: [defs/, tenants.yaml, apps.yaml]\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "defs"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		data, _ := os.ReadFile(d)
		if err := os.WriteFile(filepath.Join(dir, "defs", filepath.Base(d)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, "config.yaml")})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	var changes output.Changes
	// The first five: the guard's two cluster-scoped files, the source and
	// two files of the first tenant.
	for _, o := range r.Objects[:5] {
		changes = append(changes, output.Change{Op: output.Changed, Path: o.Path(), Old: []byte("a\n"), New: []byte("b\n")})
	}
	for i := range 120 {
		changes = append(changes, output.Change{Op: output.Removed, Path: fmt.Sprintf("tenant-gone/helmrelease-app%03d.yaml", i), Old: []byte("x\n")})
	}
	got := write(t, summary.Report{Fleet: r.Fleet, Dir: "fleet", Changes: changes})
	if len(got) > 40_000 {
		t.Errorf("the summary of a large fleet is %d bytes long", len(got))
	}
	golden(t, "large-fleet", got)
}

// postureChanges are changes of every kind on the quickstart fleet, as a
// review would find them.
func postureChanges() *posture.Result {
	changes := []posture.Change{
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangePodSecurity, Subject: "tenant-acme", From: "restricted", To: "baseline", Weakens: true},
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeExemption, Subject: "cozy-ingress-nginx", From: "present", To: "absent"},
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeExposure, Subject: "Postgres/notebooks", From: "denied", To: "reachable", Weakens: true},
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeExposure, Subject: "Redis/cache", From: "reachable", To: "denied"},
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangePlacement, Subject: "N8N/automations", From: "ManagementPlane", To: "ComputePlane"},
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangePlacement, Subject: "JupyterHub/old", From: "ComputePlane", To: "ManagementPlane", Weakens: true},
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeEgress, Subject: "tenant-acme", From: "denied", To: "allowed", Weakens: true},
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeNodeGroups, Subject: "md0", From: "u1.medium 0-3 gpus=0", To: "u1.large 1-4 gpus=1"},
		{Change: posture.ChangeGuard, Subject: "system:serviceaccount:ci:deployer", From: "absent", To: "present", Weakens: true, Role: wire.GuardFluxIdentitiesVariable},
		{Tenant: "old", Namespace: "tenant-old", Change: posture.ChangeTenant, Subject: "tenant-old", From: "present", To: "absent"},
		{Change: posture.ChangeDefinition, Subject: "JupyterHub", From: "ComputePlane", To: "ManagementPlane", Weakens: true, Cause: "ApplicationDefinition jupyterhub"},
		{Change: posture.ChangeDefinition, Subject: "N8N", From: "ExternalArtifact cozy-system/cozystack-n8n", To: "ExternalArtifact cozy-system/n8n-fork", Weakens: true, Cause: "ApplicationDefinition n8n"},
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeRouting, Subject: "tenant-acme", From: posture.EditingFleet, To: posture.EditingAPI, Weakens: true, Cause: "spec.routing.editableThroughAPI"},
		{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeRouting, Subject: posture.RolePrefix + "jupyterhub-cluster", From: "scheduling.k8s.io/priorityclasses:get", To: "scheduling.k8s.io/priorityclasses:create scheduling.k8s.io/priorityclasses:get", Weakens: true, Cause: "spec.routing.grants"},
	}
	posture.Sort(changes)
	facts := []posture.Fact{
		{Tenant: "acme", Namespace: "tenant-acme", Fact: posture.FactMoved, Subject: "JupyterHub/old", From: "ComputePlane", To: "ManagementPlane", Cause: "ApplicationDefinition jupyterhub (placement)"},
		{Tenant: "acme", Namespace: "tenant-acme", Fact: posture.FactMoved, Subject: "N8N/automations", From: "ManagementPlane", To: "ComputePlane", Cause: "ApplicationDefinition n8n (placement)"},
		{Tenant: "acme", Namespace: "tenant-acme", Fact: posture.FactDashboardLost, Subject: "N8N/automations", From: posture.Listed, To: posture.Unlisted, Cause: "ApplicationDefinition n8n (placement)"},
		{Tenant: "acme", Namespace: "tenant-acme", Fact: posture.FactAdded, Subject: "Redis/cache2", From: posture.Absent, To: "ManagementPlane", Cause: "Redis tenant-acme/cache2"},
		{Tenant: "old", Namespace: "tenant-old", Fact: posture.FactClusterKept, Subject: "tenant-old", From: posture.Present, To: posture.Absent, Cause: "Tenant old (removed)"},
		{Tenant: "old", Namespace: "tenant-old", Fact: posture.FactRemoved, Subject: "JupyterHub/lab", From: "ComputePlane", To: posture.Absent, Cause: "Tenant old"},
	}
	return &posture.Result{Changes: changes, Facts: facts, Problems: []string{"tenant-acme/configmap-computeplane-admission.yaml (the committed folder): failed to read the posture of ConfigMap tenant-acme/computeplane-admission: data: holds no AdmissionConfiguration"}}
}

func TestSummaryPosture(t *testing.T) {
	r := quickstart(t)
	r.Dir = "fleet"
	r.Check = true
	r.Changes = output.Changes{{Op: output.Changed, Path: "tenant-acme/helmrelease-computeplane.yaml", Old: []byte("a: 1\n"), New: []byte("a: 2\n")}}
	r.Review = postureChanges()
	md := write(t, r)
	golden(t, "posture", md)
	if strings.Index(md, "### Isolation posture") > strings.Index(md, "### Fleet folder") {
		t.Error("the posture changes come after the file list")
	}
	var buf bytes.Buffer
	if err := summary.WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "posture.json", buf.String())
}

// TestSummaryPostureCounts: the headline counts the weakening changes in
// words that agree with their number.
func TestSummaryPostureCounts(t *testing.T) {
	weak := posture.Change{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeExposure, Subject: "Postgres/notebooks", From: "denied", To: "reachable", Weakens: true}
	strong := posture.Change{Tenant: "acme", Namespace: "tenant-acme", Change: posture.ChangeExposure, Subject: "Redis/cache", From: "reachable", To: "denied"}
	for _, tc := range []struct {
		changes []posture.Change
		want    string
	}{
		{[]posture.Change{weak}, "**⚠️ The posture change weakens isolation** and needs a security review."},
		{[]posture.Change{weak, strong}, "**⚠️ 1 of 2 posture changes weakens isolation** and needs a security review."},
		{[]posture.Change{weak, weak}, "**⚠️ All 2 posture changes weaken isolation** and need a security review."},
		{[]posture.Change{weak, weak, strong}, "**⚠️ 2 of 3 posture changes weaken isolation** and need a security review."},
		{[]posture.Change{strong}, "No change weakens isolation (1 posture change)."},
	} {
		r := quickstart(t)
		r.Dir = "fleet"
		r.Review = &posture.Result{Changes: tc.changes}
		if md := write(t, r); !strings.Contains(md, "\n"+tc.want+"\n") {
			t.Errorf("%d changes, %d weakening: want %q in\n%s", len(tc.changes), strings.Count(fmt.Sprint(tc.changes), "true"), tc.want, md)
		}
	}
}

// TestSummaryRefusedWithoutProblems: a run refused for a reason of its own
// (an empty fleet without --allow-empty) says that reason, not "0 problems".
func TestSummaryRefusedWithoutProblems(t *testing.T) {
	md := write(t, summary.Report{Dir: "fleet", Refusal: "the inputs hold no tenant (--allow-empty if that is meant)"})
	want := "**Refused**: nothing was rendered and `fleet` was left as it was.\n\n```text\nthe inputs hold no tenant (--allow-empty if that is meant)\n```\n"
	if !strings.Contains(md, want) || strings.Contains(md, "0 problems") {
		t.Errorf("summary of a run refused without problems:\n%s\nwant it to hold:\n%s", md, want)
	}
}

func TestSummaryJSONWithoutFolder(t *testing.T) {
	var buf bytes.Buffer
	if err := summary.WriteJSON(&buf, quickstart(t)); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "small-fleet.json", buf.String())
}

// TestSummaryValueWarnings: an app value its definition's schema does not
// know is stated in the summary, with its file, app and field.
func TestSummaryValueWarnings(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"config.yaml": "apiVersion: fn.computeplane.dev/v1alpha1\nkind: ComputePlaneGenerator\nmetadata:\n  name: fleet\nspec:\n  inputs: [in.yaml]\n",
		"in.yaml": `apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata: {name: postgres}
spec:
  application: {kind: Postgres, openAPISchema: '{"type":"object","properties":{"replicas":{"type":"integer"}}}'}
  release: {prefix: postgres-, chartRef: {kind: ExternalArtifact, name: postgres}}
---
apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata: {name: db, namespace: tenant-root}
spec: {replcas: 2}
`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, "config.yaml")})
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	md := write(t, summary.Report{Fleet: r.Fleet})
	want := "**⚠️ 1 warning** about app values and their definitions' schemas: rendered as written, as cozystack-api would take them (`spec.apps.values: Refuse` makes them errors).\n\n```text\nin.yaml: Postgres tenant-root/db: spec.replcas: unknown field: the openAPISchema of ApplicationDefinition postgres declares no such field"
	if !strings.Contains(md, want) {
		t.Errorf("summary:\n%s\nwant it to hold:\n%s", md, want)
	}
	j := summary.NewJSON(summary.Report{Fleet: r.Fleet})
	wantJSON := []summary.Warning{{File: "in.yaml", Object: "Postgres tenant-root/db", Field: "spec.replcas",
		Message: "unknown field: the openAPISchema of ApplicationDefinition postgres declares no such field, so the chart would most likely ignore it (cozystack-api and Helm pass it on as written); correct its name"}}
	if d := cmp.Diff(wantJSON, j.Warnings); d != "" {
		t.Errorf("JSON warnings (-want +got):\n%s", d)
	}
}
