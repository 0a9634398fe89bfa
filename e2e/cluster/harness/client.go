package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the field manager of everything the suite applies.
const FieldManager = "computeplane-e2e"

// Client talks to one API server as one identity through client-go's
// dynamic client, and records the warnings the server sends back.
type Client struct {
	Server   *APIServer
	Identity string
	dyn      dynamic.Interface
	mapper   *restmapper.DeferredDiscoveryRESTMapper

	mu       sync.Mutex // one request at a time owns the warnings
	warnings *warningRecorder
}

type warningRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningRecorder) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warningRecorder) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.seen
	w.seen = nil
	return out
}

// NewClient builds a client from a configuration of s (Config or
// Impersonating); identity names it in messages.
func NewClient(s *APIServer, identity string, cfg *rest.Config) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	w := &warningRecorder{}
	cfg.WarningHandler = w
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create a discovery client: %w", err)
	}
	return &Client{
		Server: s, Identity: identity, dyn: dyn, warnings: w,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
	}, nil
}

// MustClient is NewClient for tests.
func MustClient(t testing.TB, s *APIServer, identity string, cfg *rest.Config) *Client {
	t.Helper()
	c, err := NewClient(s, identity, cfg)
	if err != nil {
		t.Fatalf("%s as %s: %v", s.Name, identity, err)
	}
	return c
}

// Resource finds the resource of an apiVersion and kind, refreshing
// discovery once when the kind is new (a CRD applied a moment ago).
func (c *Client) Resource(apiVersion, kind string) (schema.GroupVersionResource, bool, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("failed to parse apiVersion %q: %w", apiVersion, err)
	}
	gk := gv.WithKind(kind).GroupKind()
	m, err := c.mapper.RESTMapping(gk, gv.Version)
	if err != nil && meta.IsNoMatchError(err) {
		c.mapper.Reset()
		m, err = c.mapper.RESTMapping(gk, gv.Version)
	}
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("failed to find the resource of %s %s: %w", apiVersion, kind, err)
	}
	return m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

func (c *Client) resourceFor(apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	gvr, namespaced, err := c.Resource(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	if namespaced {
		return c.dyn.Resource(gvr).Namespace(namespace), nil
	}
	return c.dyn.Resource(gvr), nil
}

// ApplyOptions tune Apply.
type ApplyOptions struct {
	DryRun bool
	// Subresource "status" applies the object's status.
	Subresource string
	// FieldManager applies as another field manager than the suite's
	// (kustomize-controller, to see what its apply would change).
	FieldManager string
}

// Apply sends obj by server-side apply with fieldValidation=Strict, as the
// suite's field manager, forcing conflicts, and returns what the server
// stored (or would store, dry-run) and the warnings it sent.
func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured, o ApplyOptions) (*unstructured.Unstructured, []string, error) {
	ri, err := c.resourceFor(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace())
	if err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to encode %s: %w", Describe(obj), err)
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: FieldManager, FieldValidation: "Strict", Force: &force}
	if o.FieldManager != "" {
		opts.FieldManager = o.FieldManager
	}
	if o.DryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var sub []string
	if o.Subresource != "" {
		sub = []string{o.Subresource}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warnings.take()
	got, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts, sub...)
	warnings := c.warnings.take()
	if err != nil {
		return nil, warnings, fmt.Errorf("failed to apply %s as %s: %w", Describe(obj), c.Identity, err)
	}
	return got, warnings, nil
}

// Create creates obj (no server-side apply), for requests whose refusal is
// the point.
func (c *Client) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return c.send(obj, "create", func(ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		return ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	})
}

// CreateSubresource posts body to a subresource of the object
// apiVersion/kind namespace/name (a ServiceAccount's "token": a
// TokenRequest), dry-run when asked.
func (c *Client) CreateSubresource(ctx context.Context, apiVersion, kind, namespace, name, subresource string,
	body *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	ri, err := c.resourceFor(apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	opts := metav1.CreateOptions{FieldManager: FieldManager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	got, err := ri.Create(ctx, body, opts, subresource)
	if err != nil {
		return nil, fmt.Errorf("failed to create %s of %s %s/%s as %s: %w", subresource, kind, namespace, name, c.Identity, err)
	}
	return got, nil
}

// Update replaces obj.
func (c *Client) Update(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return c.send(obj, "update", func(ri dynamic.ResourceInterface) (*unstructured.Unstructured, error) {
		return ri.Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
	})
}

// send makes one request about obj to obj's resource and names the verb,
// the object and the identity when it fails.
func (c *Client) send(obj *unstructured.Unstructured, verb string, request func(dynamic.ResourceInterface) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	ri, err := c.resourceFor(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace())
	if err != nil {
		return nil, err
	}
	got, err := request(ri)
	if err != nil {
		return nil, fmt.Errorf("failed to %s %s as %s: %w", verb, Describe(obj), c.Identity, err)
	}
	return got, nil
}

// Get reads an object; a missing object is (nil, nil).
func (c *Client) Get(ctx context.Context, apiVersion, kind, namespace, name string) (*unstructured.Unstructured, error) {
	ri, err := c.resourceFor(apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	got, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get %s %s/%s: %w", kind, namespace, name, err)
	}
	return got, nil
}

// List lists the objects of a kind in a namespace ("" for all).
func (c *Client) List(ctx context.Context, apiVersion, kind, namespace string, selector string) ([]unstructured.Unstructured, error) {
	ri, err := c.resourceFor(apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("failed to list %s in %q: %w", kind, namespace, err)
	}
	return l.Items, nil
}

// Delete deletes an object; a missing one is not an error.
func (c *Client) Delete(ctx context.Context, apiVersion, kind, namespace, name string) error {
	ri, err := c.resourceFor(apiVersion, kind, namespace)
	if err != nil {
		return err
	}
	err = ri.Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to delete %s %s/%s as %s: %w", kind, namespace, name, c.Identity, err)
	}
	return nil
}

// WaitFor polls an object until check accepts it. check sees nil while the
// object does not exist and says what it saw; a timeout reports that.
func (c *Client) WaitFor(ctx context.Context, timeout time.Duration, apiVersion, kind, namespace, name string,
	check func(*unstructured.Unstructured) (bool, string)) (*unstructured.Unstructured, error) {
	var last *unstructured.Unstructured
	err := Poll(ctx, timeout, 500*time.Millisecond, func() (bool, string) {
		obj, err := c.Get(ctx, apiVersion, kind, namespace, name)
		if err != nil {
			return false, err.Error()
		}
		last = obj
		return check(obj)
	})
	if err != nil {
		return last, fmt.Errorf("%s %s/%s in %s: %w", kind, namespace, name, c.Server.Name, err)
	}
	return last, nil
}

// Describe names an object the way messages do: Kind namespace/name.
func Describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return obj.GetKind() + " " + obj.GetName()
	}
	return obj.GetKind() + " " + obj.GetNamespace() + "/" + obj.GetName()
}

// Condition returns a status condition of obj (status, reason, message).
func Condition(obj *unstructured.Unstructured, typ string) (status, reason, message string, found bool) {
	if obj == nil {
		return "", "", "", false
	}
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			continue
		}
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		return s, r, msg, true
	}
	return "", "", "", false
}

// Ready is a WaitFor check: Ready=True at the object's generation. It says
// the Ready condition otherwise, in the controller's own words.
func Ready(obj *unstructured.Unstructured) (bool, string) {
	if obj == nil {
		return false, "not found"
	}
	status, reason, msg, ok := Condition(obj, "Ready")
	if !ok {
		return false, "no Ready condition yet"
	}
	gen := obj.GetGeneration()
	// Some kinds (source-watcher's ArtifactGenerator) record the
	// generation only in their conditions.
	observed, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if !found {
		observed = conditionGeneration(obj, "Ready")
	}
	seen := fmt.Sprintf("Ready=%s %s: %s (generation %d, observed %d)", status, reason, msg, gen, observed)
	return status == "True" && observed == gen, seen
}

// Exists is a WaitFor check that the object exists.
func Exists(obj *unstructured.Unstructured) (bool, string) {
	return obj != nil, "not found"
}

// Gone is a WaitFor check that the object no longer exists.
func Gone(obj *unstructured.Unstructured) (bool, string) {
	if obj == nil {
		return true, ""
	}
	return false, fmt.Sprintf("still there (deletionTimestamp %v)", obj.GetDeletionTimestamp())
}

// IsForbidden and friends classify a refusal.
func IsForbidden(err error) bool {
	return apierrors.IsForbidden(errors.Unwrap(err)) || apierrors.IsForbidden(err)
}

// IsInvalid reports a validation refusal.
func IsInvalid(err error) bool {
	return apierrors.IsInvalid(errors.Unwrap(err)) || apierrors.IsInvalid(err)
}

// FirstLine is the first line of s, for compact messages.
func FirstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func conditionGeneration(obj *unstructured.Unstructured, typ string) int64 {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			g, _, _ := unstructured.NestedInt64(m, "observedGeneration")
			return g
		}
	}
	return 0
}
