package harness

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// ServicePort stands in for kube-proxy's mapping of a Service port to its
// pods' target port: it accepts on listen (an address of the loopback
// range) and copies every connection to target, until t ends. The API
// server dials a webhook's Service by its port (443 by default), while
// the component listens on its own (controller-runtime's 9443).
func ServicePort(t testing.TB, listen, target string) {
	t.Helper()
	l, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatalf("failed to listen on %s for the Service port: %v", listen, err)
	}
	var conns sync.WaitGroup
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer in.Close()
				out, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer out.Close()
				go func() { _, _ = io.Copy(out, in); _ = out.(*net.TCPConn).CloseWrite() }()
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
}

// CAInjector stands in for cert-manager's cainjector: every
// MutatingWebhookConfiguration whose webhooks call the Service
// namespace/name gets the CA in each such webhook's caBundle, written as a
// field manager of its own (cainjector), when it is created or changed,
// and again when the CA changes (a restarted component serves a new
// certificate).
type CAInjector struct {
	c               *Client
	namespace, name string

	mu sync.Mutex
	ca []byte
}

// InjectorManager is the field manager of the CAInjector's writes.
const InjectorManager = "cert-manager-cainjector"

// StartCAInjector injects ca into the webhook configurations that call the
// Service namespace/name, until ctx ends.
func StartCAInjector(ctx context.Context, t testing.TB, c *Client, namespace, name string, ca []byte) *CAInjector {
	t.Helper()
	in := &CAInjector{c: c, namespace: namespace, name: name, ca: ca}
	events, err := c.Watch(ctx, "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range events {
			if ev.Type == watch.Added || ev.Type == watch.Modified {
				_ = in.inject(ctx, ev.Object)
			}
		}
	}()
	return in
}

// SetCA changes the CA and writes it into every configuration that calls
// the Service.
func (in *CAInjector) SetCA(ctx context.Context, ca []byte) error {
	in.mu.Lock()
	in.ca = ca
	in.mu.Unlock()
	all, err := in.c.List(ctx, "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "", "")
	if err != nil {
		return err
	}
	var errs []error
	for i := range all {
		errs = append(errs, in.inject(ctx, &all[i]))
	}
	return errors.Join(errs...)
}

// inject writes the CA into the webhooks of o that call the Service and
// do not carry it yet.
func (in *CAInjector) inject(ctx context.Context, o *unstructured.Unstructured) error {
	in.mu.Lock()
	bundle := CABundle(in.ca)
	in.mu.Unlock()
	hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
	var patch []any
	for _, h := range hooks {
		hook, _ := h.(map[string]any)
		svcNS, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "namespace")
		svcName, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "name")
		current, _, _ := unstructured.NestedString(hook, "clientConfig", "caBundle")
		if svcNS != in.namespace || svcName != in.name || current == bundle {
			continue
		}
		patch = append(patch, map[string]any{"name": hook["name"], "clientConfig": map[string]any{"caBundle": bundle}})
	}
	if len(patch) == 0 {
		return nil
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
		"metadata": map[string]any{"name": o.GetName()},
		"webhooks": patch,
	}}
	_, _, err := in.c.Apply(ctx, u, ApplyOptions{FieldManager: InjectorManager})
	return err
}
