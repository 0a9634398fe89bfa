package harness

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// ArtifactServer plays source-controller's artifact storage: a loopback HTTP
// server of tarballs. The suite runs no source-controller; it publishes a
// tarball here and writes the source's status.artifact itself.
type ArtifactServer struct {
	URL   string
	mu    sync.Mutex
	files map[string][]byte
}

// StartArtifactServer serves on 127.0.0.1 until the test ends.
func StartArtifactServer(t testing.TB) *ArtifactServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("failed to listen for artifacts: %v", err)
	}
	a := &ArtifactServer{URL: "http://" + l.Addr().String(), files: map[string][]byte{}}
	srv := &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return a
}

func (a *ArtifactServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	data, ok := a.files[r.URL.Path]
	a.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/x-gzip")
	_, _ = w.Write(data)
}

// Artifact is what source-controller writes into a source's status.
type Artifact struct {
	Path, URL, Revision, Digest string
	Size                        int64
}

// Publish serves a tarball under /<kind>/<namespace>/<name>/<digest>.tar.gz
// and returns its artifact. revision "" means "latest@sha256:<digest>".
func (a *ArtifactServer) Publish(kind, namespace, name, revision string, tarball []byte) Artifact {
	sum := sha256.Sum256(tarball)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	p := path.Join(kind, namespace, name, hex.EncodeToString(sum[:])+".tar.gz")
	a.mu.Lock()
	a.files["/"+p] = tarball
	a.mu.Unlock()
	if revision == "" {
		revision = "latest@" + digest
	}
	return Artifact{Path: p, URL: a.URL + "/" + p, Revision: revision, Digest: digest, Size: int64(len(tarball))}
}

// Status returns the source object's status as source-controller writes it:
// the artifact and Ready=True at the object's generation.
func (art Artifact) Status(obj *unstructured.Unstructured) map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	st := map[string]any{
		"observedGeneration": obj.GetGeneration(),
		"artifact": map[string]any{
			"path":           art.Path,
			"url":            art.URL,
			"revision":       art.Revision,
			"digest":         art.Digest,
			"size":           art.Size,
			"lastUpdateTime": now,
		},
		"conditions": []any{map[string]any{
			"type":               "Ready",
			"status":             "True",
			"reason":             "Succeeded",
			"message":            "stored artifact for revision '" + art.Revision + "'",
			"observedGeneration": obj.GetGeneration(),
			"lastTransitionTime": now,
		}},
	}
	// An ExternalArtifact's status has no observedGeneration (its
	// producer, not a reconciler of its spec, writes it).
	if obj.GetKind() == "ExternalArtifact" {
		delete(st, "observedGeneration")
	}
	return st
}

// Tarball packs files (slash paths to contents) as a gzipped tar, in path
// order, the way Flux's sources pack theirs.
func Tarball(files map[string][]byte) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, n := range names {
		for d := path.Dir(n); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var dirList []string
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)
	epoch := time.Unix(0, 0)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: epoch}); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", d, err)
		}
	}
	for _, n := range names {
		data := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", n, err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", n, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("failed to close the tarball: %w", err)
	}
	if err := gz.Close(); err != nil {
		return nil, fmt.Errorf("failed to close the tarball: %w", err)
	}
	return buf.Bytes(), nil
}

// ReadTree reads every regular file below dir into a Tarball map, under
// prefix.
func ReadTree(dir, prefix string) (map[string][]byte, error) {
	return readTree(dir, prefix, false)
}

// ReadChartTree is ReadTree for a chart whose charts/<name> subcharts link
// to a library elsewhere in the tree (Cozystack's charts/cozy-lib ->
// ../../../library/cozy-lib): each link is resolved into a real folder
// holding the library's files, as a packer that follows links stores it. A
// link is a symbolic link, or a regular file holding only the link's target
// (what a copy that does not keep links leaves of one).
func ReadChartTree(dir, prefix string) (map[string][]byte, error) {
	return readTree(dir, prefix, true)
}

func readTree(dir, prefix string, chartLinks bool) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := path.Join(prefix, filepath.ToSlash(rel))
		if target, ok := chartLink(p, rel); chartLinks && ok {
			sub, err := ReadTree(target, name)
			if err != nil {
				return fmt.Errorf("failed to resolve the link %s: %w", p, err)
			}
			maps.Copy(files, sub)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[name] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to read %s: %w", dir, err)
	}
	return files, nil
}

// chartLink reports the folder a subchart link at p (rel to the chart)
// points to.
func chartLink(p, rel string) (string, bool) {
	if filepath.Dir(rel) != "charts" {
		return "", false
	}
	var target string
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err = os.Readlink(p); err != nil {
			return "", false
		}
	} else if data, err := os.ReadFile(p); err == nil && len(data) < 256 && !bytes.ContainsAny(data, "\n:") {
		target = string(data)
	} else {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(p), target)
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		return "", false
	}
	return target, true
}
