package pipeline

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/internal/testkit/fleetgen"
	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
	"github.com/computeplane-dev/computeplane-fn/pkg/model"
	"github.com/computeplane-dev/computeplane-fn/pkg/order"
	"github.com/computeplane-dev/computeplane-fn/pkg/output"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// The stage benchmarks time the steps of one standalone run on a generated
// mid-size fleet: go test -run '^$' -bench . -benchmem ./pkg/pipeline/
// (make bench runs them; docs/performance.md).
//
// The benchmark fleet: 300 tenants (3,000 apps) unless BENCH_TENANTS says
// otherwise. It is generated once per process into a temporary folder.
var (
	fleetOnce sync.Once
	fleetDir  string
	fleetErr  error
)

func benchFleet(b *testing.B) string {
	b.Helper()
	fleetOnce.Do(func() {
		tenants := 300
		if s := os.Getenv("BENCH_TENANTS"); s != "" {
			tenants, fleetErr = strconv.Atoi(s)
			if fleetErr != nil {
				return
			}
		}
		fleetDir, fleetErr = os.MkdirTemp("", "computeplane-fn-bench-")
		if fleetErr != nil {
			return
		}
		_, fleetErr = fleetgen.Generate(fleetDir, fleetgen.Defaults(tenants))
	})
	if fleetErr != nil {
		b.Fatal(fleetErr)
	}
	return fleetDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fleetDir != "" {
		os.RemoveAll(fleetDir)
	}
	os.Exit(code)
}

func readFleet(b *testing.B, dir string) (*api.Config, []*model.Input) {
	b.Helper()
	r, problems := readAll(Options{Dir: dir, ConfigFile: filepath.Join(dir, fleetgen.ConfigFile)})
	if len(problems) > 0 {
		b.Fatal(problems)
	}
	return r.cfg, r.inputs
}

func inputBytes(b *testing.B, dir string) int64 {
	b.Helper()
	mf, err := fleetgen.ReadManifest(dir)
	if err != nil {
		b.Fatal(err)
	}
	return mf.Stats.Bytes
}

// BenchmarkRead reads the fleet as the standalone CLI does: files decoded on
// all cores, app objects decoded and their values encoded while reading.
func BenchmarkRead(b *testing.B) {
	dir := benchFleet(b)
	b.SetBytes(inputBytes(b, dir))
	b.ReportAllocs()
	for b.Loop() {
		readFleet(b, dir)
	}
}

// BenchmarkIndex builds and checks the fleet (model.Build).
func BenchmarkIndex(b *testing.B) {
	cfg, objs := readFleet(b, benchFleet(b))
	b.ReportAllocs()
	for b.Loop() {
		if _, problems := model.Build(cfg, objs); len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}

// BenchmarkCheckValues reads, builds and checks the fleet with every app's
// values checked against its definition's schema (spec.apps.values: Warn,
// the default: each app as it is read, model.ValuesCheck) and without
// (Ignore): the difference is the check's cost. Every generated app is
// valid against its definition, as Cozystack's are, so both build the same
// fleet.
func BenchmarkCheckValues(b *testing.B) {
	dir := benchFleet(b)
	for _, values := range []string{api.AppValuesWarn, api.AppValuesIgnore} {
		b.Run("values="+values, func(b *testing.B) {
			cfg, _ := readFleet(b, dir)
			cfg.Apps.Values = values
			b.SetBytes(inputBytes(b, dir))
			b.ReportAllocs()
			for b.Loop() {
				r, problems := readInputs(new(input.Budget), cfg, Options{Dir: dir, Config: cfg})
				if len(problems) > 0 {
					b.Fatal(problems)
				}
				f, problems := model.Build(cfg, r.inputs)
				if len(problems) > 0 {
					b.Fatal(problems)
				}
				if w := f.Warnings(); len(w) > 0 && strings.Contains(w[len(w)-1].Message, "openAPISchema") {
					b.Fatalf("the generated fleet's apps break their schemas: %v", w[len(w)-1])
				}
			}
		})
	}
}

// BenchmarkRender renders every output object and puts them in order. The
// releases of apps whose values were encoded while reading are only
// planned here: the writer renders them (BenchmarkSerialize).
func BenchmarkRender(b *testing.B) {
	cfg, objs := readFleet(b, benchFleet(b))
	f, problems := model.Build(cfg, objs)
	if len(problems) > 0 {
		b.Fatal(problems)
	}
	b.ReportAllocs()
	for b.Loop() {
		out, err := render.Outputs(f)
		if err != nil {
			b.Fatal(err)
		}
		if _, problems := order.Objects(out, nil); len(problems) > 0 {
			b.Fatal(problems)
		}
	}
}

// BenchmarkSerialize encodes the rendered objects as one YAML stream,
// rendering the releases put off until they are written.
func BenchmarkSerialize(b *testing.B) {
	cfg, objs := readFleet(b, benchFleet(b))
	f, problems := model.Build(cfg, objs)
	if len(problems) > 0 {
		b.Fatal(problems)
	}
	out, err := render.Outputs(f)
	if err != nil {
		b.Fatal(err)
	}
	out, problems = order.Objects(out, nil)
	if len(problems) > 0 {
		b.Fatal(problems)
	}
	var w countingWriter
	if err := output.Encode(&w, out); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(w.n)
	b.ReportAllocs()
	for b.Loop() {
		if err := output.Encode(io.Discard, out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStandalone is the whole standalone run as the CLI runs it: read,
// index, render, order (pipeline.Run) and serialize (output.Encode).
func BenchmarkStandalone(b *testing.B) {
	dir := benchFleet(b)
	b.SetBytes(inputBytes(b, dir))
	b.ReportAllocs()
	for b.Loop() {
		run, problems := Run(Options{Dir: dir, ConfigFile: filepath.Join(dir, fleetgen.ConfigFile)})
		if len(problems) > 0 {
			b.Fatal(problems)
		}
		if err := output.Encode(io.Discard, run.Objects); err != nil {
			b.Fatal(err)
		}
	}
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}
