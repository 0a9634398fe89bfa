// Package docs_test keeps the front door honest: the README's length, its
// two commands (and that .ci/run runs the test command it gives), its
// picture of every object the demo emits, its samples of the inputs (they
// render), and that every relative link and anchor of the README, docs/
// and the examples' READMEs resolves.
package docs_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

const readme = "../README.md"

// maxReadmeLines is the length a newcomer reads in five minutes (issue 28);
// the reference lives in docs/.
const maxReadmeLines = 250

func read(t *testing.T, file string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestReadmeLength(t *testing.T) {
	if n := strings.Count(read(t, readme), "\n"); n > maxReadmeLines {
		t.Errorf("README.md has %d lines; at most %d: move reference into docs/", n, maxReadmeLines)
	}
}

// TestReadmeTwoCommands: the README's two commands on a fresh machine are
// make demo and make test, and .ci/run runs the test command it gives.
func TestReadmeTwoCommands(t *testing.T) {
	text := read(t, readme)
	_, section, ok := strings.Cut(text, "## Two commands on a fresh machine\n")
	if !ok {
		t.Fatal("README.md has no section Two commands on a fresh machine")
	}
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var commands []string
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		commands = append(commands, strings.TrimSpace(cmd))
	}
	if diff := cmp.Diff([]string{"make demo", "make test"}, commands); diff != "" {
		t.Errorf("the README's two commands (-want +got):\n%s", diff)
	}
	ci := read(t, "../.ci/run")
	if !regexp.MustCompile(`(?m)^make test$`).MatchString(ci) {
		t.Error(".ci/run does not run make test, the README's test command")
	}
}

// TestReadmeShowsEveryObject: make demo prints the quickstart's expected
// output as plain YAML (nothing echoed), then, after a blank line, its
// summary's tenant table; and the README's picture names each of its
// objects, kind and name, on a line of its own.
func TestReadmeShowsEveryObject(t *testing.T) {
	cmd := exec.Command("make", "--no-print-directory", "demo")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, stderr.String())
	}
	want := read(t, "../examples/quickstart/expected.yaml")
	summary, ok := strings.CutPrefix(string(out), want)
	if !ok {
		t.Fatalf("make demo does not print examples/quickstart/expected.yaml first (stdout %d bytes, the file %d)", len(out), len(want))
	}
	if !strings.HasPrefix(summary, "\n## computeplane-fn\n") {
		t.Errorf("make demo's summary does not follow the YAML after a blank line:\n%s", summary)
	}
	for _, row := range []string{"| Tenant | ComputePlane | Pod Security | Routed onto its ComputePlane | On the management plane |", "| `tenant-acme` (acme) | yes | restricted | JupyterHub `research`, N8N `automations` | Postgres `notebooks` |"} {
		if !strings.Contains(summary, row) {
			t.Errorf("make demo's summary lacks the tenant table's row %q:\n%s", row, summary)
		}
	}
	objects, err := kio.FromBytes([]byte(want))
	if err != nil {
		t.Fatalf("make demo prints no valid YAML: %v", err)
	}
	if len(objects) == 0 {
		t.Fatal("make demo printed no object")
	}
	_, picture, _ := strings.Cut(read(t, readme), "## What it emits\n")
	_, picture, _ = strings.Cut(picture, "```\n")
	picture, _, _ = strings.Cut(picture, "```")
	kinds := map[string]bool{}
	for _, o := range objects {
		kinds[o.GetKind()] = true
		line := regexp.MustCompile(`(?m)^.*\s` + regexp.QuoteMeta(o.GetKind()+" "+o.GetName()) + `(\s.*)?$`)
		if !line.MatchString(picture) {
			t.Errorf("the README's picture does not show %s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
		}
	}
	t.Logf("%d objects of %d kinds", len(objects), len(kinds))
}

// TestDocLinks: every relative link of the Markdown files a reader
// follows resolves to a file, and every #anchor to a heading of its file.
func TestDocLinks(t *testing.T) {
	var files []string
	for _, glob := range []string{"../README.md", "*.md", "../examples/*/README.md", "../examples/README.md", "../charts/*/README.md"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, file := range files {
		for _, target := range link.FindAllStringSubmatch(stripCode(read(t, file)), -1) {
			ref := target[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(ref) {
				continue // https:, mailto:
			}
			path, anchor, _ := strings.Cut(ref, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
			}
			checked++
			info, err := os.Stat(dest)
			if err != nil {
				t.Errorf("%s: link %s: %v", file, ref, err)
				continue
			}
			if anchor == "" {
				continue
			}
			if info.IsDir() || !strings.HasSuffix(dest, ".md") {
				t.Errorf("%s: link %s: an anchor into something that is no Markdown file", file, ref)
				continue
			}
			if !anchors(read(t, dest))[anchor] {
				t.Errorf("%s: link %s: %s has no heading #%s", file, ref, dest, anchor)
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d links checked", checked)
	}
}

// stripCode removes fenced code blocks and inline code, whose brackets are
// no links.
func stripCode(text string) string {
	text = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(text, "")
	return regexp.MustCompile("`[^`\n]*`").ReplaceAllString(text, "")
}

// anchors returns the anchors GitHub gives the headings of a Markdown
// text: lower case, punctuation but '-' and '_' dropped, spaces as '-', and
// -1, -2, ... for repeats.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(regexp.MustCompile("(?s)```.*?```").ReplaceAllString(text, ""), "\n") {
		m := regexp.MustCompile(`^#{1,6} (.*)$`).FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(m[1])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && !strings.ContainsRune("’“”—–…", r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestReadmeSamplesRender writes the README's samples of the inputs into a
// fleet laid out as the config's spec.inputs names it and renders it: a
// newcomer's first fleet from the README alone renders, routes the app
// onto the tenant's ComputePlane and builds the cluster.
func TestReadmeSamplesRender(t *testing.T) {
	_, section, ok := strings.Cut(read(t, readme), "## Inputs\n")
	if !ok {
		t.Fatal("README.md has no section Inputs")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, m[1])
	}
	if len(blocks) != 4 {
		t.Fatalf("the README's Inputs have %d YAML samples, want 4: Tenant, ApplicationDefinition, app (and knobs), config", len(blocks))
	}
	dir := t.TempDir()
	for i, file := range []string{"tenants/tenant.yaml", "definitions/jupyterhub.yaml", "apps/research.yaml", "config.yaml"} {
		path := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(blocks[i]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, problems := pipeline.Run(pipeline.Options{Dir: dir, ConfigFile: filepath.Join(dir, "config.yaml")})
	if len(problems) > 0 {
		t.Fatalf("the README's samples are refused:\n%v", problems)
	}
	found := map[string]bool{}
	for _, o := range r.Objects {
		found[o.Kind+" "+o.Namespace+"/"+o.Name] = true
	}
	for _, want := range []string{"HelmRelease tenant-acme/computeplane", "HelmRelease tenant-acme/jupyterhub-research", "ValidatingAdmissionPolicy /computeplane-guard"} {
		if !found[want] {
			t.Errorf("the README's samples render no %s; they render %v", want, found)
		}
	}
	var routed bool
	for _, o := range r.Objects {
		if o.Kind == "HelmRelease" && o.Name == "jupyterhub-research" {
			n, err := o.Node()
			if err != nil {
				t.Fatal(err)
			}
			routed = yamlnode.Lookup(n, "spec", "kubeConfig") != nil
		}
	}
	if !routed {
		t.Error("the README's JupyterHub is not routed onto the ComputePlane")
	}
}
