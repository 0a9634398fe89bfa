package fn_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/fn"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/pipeline"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

var update = flag.Bool("update", false, "rewrite the expected files of the fixtures")

// fixture is one golden case: fixtures/<case>/config.yaml, input*.yaml and
// expected.yaml (the rendered stream) or errors.txt (one problem per line).
type fixture struct {
	dir    string
	config []byte
	inputs []string // file names, sorted
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	dirs, err := filepath.Glob("../fixtures/*")
	if err != nil {
		t.Fatal(err)
	}
	var out []fixture
	for _, dir := range dirs {
		cfg, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
		if err != nil {
			t.Fatalf("fixture %s: %v", dir, err)
		}
		inputs, _ := filepath.Glob(filepath.Join(dir, "input*.yaml"))
		for i := range inputs {
			inputs[i] = filepath.Base(inputs[i])
		}
		slices.Sort(inputs)
		out = append(out, fixture{dir: dir, config: cfg, inputs: inputs})
	}
	if len(out) == 0 {
		t.Fatal("no fixtures found")
	}
	return out
}

// resourceList builds the ResourceList kpt would send: the inputs as items,
// each with its file in the path annotation, and the config.
func (f fixture) resourceList(t testing.TB, reverse bool) []byte {
	t.Helper()
	var items []*yaml.RNode
	for _, name := range f.inputs {
		data, err := os.ReadFile(filepath.Join(f.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), SetAnnotations: map[string]string{kioutil.PathAnnotation: name}, OmitReaderAnnotations: true}).Read()
		if err != nil {
			t.Fatalf("%s/%s: %v", f.dir, name, err)
		}
		items = append(items, nodes...)
	}
	if reverse {
		slices.Reverse(items)
	}
	cfg, err := yaml.Parse(string(f.config))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := kio.ByteWriter{Writer: &buf, KeepReaderAnnotations: true, WrappingAPIVersion: kio.ResourceListAPIVersion, WrappingKind: kio.ResourceListKind, FunctionConfig: cfg}
	if err := w.Write(items); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// runKRM runs the processor on a ResourceList in the fixture's folder and
// returns the items as a plain YAML stream without the path annotations, and
// the stderr text of a refusal.
// asNodes returns the objects with every body built into a node tree
// (render.Object.Node): whatever form a body takes, it must encode the same.
func asNodes(t testing.TB, objs []render.Object) []render.Object {
	t.Helper()
	built := make([]render.Object, len(objs))
	for i, o := range objs {
		n, err := o.Node()
		if err != nil {
			t.Fatal(err)
		}
		built[i] = o
		built[i].Body = render.NodeBody(n)
	}
	return built
}

func runKRM(t *testing.T, dir string, rl []byte) (string, string) {
	t.Helper()
	var out bytes.Buffer
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(rl), Writer: &out, KeepReaderAnnotations: true}
	err := framework.Execute(fn.Processor{Dir: dir}, rw)
	if err != nil {
		problems, ok := fn.AsProblems(err)
		if !ok {
			t.Fatalf("unexpected error: %v", err)
		}
		items, rerr := (&kio.ByteReader{Reader: &out}).Read()
		if rerr != nil {
			t.Fatalf("refusal output is not a ResourceList: %v", rerr)
		}
		if len(items) != 0 {
			t.Errorf("a refusal emitted %d items; it must emit none", len(items))
		}
		return "", problems.Error() + "\n"
	}
	items, err := (&kio.ByteReader{Reader: &out, OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, item := range items {
		for k := range item.GetAnnotations() {
			if strings.HasPrefix(k, "internal.config.kubernetes.io/") || k == kioutil.LegacyPathAnnotation || k == kioutil.LegacyIndexAnnotation || k == kioutil.LegacyIdAnnotation {
				if _, err := item.Pipe(yaml.ClearAnnotation(k)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var stream bytes.Buffer
	if err := (kio.ByteWriter{Writer: &stream}).Write(items); err != nil {
		t.Fatal(err)
	}
	return stream.String(), ""
}

func TestFixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(filepath.Base(f.dir), func(t *testing.T) {
			got, gotErr := runKRM(t, f.dir, f.resourceList(t, false))
			expectedFile, errorsFile := filepath.Join(f.dir, "expected.yaml"), filepath.Join(f.dir, "errors.txt")
			if *update {
				os.Remove(expectedFile)
				os.Remove(errorsFile)
				if gotErr != "" {
					writeFile(t, errorsFile, gotErr)
				} else {
					writeFile(t, expectedFile, got)
				}
				return
			}
			if want, err := os.ReadFile(errorsFile); err == nil {
				if diff := cmp.Diff(string(want), gotErr); diff != "" {
					t.Errorf("problems differ (-want +got):\n%s", diff)
				}
				return
			}
			want, err := os.ReadFile(expectedFile)
			if err != nil {
				t.Fatalf("fixture has neither expected.yaml nor errors.txt (run go test -update): %v", err)
			}
			if gotErr != "" {
				t.Fatalf("unexpected refusal:\n%s", gotErr)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("output differs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFixturesOrderIndependent feeds every fixture's items in reverse order:
// the output, or the list of problems, must not change by a byte.
func TestFixturesOrderIndependent(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(filepath.Base(f.dir), func(t *testing.T) {
			got, gotErr := runKRM(t, f.dir, f.resourceList(t, false))
			rev, revErr := runKRM(t, f.dir, f.resourceList(t, true))
			if diff := cmp.Diff(got+gotErr, rev+revErr); diff != "" {
				t.Errorf("reversed input changes the result (-forward +reversed):\n%s", diff)
			}
		})
	}
}

// TestFixturesStandaloneMatchesKRM renders every fixture through the
// standalone pipeline (config file plus input files), the objects encoded
// one by one as the CLI writes them and built into whole nodes
// (render.Object.Node): the streams must be byte-identical to the KRM
// function's.
func TestFixturesStandaloneMatchesKRM(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(filepath.Base(f.dir), func(t *testing.T) {
			krm, krmErr := runKRM(t, f.dir, f.resourceList(t, false))
			run, problems := pipeline.Run(pipeline.Options{Dir: f.dir, ConfigFile: filepath.Join(f.dir, "config.yaml"), Inputs: f.inputs})
			if krmErr != "" {
				if len(problems) == 0 {
					t.Fatalf("KRM refused but standalone rendered:\n%s", krmErr)
				}
				return
			}
			if len(problems) > 0 {
				t.Fatalf("standalone refused: %v", problems)
			}
			// The CLI's run: objects written one by one.
			var buf bytes.Buffer
			if err := output.Encode(&buf, run.Objects); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(krm, buf.String()); diff != "" {
				t.Errorf("standalone differs from KRM (-krm +standalone):\n%s", diff)
			}
			// The objects built into whole nodes (render.Object.Node).
			built := asNodes(t, run.Objects)
			buf.Reset()
			if err := output.Encode(&buf, built); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(krm, buf.String()); diff != "" {
				t.Errorf("built objects differ from KRM (-krm +built):\n%s", diff)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
