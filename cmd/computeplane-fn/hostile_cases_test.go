package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The base fleet every case changes one thing of: a Postgres definition,
// tenant acme with a ComputePlane, and app db in it.
const (
	baseConfig = `apiVersion: fn.computeplane.dev/v1alpha1
kind: ComputePlaneGenerator
metadata:
  name: fleet
spec:
  delivery: Direct
`
	baseDefinition = `apiVersion: cozystack.io/v1alpha1
kind: ApplicationDefinition
metadata:
  name: postgres
spec:
  application:
    kind: Postgres
    plural: postgreses
    singular: postgres
  release:
    prefix: postgres-
    chartRef:
      kind: ExternalArtifact
      name: cozystack-postgres
      namespace: cozy-system
`
	baseTenant = `apiVersion: apps.cozystack.io/v1alpha1
kind: Tenant
metadata:
  name: acme
  namespace: tenant-root
spec:
  computeplane: true
`
	baseApp = `apiVersion: apps.cozystack.io/v1alpha1
kind: Postgres
metadata:
  name: db
  namespace: tenant-acme
spec:
  replicas: 2
`
)

// keepInputsConfig keeps the inputs in the output, so that a run on the
// output (kpt in place) has them all again.
const keepInputsConfig = baseConfig + "  keepInputs: true\n"

// commentedLast is an object with a comment after an empty last entry that
// sorts after every other object.
const commentedLast = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: zz\n  namespace: tenant-zz\ndata:\n  a:\n  # b: \"2\"\n"

// app is the base app with another spec (YAML, indented below spec:).
func app(spec string) string {
	return strings.Replace(baseApp, "spec:\n  replicas: 2\n", "spec:\n"+indent(spec, "  "), 1)
}

// appWithMetadata is the base app with other metadata lines.
func appWithMetadata(metadata string) string {
	return strings.Replace(baseApp, "metadata:\n  name: db\n  namespace: tenant-acme\n", "metadata:\n"+indent(metadata, "  "), 1)
}

func indent(s, prefix string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "") + "\n"
}

// item turns a YAML document into an entry of a block list.
func item(doc string) string {
	body := indent(doc, "  ")
	return "- " + body[2:]
}

// resourceList wraps a config and items as kpt sends them.
func resourceList(config string, items ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n")
	b.WriteString(indent(config, "  "))
	b.WriteString("items:\n")
	for _, it := range items {
		b.WriteString(item(it))
	}
	return b.String()
}

// krm is the base fleet as a ResourceList, with docs in place of the app.
func krm(docs ...string) string {
	if len(docs) == 0 {
		docs = []string{baseApp}
	}
	return resourceList(baseConfig, append([]string{baseDefinition, baseTenant}, docs...)...)
}

// files is the base fleet as files for the standalone CLI, with apps.yaml
// replaced by apps.
func files(apps string) map[string]string {
	return map[string]string{"config.yaml": baseConfig, "defs.yaml": baseDefinition, "tenants.yaml": baseTenant, "apps.yaml": apps}
}

var standaloneArgs = []string{"config.yaml", "defs.yaml", "tenants.yaml", "apps.yaml"}

// billionLaughs is a YAML map of levels anchored lists of width aliases
// each, ending in key bomb: 10 levels of 10 expand to 10^10 nodes from a
// few hundred bytes.
func billionLaughs(levels, width int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [" + strings.Repeat("lol,", width-1) + "lol]\n")
	for i := 1; i < levels; i++ {
		refs := strings.Repeat(fmt.Sprintf("*l%d,", i-1), width-1) + fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, refs)
	}
	fmt.Fprintf(&b, "bomb: *l%d\n", levels-1)
	return b.String()
}

// nestedFlow is a flow list nested depth levels deep.
func nestedFlow(depth int) string {
	return strings.Repeat("[", depth) + "x" + strings.Repeat("]", depth)
}

// nestedBlock is a block map nested depth levels deep, each level a key.
func nestedBlock(depth int) string {
	var b strings.Builder
	for i := 0; i < depth; i++ {
		b.WriteString(strings.Repeat(" ", i))
		b.WriteString("k:\n")
	}
	b.WriteString(strings.Repeat(" ", depth) + "v: 1\n")
	return b.String()
}

// writeLarge writes a file of size bytes: head, filler repeated, tail.
func writeLarge(t *testing.T, path, head, filler, tail string, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat(filler, max(1, (1<<20)/len(filler)))
	for written := 0; written < size; written += len(chunk) {
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteString(tail); err != nil {
		t.Fatal(err)
	}
}

// sparse makes a file that claims size bytes without using the disk.
func sparse(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// endless repeats a pattern forever, as a multi-GB stream would.
type endless struct {
	pattern []byte
	off     int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.pattern[e.off]
		e.off = (e.off + 1) % len(e.pattern)
	}
	return len(p), nil
}

var _ io.Reader = (*endless)(nil)

func hostileCases() []hostileCase {
	const (
		appRef     = "Postgres tenant-acme/db"
		largeValue = 50 << 20
	)
	return []hostileCase{
		// Malformed and binary input.
		{name: "malformed YAML on stdin", stdin: "apiVersion: v1\nkind: [\n", want: []string{"stdin: invalid YAML: yaml: line"}},
		{name: "malformed YAML in a file", files: files(baseApp[:60] + "\n  : : [\n"), args: standaloneArgs, want: []string{"apps.yaml: document 1: invalid YAML"}},
		{name: "binary stdin", stdin: "\x7fELF\x02\x01\x01\x00\x00\x00", want: []string{"stdin: not a YAML file (binary or not UTF-8)"}},
		{name: "binary input file", files: files("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xfe"), args: standaloneArgs, want: []string{"apps.yaml: not a YAML file (binary or not UTF-8)"}},
		{name: "invalid UTF-8 in a value", stdin: krm(app("name: \"caf\xe9\"\n")), want: []string{"stdin: not a YAML file (binary or not UTF-8)"}},
		{name: "control characters", stdin: krm(app("name: a\x01b\n")), want: []string{"stdin: invalid YAML", "control characters are not allowed"}},
		{name: "empty stdin", stdin: "", want: []string{"stdin: no ResourceList: the input is empty"}},
		{name: "only comments on stdin", stdin: "# nothing\n---\n", want: []string{"stdin: no ResourceList: the input is empty"}},
		{name: "a ResourceList with no functionConfig", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" + item(baseApp), want: []string{"a function config (fn.computeplane.dev/v1alpha1 ComputePlaneGenerator) is required"}},
		{name: "two documents on stdin", stdin: krm() + "---\n" + baseApp, want: []string{"stdin: expected one ResourceList, found a second YAML document (document 2)"}},
		{name: "stdin is a list", stdin: "- a\n- b\n", want: []string{"stdin: expected a ResourceList object (a YAML map), found a list"}},
		{name: "stdin is not a ResourceList", stdin: baseApp, want: []string{"stdin: ResourceList: kind: must be ResourceList, not the string \"Postgres\""}},
		{name: "items is a map", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" + indent(baseConfig, "  ") + "items: {a: b}\n", want: []string{"stdin: ResourceList: items: must be a list of objects, not a map"}},
		{name: "items hold scalars and lists", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" + indent(baseConfig, "  ") + "items: [5, [a]]\n", want: []string{"items[0]: must be an object (a YAML map), not the number 5", "items[1]: must be an object (a YAML map), not a list"}},
		{name: "functionConfig is a string", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig: fleet\nitems: []\n", want: []string{"functionConfig: must be a ComputePlaneGenerator object, not the string \"fleet\""}},
		{name: "a document that is a list", files: files("- a\n- b\n"), args: standaloneArgs, want: []string{"apps.yaml: document 1: expected an object (a YAML map), found a list"}},
		{name: "CRLF line endings render", stdin: strings.ReplaceAll(krm(), "\n", "\r\n"), render: []string{"name: postgres-db"}},

		{name: "no config file", args: []string{"missing.yaml"}, want: []string{"missing.yaml: failed to read input: no such file or directory"}},
		{name: "config is a folder", args: []string{"conf"}, files: map[string]string{"conf/x.yaml": baseConfig}, want: []string{"conf: failed to read input: not a regular file"}},
		{name: "empty config file", args: []string{"config.yaml"}, files: map[string]string{"config.yaml": ""}, want: []string{"config.yaml: the config file must hold exactly one ComputePlaneGenerator, found 0 objects"}},
		{name: "input pattern that names nothing", args: []string{"config.yaml", "nothing/*.yaml"}, files: map[string]string{"config.yaml": baseConfig}, want: []string{`input "nothing/*.yaml": no such file or folder`}},
		{name: "bad input pattern", args: []string{"config.yaml", "[.yaml"}, files: map[string]string{"config.yaml": baseConfig}, want: []string{`input "[.yaml": bad pattern`}},
		{name: "a FIFO in an input folder", stdin: resourceList(baseConfig + "  inputs: [apps/]\n"), files: map[string]string{"apps/db.yaml": baseApp},
			prepare: func(t *testing.T, dir string) {
				if err := syscall.Mkfifo(filepath.Join(dir, "apps", "pipe.yaml"), 0o644); err != nil {
					t.Skip("no FIFOs:", err)
				}
			}, want: []string{"apps/pipe.yaml: failed to read input: not a regular file"}},
		{name: "200,000 empty documents", long: true, files: files(strings.Repeat("---\n", 200_000) + baseApp), args: standaloneArgs, render: []string{"name: postgres-db"}},
		{name: "a million documents", long: true, files: files(strings.Repeat("---\napiVersion: v1\nkind: ConfigMap\n", 1_000_000)), args: standaloneArgs, want: []string{"apps.yaml: the inputs of one run may hold at most 500,000 objects; this file holds more YAML documents than that"}},
		{name: "thousands of problems", stdin: krm(brokenApps(3000)...), want: []string{"metadata.namespace: \"Tenant-X\" is not a valid namespace name", "... and 2000 more problems"}},

		// Alias bombs and aliases.
		{name: "alias bomb in an app spec", stdin: krm(app(billionLaughs(10, 10))), want: []string{appRef + ": spec.l", "expands to more than 1,000,000 YAML nodes with its aliases followed (a YAML alias bomb?)"}},
		{name: "alias bomb in labels", stdin: krm(appWithMetadata("name: db\nnamespace: tenant-acme\nlabels:\n" + indent(billionLaughs(10, 10), "  "))), want: []string{appRef + ": metadata.labels.l", "YAML alias bomb"}},
		{name: "alias bomb in knobs", stdin: krm(baseApp, "apiVersion: apps.cozystack.io/v1alpha1\nkind: ComputePlane\nmetadata:\n  name: computeplane\n  namespace: tenant-acme\nspec:\n  nodeGroups:\n"+indent(billionLaughs(10, 10), "    ")), want: []string{"ComputePlane tenant-acme/computeplane: spec.nodeGroups.l", "YAML alias bomb"}},
		{name: "alias bomb in the config", stdin: resourceList(baseConfig+"  cluster:\n    values:\n"+indent(billionLaughs(10, 10), "      "), baseDefinition, baseTenant, baseApp), want: []string{"ComputePlaneGenerator fleet: spec.cluster.values.l", "YAML alias bomb"}},
		{name: "alias bomb in an object that passes through", stdin: krm(baseApp, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: tenant-acme\ndata:\n"+indent(billionLaughs(10, 10), "  ")), want: []string{"ConfigMap tenant-acme/x: data.l", "YAML alias bomb"}},
		{name: "alias bomb in a file", files: files(app(billionLaughs(12, 10))), args: standaloneArgs, want: []string{"apps.yaml: " + appRef + ": spec.l", "YAML alias bomb"}},
		{name: "alias bombs spread over objects", files: files(strings.Join(spreadBombs(150), "---\n")), args: standaloneArgs, want: []string{"the objects of one run may expand to at most 32,000,000 YAML nodes together"}},
		{name: "alias bombs spread over items", stdin: krm(spreadBombs(10)...), want: []string{"the inputs of the KRM function (items and spec.inputs) may hold at most 2,000,000 YAML nodes together (aliases followed)", "render a fleet this large with the standalone CLI"}},
		{name: "an alias that refers to its own ancestor", stdin: krm(app("a: &a [x, *a]\n")), want: []string{appRef + ": spec.a[1]: alias *a refers to a node that contains it"}},
		{name: "an item that aliases another item", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" + indent(baseConfig, "  ") + "items:\n" + item(baseDefinition) + item(baseTenant) + "- &db\n" + indent(baseApp, "  ") + "- *db\n", want: []string{"items[3]: must be an object (a YAML map), not a YAML alias (*db)"}},
		{name: "a value that aliases another item", stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" + indent(baseConfig, "  ") + "items:\n" + item(baseDefinition) + item(baseTenant) + item(app("a: &shared {x: 1}\n")) + item(strings.Replace(app("b: *shared\n"), "name: db", "name: db2", 1)), want: []string{"Postgres tenant-acme/db2: spec.b: alias *shared refers to an anchor outside this object"}},
		{name: "metadata is an alias", stdin: krm("apiVersion: v1\nkind: ConfigMap\ndata: &m {name: x}\nmetadata: *m\n"), want: []string{"ConfigMap x: metadata: must be written out, not a YAML alias (*m)"}},
		{name: "an anchor in annotations", stdin: krm(baseApp, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/index: &i '0'\ndata: {i: *i}\n"), want: []string{"ConfigMap x: metadata.annotations[config.kubernetes.io/index]: must be written out, without YAML anchors or aliases"}},
		{name: "anchored labels used again pass through", stdin: krm(baseApp, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: tenant-acme\n  labels: &l {app: web}\nspec:\n  selector:\n    matchLabels: *l\n"), render: []string{"labels: &l", "matchLabels: *l"}},
		// Found by FuzzProcessor: go-yaml writes an empty null in a flow
		// collection or as a key as '', a string on the next run.
		{name: "empty nulls in flow collections stay null", stdin: resourceList(keepInputsConfig, baseDefinition, baseTenant, app("{backup, users: [{name: app, password}]}\n"), "apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: t, namespace: tenant-acme, labels}\nspec: {flag, list: [{a}]}\n"),
			render: []string{"metadata: {name: t, namespace: tenant-acme, labels: null}", "spec: {flag: null, list: [{a: null}]}", "      backup: null\n", "      - name: app\n        password: null\n"}, stable: true},
		{name: "an empty key is written as the string key null, as it is read", files: map[string]string{"config.yaml": keepInputsConfig, "defs.yaml": baseDefinition, "tenants.yaml": baseTenant, "apps.yaml": app("? \n: empty-key\n")}, args: standaloneArgs, render: []string{"    \"null\": empty-key\n"}, stable: true},
		// Found by FuzzDecode: go-yaml attaches a comment after an empty
		// last entry of a nested map to the entry when another document
		// follows, and to the document (which is not part of the object) at
		// the end of the stream. zz comes first here and last in the output.
		{name: "a comment after an empty last entry passes through stably", files: map[string]string{"config.yaml": keepInputsConfig, "defs.yaml": baseDefinition, "tenants.yaml": baseTenant, "apps.yaml": commentedLast + "---\n" + baseApp},
			args: standaloneArgs, render: []string{"name: zz"}, stable: true},
		{name: "a comment after an empty last entry passes through stably in a ResourceList", stdin: resourceList(keepInputsConfig, commentedLast, baseDefinition, baseTenant, baseApp),
			render: []string{"name: zz"}, stable: true},
		{name: "aliases inside an app render expanded", stdin: krm(app("a: &a {x: 1}\nb: *a\n")), render: []string{"      b:\n        x: 1\n"}},

		// Deep nesting.
		{name: "10,000 levels in an app spec", stdin: krm(app("deep: " + nestedFlow(10000) + "\n")), want: []string{appRef + ": spec.deep[0][0][0]", "nests deeper than 100 levels"}},
		{name: "10,000 block levels in an app spec", stdin: krm(app(nestedBlock(9990))), want: []string{appRef + ": spec.k.k.k.k", "nests deeper than 100 levels"}},
		{name: "20,000 levels in a flow list", stdin: krm(app("deep: " + nestedFlow(20000) + "\n")), want: []string{"stdin: invalid YAML: yaml: line 39: exceeded max depth of 10000"}},
		{name: "deep nesting in a file", files: files(app("deep: " + nestedFlow(5000) + "\n")), args: standaloneArgs, want: []string{"apps.yaml: " + appRef + ": spec.deep[0]", "nests deeper than 100 levels"}},
		{name: "deep nesting through aliases", stdin: krm(app(aliasChain(150))), want: []string{appRef, "nests deeper than 100 levels"}},
		{name: "100 levels render", stdin: krm(app("deep: " + nestedFlow(97) + "\n")), render: []string{"      deep:\n      - - - - - - -"}},

		// Size.
		{name: "a 50 MB value renders", long: true, stdin: krm(app("blob: " + strings.Repeat("x", largeValue) + "\n")), render: []string{"blob: xxxx"}, maxRSS: 1536},
		{name: "a 50 MB value renders standalone", long: true, files: files(app("blob: |\n  " + strings.Repeat("y", largeValue) + "\n")), args: standaloneArgs, render: []string{"blob: |"}, maxRSS: 1536},
		{name: "a file larger than the run may read", args: []string{"config.yaml", "huge.yaml"}, files: map[string]string{"config.yaml": baseConfig},
			prepare: func(t *testing.T, dir string) { sparse(t, filepath.Join(dir, "huge.yaml"), 5<<30) }, want: []string{"huge.yaml: the file is 5120 MiB; the inputs of one run may hold at most 256 MiB together"}},
		{name: "a file on stdin larger than the run may read", stdinFile: "huge.yaml",
			prepare: func(t *testing.T, dir string) { sparse(t, filepath.Join(dir, "huge.yaml"), 5<<30) }, want: []string{"stdin: the ResourceList is 5120 MiB, larger than the 256 MiB one run reads"}},
		{name: "an endless stream on stdin", long: true, stdinReader: func() io.Reader { return &endless{pattern: []byte("a: b\n")} }, want: []string{"stdin: the ResourceList is larger than 256 MiB"}, maxRSS: 1536},
		{name: "a dense document", args: []string{"config.yaml", "dense.yaml"}, files: map[string]string{"config.yaml": baseConfig},
			prepare: func(t *testing.T, dir string) {
				writeLarge(t, filepath.Join(dir, "dense.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nlist: [", "a,", "a]\n", 30<<20)
			}, want: []string{"dense.yaml: a YAML document holds about 47,", "nodes (estimated from its bytes before parsing); one document may hold at most about 4,000,000: write one object per document"}},
		{name: "dense documents", long: true, args: []string{"config.yaml", "dense.yaml"}, files: map[string]string{"config.yaml": baseConfig},
			prepare: func(t *testing.T, dir string) {
				doc := "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nlist: [" + strings.Repeat("a,", 1_300_000) + "a]\n"
				writeLarge(t, filepath.Join(dir, "dense.yaml"), "", doc, "", 9*len(doc)-1)
			}, want: []string{"dense.yaml: the inputs of one run may hold at most about 32,000,000 YAML nodes together (estimated from their bytes before parsing)"}},
		{name: "large objects that pass through", long: true, files: files(largeConfigMaps(3, 470_000)), args: standaloneArgs, want: []string{"ConfigMap c2: the objects that pass through this function or are kept (keepInputs) may hold at most 2,000,000 YAML nodes together"}},
		{name: "too many objects", long: true, stdin: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nfunctionConfig:\n" + indent(baseConfig, "  ") + "items: [" + strings.Repeat("{kind: A, apiVersion: v1},", 50_001) + "{}]\n", want: []string{"stdin: ResourceList: items: holds 50,002 objects; a ResourceList may hold at most 50,000 (render a fleet this large with the standalone CLI)"}},
		{name: "a ResourceList too large to write", long: true, stdin: resourceList(baseConfig+"  inputs: [apps.yaml]\n", baseDefinition), files: map[string]string{"apps.yaml": manyRootApps(40_000)},
			want: []string{"the ResourceList to write would hold", "the KRM function writes at most 2,000,000", "render a fleet this large with the standalone CLI"}, maxRSS: 2048},
		{name: "one document too large", long: true, files: files("apiVersion: v1\nkind: List\nitems:\n" + strings.Repeat("- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {a: b, c: d}}\n", 300_000)), args: standaloneArgs,
			want: []string{"apps.yaml: a YAML document holds about 11,400,010 nodes (estimated from its bytes before parsing); one document may hold at most about 4,000,000: write one object per document"}},
		{name: "one object too large", stdin: krm(app("list: [" + strings.Repeat("1,", 1_100_000) + "1]\n")), want: []string{appRef + ": spec.list[999", "holds more than 1,000,000 YAML nodes; no Kubernetes object is that large"}},

		{name: "config values copied into many clusters", stdin: resourceList(baseConfig+"  cluster:\n    values:\n      list: ["+strings.Repeat("1,", 200_000)+"1]\n", manyTenants(200)...), want: []string{"ComputePlaneGenerator fleet: spec.cluster.values: each of the 200 ComputePlane clusters copies these values (200,004 nodes, 1,600,012 bytes), more than the output may hold for such copies (at most 32,000,000 YAML nodes and 256 MiB)"}},
		{name: "definition labels copied into many releases", long: true, stdin: resourceList(baseConfig, manyApps(strings.Replace(baseDefinition, "  release:\n", "  release:\n    labels:\n"+manyLabels(1000), 1), 20_000)...), want: []string{"ApplicationDefinition postgres: spec.release: each of the 20000 releases of kind Postgres copies the labels and health checks of this definition (2,000 nodes, 4,890 bytes), more than the output may hold"}},

		// Wrong types.
		{name: "computeplane is a string", stdin: krm(strings.Replace(baseTenant, "computeplane: true", `computeplane: "yes"`, 1)), want: []string{`Tenant tenant-root/acme: spec.computeplane: must be true or false, not the string "yes"`}},
		{name: "labels is a list", stdin: krm(appWithMetadata("name: db\nnamespace: tenant-acme\nlabels: [a, b]\n")), want: []string{appRef + ": metadata.labels: must be a map, not a list"}},
		{name: "metadata is a string", stdin: krm(strings.Replace(baseApp, "metadata:\n  name: db\n  namespace: tenant-acme\n", "metadata: db\n", 1)), want: []string{"Postgres: metadata: must be a map, not the string \"db\""}},
		{name: "metadata of a passing object is a string", stdin: krm(baseApp, "apiVersion: v1\nkind: ConfigMap\nmetadata: x\n"), want: []string{"ConfigMap: metadata: must be a map, not the string \"x\""}},
		{name: "spec is a list", stdin: krm(strings.Replace(baseApp, "spec:\n  replicas: 2\n", "spec: [1, 2]\n", 1)), want: []string{appRef + ": spec: must be a map, not a list"}},
		{name: "tenant spec is a list", stdin: krm(strings.Replace(baseTenant, "spec:\n  computeplane: true\n", "spec: [true]\n", 1), baseApp), want: []string{"Tenant tenant-root/acme: spec: must be a map, not a list"}},
		{name: "chartRef is a string", stdin: resourceList(baseConfig, strings.Replace(baseDefinition, "chartRef:\n      kind: ExternalArtifact\n      name: cozystack-postgres\n      namespace: cozy-system\n", "chartRef: cozystack-postgres\n", 1), baseTenant, baseApp), want: []string{`ApplicationDefinition postgres: spec.release.chartRef: must be a map, not the string "cozystack-postgres"`}},
		{name: "prefix is a number", stdin: resourceList(baseConfig, strings.Replace(baseDefinition, "prefix: postgres-", "prefix: 5", 1), baseTenant, baseApp), want: []string{"ApplicationDefinition postgres: spec.release.prefix: must be a string, not the number 5"}},
		{name: "inputs is a map", stdin: resourceList(baseConfig+"  inputs: {a: b}\n", baseDefinition), want: []string{"ComputePlaneGenerator fleet: spec.inputs: must be a list of strings, not a map"}},
		{name: "a v1 List whose items is a map", files: files("apiVersion: v1\nkind: List\nitems: {a: b}\n"), args: standaloneArgs, want: []string{"apps.yaml: List: items: a v1 List's items must be a list, not a map"}},
		{name: "a v1 List item that is a string", files: files("apiVersion: v1\nkind: List\nitems: [x]\n"), args: standaloneArgs, want: []string{"apps.yaml: List: items[0]: must be an object (a YAML map), not the string \"x\""}},
		{name: "kind is a list", stdin: krm("apiVersion: v1\nkind: [a]\nmetadata: {name: x}\n"), want: []string{"kind: must be a string, not a list"}},
		{name: "apiVersion is missing", stdin: krm("kind: ConfigMap\nmetadata: {name: x}\n"), want: []string{"ConfigMap x: apiVersion: is required"}},
		{name: "name is a map", stdin: krm(appWithMetadata("name: {a: b}\nnamespace: tenant-acme\n")), want: []string{"metadata.name: must be a string, not a map"}},
		{name: "namespace is a number", stdin: krm(appWithMetadata("name: db\nnamespace: 5\n")), want: []string{"metadata.namespace: must be a string, not the number 5"}},
		{name: "label value is a number", stdin: krm(appWithMetadata("name: db\nnamespace: tenant-acme\nlabels: {tier: 3}\n")), want: []string{appRef + ": metadata.labels.tier: must be a string, not the number 3"}},
		{name: "config values is a list", stdin: resourceList(baseConfig+"  cluster:\n    values: [a]\n", baseDefinition), want: []string{"spec.cluster.values: must be a map, not a list"}},
		{name: "keepInputs is a string", stdin: resourceList(baseConfig+"  keepInputs: \"true\"\n", baseDefinition), want: []string{`spec.keepInputs: must be true or false, not the string "true"`}},

		// Missing parts.
		{name: "missing metadata", stdin: krm(strings.Replace(baseApp, "metadata:\n  name: db\n  namespace: tenant-acme\n", "", 1)), want: []string{"Postgres: metadata.name: is required", "Postgres: metadata.namespace: is required"}},
		{name: "missing name", stdin: krm(appWithMetadata("namespace: tenant-acme\n")), want: []string{"Postgres tenant-acme/: metadata.name: is required"}},
		{name: "missing namespace", stdin: krm(appWithMetadata("name: db\n")), want: []string{"Postgres db: metadata.namespace: is required"}},
		{name: "tenant without namespace", stdin: krm(strings.Replace(baseTenant, "  namespace: tenant-root\n", "", 1)), want: []string{"Tenant acme: metadata.namespace: is required"}},
		{name: "a definition without a release", stdin: resourceList(baseConfig, baseDefinition[:strings.Index(baseDefinition, "  release:")], baseTenant, baseApp), want: []string{"ApplicationDefinition postgres: spec.release: is required"}},
		{name: "a definition without a spec", stdin: resourceList(baseConfig, baseDefinition[:strings.Index(baseDefinition, "spec:")], baseTenant), want: []string{"ApplicationDefinition postgres: spec: is required"}},
		{name: "an empty object", stdin: krm("{}\n"), want: []string{"apiVersion: is required", "kind: is required"}},

		// Unknown and misspelled config fields.
		{name: "misspelled config field", stdin: resourceList(strings.Replace(baseConfig, "delivery:", "delivry:", 1), baseDefinition), want: []string{"ComputePlaneGenerator fleet: spec.delivry: unknown field; known fields here: inputs, delivery"}},
		{name: "unknown nested config field", stdin: resourceList(baseConfig+"  source:\n    nmae: x\n", baseDefinition), want: []string{"spec.source.nmae: unknown field"}},
		{name: "unknown top-level config field", stdin: resourceList(baseConfig+"specs: {}\n", baseDefinition), want: []string{"ComputePlaneGenerator fleet: specs: unknown field"}},
		{name: "config of another kind", stdin: resourceList(strings.Replace(baseConfig, "ComputePlaneGenerator", "ComputePlaneGenrator", 1), baseDefinition), want: []string{"the function config must be fn.computeplane.dev/v1alpha1 ComputePlaneGenerator (or a v1 ConfigMap of scalar fields, as kpt fn eval -- key=value makes), not fn.computeplane.dev/v1alpha1 ComputePlaneGenrator"}},

		// Path-like names.
		{name: "app named ../x", stdin: krm(appWithMetadata("name: ../x\nnamespace: tenant-acme\n")), want: []string{`metadata.name: "../x" must be a DNS-1035 label`}},
		{name: "app namespace /etc", stdin: krm(appWithMetadata("name: db\nnamespace: /etc\n")), want: []string{`metadata.namespace: "/etc" is not a valid namespace name`}},
		{name: "app namespace a/b", stdin: krm(appWithMetadata("name: db\nnamespace: a/b\n")), want: []string{`metadata.namespace: "a/b" is not a valid namespace name`}},
		{name: "app name with NUL", stdin: krm(appWithMetadata("name: \"db\\0x\"\nnamespace: tenant-acme\n")), want: []string{`metadata.name: "db\x00x" must be a DNS-1035 label`}},
		{name: "app name with a newline", stdin: krm(appWithMetadata("name: \"db\\nx\"\nnamespace: tenant-acme\n")), want: []string{`metadata.name: "db\nx" must be a DNS-1035 label`}},
		{name: "tenant named ../x", stdin: krm(strings.Replace(baseTenant, "name: acme", "name: ../x", 1)), want: []string{`tenant name "../x" must start with a lowercase letter`}},
		{name: "tenant in namespace ../../etc", stdin: krm(strings.Replace(baseTenant, "namespace: tenant-root", "namespace: ../../etc", 1)), want: []string{`Tenant ../../etc/acme: metadata.namespace: "../../etc" is not a valid namespace name`}},
		{name: "knobs in namespace ../x", stdin: krm(baseApp, "apiVersion: apps.cozystack.io/v1alpha1\nkind: ComputePlane\nmetadata:\n  name: computeplane\n  namespace: ../x\nspec: {}\n"), want: []string{`metadata.namespace: "../x" is not a valid namespace name`}},
		{name: "definition named /etc/passwd", stdin: resourceList(baseConfig, strings.Replace(baseDefinition, "name: postgres\n", "name: /etc/passwd\n", 1)), want: []string{`metadata.name: "/etc/passwd" is not a valid ApplicationDefinition name`}},
		{name: "passing object named ../../etc/passwd", stdin: krm(baseApp, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../../etc/passwd\n  namespace: tenant-acme\n"), want: []string{`ConfigMap tenant-acme/../../etc/passwd: metadata.name: "../../etc/passwd" is not a valid object name: may not contain '/'`}},
		{name: "an item whose path leads out of the package", stdin: krm(baseApp, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    internal.config.kubernetes.io/path: ../../etc/cron.d/x.yaml\n"), want: []string{`metadata.annotations[internal.config.kubernetes.io/path]: "../../etc/cron.d/x.yaml" leads outside the package`}},
		{name: "a label key with a newline", stdin: krm(appWithMetadata("name: db\nnamespace: tenant-acme\nlabels: {\"a\\nb\": x}\n")), want: []string{appRef + `: "metadata.labels.a\nb": "a\nb" is not a valid label key`}},
		{name: "passing object named with a newline", stdin: krm(baseApp, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"a\\nb\"\n"), want: []string{`metadata.name: "a\nb" is not a valid object name: it holds spaces or control characters`}},
		{name: "input pattern outside the folder", stdin: resourceList(baseConfig + "  inputs: [../x]\n"), want: []string{`spec.inputs: input "../x": must stay inside the config's folder`}},
		{name: "absolute input pattern", stdin: resourceList(baseConfig + "  inputs: [/etc/*.yaml]\n"), want: []string{`spec.inputs: input "/etc/*.yaml": must be relative to the config's folder`}},
		{name: "input through a symbolic link out of the folder", stdin: resourceList(baseConfig + "  inputs: [link/]\n"),
			prepare: func(t *testing.T, dir string) {
				if err := os.Symlink(t.TempDir(), filepath.Join(dir, "link")); err != nil {
					t.Skip("no symbolic links:", err)
				}
			}, want: []string{`spec.inputs: input "link/": link/ leads outside the config's folder (a symbolic link?)`}},
		{name: "input that is a FIFO", stdin: resourceList(baseConfig + "  inputs: [fifo.yaml]\n"),
			prepare: func(t *testing.T, dir string) {
				if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
					t.Skip("no FIFOs:", err)
				}
			}, want: []string{"fifo.yaml: failed to read input: not a regular file"}},

		{name: "fleet folder: renders inside it", files: files(baseApp), args: append([]string{"--output-dir", "out"}, standaloneArgs...), writes: "out"},
		{name: "fleet folder: a refusal writes nothing", files: files(appWithMetadata("name: ../../x\nnamespace: tenant-acme\n")), args: append([]string{"--output-dir", "out"}, standaloneArgs...), want: []string{`metadata.name: "../../x" must be a DNS-1035 label`}},
		{name: "fleet folder: a link in it", files: files(baseApp), args: append([]string{"--output-dir", "out"}, standaloneArgs...),
			prepare: func(t *testing.T, dir string) {
				if err := os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(dir, "..", ".."), filepath.Join(dir, "out", "tenant-acme")); err != nil {
					t.Skip("no symbolic links:", err)
				}
			}, want: []string{"tenant-acme: is a symbolic link", "computeplane-fn never writes through links"}},

		// Keys, merge keys and tags.
		{name: "duplicate key in an app spec", stdin: krm(app("a: 1\na: 2\n")), want: []string{appRef + ": spec.a: is set twice in this map (duplicate key)"}},
		{name: "duplicate spec", stdin: krm(baseApp + "spec: {}\n"), want: []string{appRef + ": spec: is set twice in this map (duplicate key)"}},
		{name: "duplicate key in the config", stdin: resourceList(baseConfig+"  delivery: Platform\n", baseDefinition), want: []string{"ComputePlaneGenerator fleet: spec.delivery: is set twice"}},
		{name: "merge key in an app spec", stdin: krm(app("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n")), want: []string{appRef + ": spec.other.<<: a map key << is refused, however quoted or tagged: YAML 1.1 readers"}},
		{name: "quoted merge key in an app spec", stdin: krm(app("\"<<\": {_namespace: {etcd: tenant-beta}}\n")), want: []string{appRef + ": spec.<<: a map key << is refused", "take it for a merge key, so what is applied would differ from what was validated"}},
		{name: "merge key in metadata", stdin: krm(strings.Replace(baseApp, "metadata:\n", "metadata:\n  <<: {labels: {a: b}}\n", 1)), want: []string{appRef + ": metadata.<<: a map key << is refused"}},
		{name: "a list as a map key", stdin: krm(app("? [a, b]\n: c\n")), want: []string{appRef + ": spec[0]: a map key must be a string, not a list"}},
		{name: "a map as a map key", stdin: krm(app("? {a: b}\n: c\n")), want: []string{"a map key must be a string, not a map"}},
		{name: "numbers as map keys render", stdin: krm(app("ports: {80: http, 443: https}\n")), render: []string{"80: http"}},
		{name: "!!binary renders", stdin: krm(app("cert: !!binary aGVsbG8=\n")), render: []string{"cert: !!binary aGVsbG8="}},
		{name: "keys Flux reads otherwise become strings", stdin: krm(app("k: {1.0: a, 0x10: b, 80: c}\n")), render: []string{"\"0x10\": b\n", "\"1.0\": a\n", "80: c\n"}},
		{name: "YAML 1.1 booleans are quoted", stdin: krm(app("region: \"NO\"\n\"N\": \"Y\"\n")), render: []string{"\"N\": \"Y\"\n", "region: \"NO\"\n"}},
		{name: "!!binary that is not base64", stdin: krm(app("cert: !!binary '%%%'\n")), want: []string{appRef + `: spec.cert: !!binary "%%%" is not a valid !!binary`}},
		{name: "!!int that is no number", stdin: krm(app("replicas: !!int two\n")), want: []string{appRef + `: spec.replicas: !!int "two" is not a valid !!int`}},
		{name: "a float JSON cannot hold", stdin: krm(app("ratio: .nan\n")), want: []string{appRef + `: spec.ratio: the number ".nan" cannot be represented in JSON`}},
		{name: "custom tags render", stdin: krm(app("x: !custom value\n")), render: []string{"x: !custom value"}},

		// Labels that would make an invalid release.
		{name: "label key too long for the release", stdin: krm(appWithMetadata("name: db\nnamespace: tenant-acme\nlabels: {" + strings.Repeat("k", 50) + ": v}\n")), want: []string{appRef + ": metadata.labels." + strings.Repeat("k", 50) + `: becomes "apps.cozystack.io-kkkk`, `on the app's release, which is not a valid key there: name part must be no more than 63 bytes`}},
		{name: "label value of 1 MB", stdin: krm(appWithMetadata("name: db\nnamespace: tenant-acme\nlabels: {a: " + strings.Repeat("v", 1<<20) + "}\n")), want: []string{appRef + ": metadata.labels.a: \"vvvv", "is not a valid label value: must be no more than 63 bytes"}},
	}
}

// spreadBombs makes n apps, each an alias bomb just under the limit of one
// object, which together go over the limit of a run.
func spreadBombs(n int) []string {
	docs := make([]string, n)
	for i := range docs {
		docs[i] = strings.Replace(app(billionLaughs(5, 10)), "name: db", fmt.Sprintf("name: db%d", i), 1)
	}
	return docs
}

// aliasChain nests through aliases: each anchor holds the previous one, so
// the expanded depth is n while the text is flat.
func aliasChain(n int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 x\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d]\n", i, i, i-1)
	}
	return b.String()
}

// manyTenants is n tenants with a ComputePlane.
func manyTenants(n int) []string {
	docs := make([]string, n)
	for i := range docs {
		docs[i] = strings.Replace(baseTenant, "name: acme", fmt.Sprintf("name: t%d", i), 1)
	}
	return docs
}

// manyApps is a definition and n apps of its kind in the root tenant.
func manyApps(definition string, n int) []string {
	docs := []string{definition}
	for i := 0; i < n; i++ {
		docs = append(docs, strings.Replace(strings.Replace(baseApp, "name: db", fmt.Sprintf("name: db%d", i), 1), "tenant-acme", "tenant-root", 1))
	}
	return docs
}

// manyLabels is n labels, indented for spec.release.labels.
func manyLabels(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "      l%d: v\n", i)
	}
	return b.String()
}

// brokenApps is n apps with an invalid namespace each.
func brokenApps(n int) []string {
	docs := make([]string, n)
	for i := range docs {
		docs[i] = strings.Replace(strings.Replace(baseApp, "name: db", fmt.Sprintf("name: db%d", i), 1), "tenant-acme", "Tenant-X", 1)
	}
	return docs
}

// manyRootApps is n apps without values in the root tenant.
func manyRootApps(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "---\napiVersion: apps.cozystack.io/v1alpha1\nkind: Postgres\nmetadata: {name: db%d, namespace: tenant-root}\n", i)
	}
	return b.String()
}

// largeConfigMaps is n ConfigMaps of keys entries each.
func largeConfigMaps(n, keys int) string {
	var b strings.Builder
	for d := 0; d < n; d++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\ndata:\n", d)
		for i := 0; i < keys; i++ {
			fmt.Fprintf(&b, "  k%d: v\n", i)
		}
	}
	return b.String()
}
