package harness

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// Request is one kind of request the API server counts in its own metric
// apiserver_request_total, summed over the labels that do not say what was
// written (version, scope, component, response code).
type Request struct {
	Verb        string // GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION, ...
	Group       string // "" for the core group
	Resource    string
	Subresource string
	// DryRun is a request with dryRun=All: judged, never stored.
	DryRun bool
}

// String names the request as `kubectl get --raw /metrics` would group it.
func (r Request) String() string {
	res := r.Resource
	if r.Group != "" {
		res += "." + r.Group
	}
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	s := r.Verb + " " + res
	if r.DryRun {
		s += " (dry-run)"
	}
	return s
}

// Write reports whether the verb changes what the server stores (when not
// a dry-run).
func (r Request) Write() bool {
	switch r.Verb {
	case "POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION":
		return true
	}
	return false
}

// RequestCounts are the API server's request counters at one moment.
type RequestCounts map[Request]float64

// RequestCounts scrapes the server's /metrics as the admin and returns
// apiserver_request_total. The counters count requests, whatever they
// changed: an apply that changes nothing is still one.
func (s *APIServer) RequestCounts(ctx context.Context) (RequestCounts, error) {
	cs, err := kubernetes.NewForConfig(s.Config(Admin))
	if err != nil {
		return nil, fmt.Errorf("failed to build a client for %s: %w", s.Name, err)
	}
	body, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to scrape the metrics of %s: %w", s.Name, err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("failed to parse the metrics of %s: %w", s.Name, err)
	}
	out := RequestCounts{}
	fam, ok := families["apiserver_request_total"]
	if !ok {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		var r Request
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				r.Verb = l.GetValue()
			case "group":
				r.Group = l.GetValue()
			case "resource":
				r.Resource = l.GetValue()
			case "subresource":
				r.Subresource = l.GetValue()
			case "dry_run":
				r.DryRun = l.GetValue() != ""
			}
		}
		out[r] += m.GetCounter().GetValue()
	}
	return out, nil
}

// CPUProfile takes a CPU profile of the API server over d
// (/debug/pprof/profile, as the admin), in pprof's format.
func (s *APIServer) CPUProfile(ctx context.Context, d time.Duration) ([]byte, error) {
	cfg := s.Config(Admin)
	cfg.Timeout = d + time.Minute
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to build a client for %s: %w", s.Name, err)
	}
	data, err := cs.Discovery().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(int(d.Seconds()))).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("failed to profile %s: %w", s.Name, err)
	}
	return data, nil
}

// Since is what was counted between before and c.
func (c RequestCounts) Since(before RequestCounts) RequestCounts {
	out := RequestCounts{}
	for r, n := range c {
		if d := n - before[r]; d != 0 {
			out[r] = d
		}
	}
	return out
}

// Writes keeps the requests that write (dry-runs included: Request.DryRun
// tells them apart).
func (c RequestCounts) Writes() RequestCounts {
	out := RequestCounts{}
	for r, n := range c {
		if r.Write() {
			out[r] = n
		}
	}
	return out
}

// Sum adds up the requests keep accepts.
func (c RequestCounts) Sum(keep func(Request) bool) float64 {
	total := 0.0
	for r, n := range c {
		if keep(r) {
			total += n
		}
	}
	return total
}

// Top lists the counts, one request a line, the most counted first.
func (c RequestCounts) Top() []string {
	keys := make([]Request, 0, len(c))
	for r := range c {
		keys = append(keys, r)
	}
	sort.Slice(keys, func(i, j int) bool {
		if c[keys[i]] != c[keys[j]] {
			return c[keys[i]] > c[keys[j]]
		}
		return keys[i].String() < keys[j].String()
	})
	out := make([]string, len(keys))
	for i, r := range keys {
		out[i] = fmt.Sprintf("%g %s", c[r], r)
	}
	return out
}

// String lists the counts, one request a line, in a fixed order.
func (c RequestCounts) String() string {
	lines := make([]string, 0, len(c))
	for r, n := range c {
		lines = append(lines, fmt.Sprintf("%s: %g", r, n))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// ReconcileTotal scrapes the controller's own /metrics and returns
// controller-runtime's controller_runtime_reconcile_total for the named
// controller (kustomize-controller's is "kustomization"), summed over its
// results: every call of the reconciler so far, requeues for a dependency
// and errors included.
func (p *Process) ReconcileTotal(ctx context.Context, controller string) (float64, error) {
	if p.MetricsAddr == "" {
		return 0, fmt.Errorf("%s serves no metrics the suite knows of", p.Name)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.MetricsAddr+"/metrics", nil)
	if err != nil {
		return 0, fmt.Errorf("failed to scrape the metrics of %s: %w", p.Name, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("failed to scrape the metrics of %s: %w", p.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("failed to scrape the metrics of %s: %s", p.Name, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("failed to parse the metrics of %s: %w", p.Name, err)
	}
	total := 0.0
	for _, m := range families["controller_runtime_reconcile_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "controller" && l.GetValue() == controller {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total, nil
}
