package harness

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HelmRecord is the part of a Helm release record the suite reads: what
// Helm applied (the manifest, after post-renderers) and its hooks.
type HelmRecord struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Version   int    `json:"version"`
	Manifest  string `json:"manifest"`
	Hooks     []struct {
		Name     string   `json:"name"`
		Kind     string   `json:"kind"`
		Manifest string   `json:"manifest"`
		Events   []string `json:"events"`
	} `json:"hooks"`
}

// ReadHelmRecord decodes the Secret sh.helm.release.v1.<release>.v<n> that
// Helm's Secret storage driver writes: data.release is base64 (the
// driver's) of gzip of the release as JSON, inside the Secret's own
// base64.
func ReadHelmRecord(secret *unstructured.Unstructured) (*HelmRecord, error) {
	raw, _, _ := unstructured.NestedString(secret.Object, "data", "release")
	outer, err := base64.StdEncoding.DecodeString(raw)
	if err != nil {
		return nil, fmt.Errorf("failed to decode %s: %w", Describe(secret), err)
	}
	inner, err := base64.StdEncoding.DecodeString(string(outer))
	if err != nil {
		return nil, fmt.Errorf("failed to decode the release in %s: %w", Describe(secret), err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(inner))
	if err != nil {
		return nil, fmt.Errorf("failed to read the release in %s: %w", Describe(secret), err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("failed to read the release in %s: %w", Describe(secret), err)
	}
	var rec HelmRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("failed to decode the release in %s: %w", Describe(secret), err)
	}
	return &rec, nil
}

// Objects are the objects of the manifest and of the hooks; with events,
// of the hooks that run on one of them only (pre-install, post-install:
// what an install creates).
func (r *HelmRecord) Objects(events ...string) ([]*unstructured.Unstructured, error) {
	objs, err := Decode([]byte(r.Manifest))
	if err != nil {
		return nil, fmt.Errorf("release %s/%s: manifest: %w", r.Namespace, r.Name, err)
	}
	for _, h := range r.Hooks {
		if len(events) > 0 && !slices.ContainsFunc(h.Events, func(ev string) bool { return slices.Contains(events, ev) }) {
			continue
		}
		ho, err := Decode([]byte(h.Manifest))
		if err != nil {
			return nil, fmt.Errorf("release %s/%s: hook %s: %w", r.Namespace, r.Name, h.Name, err)
		}
		objs = append(objs, ho...)
	}
	return objs, nil
}
