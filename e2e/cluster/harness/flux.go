package harness

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FluxNamespace is flux bootstrap's namespace: the default wiring
// namespace, where the fleet's account lives by default.
const FluxNamespace = "flux-system"

// ServiceAccount is the user name of a service account.
func ServiceAccount(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// ServiceAccountUsers are users named like service accounts, in the groups
// the API server gives service accounts, for APIServerOptions.
func ServiceAccountUsers(names ...string) []User {
	var out []User
	for _, n := range names {
		ns := strings.Split(n, ":")[2]
		out = append(out, User{Name: n, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}})
	}
	return out
}

// GrantClusterAdmin binds cluster-admin to users, as Flux's install binds it
// to its controllers (and Cozystack's to cozy-fluxcd/flux).
func GrantClusterAdmin(ctx context.Context, c *Client, users ...string) error {
	for _, u := range users {
		crb := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1",
			"kind":       "ClusterRoleBinding",
			"metadata":   map[string]any{"name": "e2e-cluster-admin-" + sanitize(u)},
			"roleRef":    map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
			"subjects":   []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u}},
		}}
		if _, _, err := c.Apply(ctx, crb, ApplyOptions{}); err != nil {
			return err
		}
	}
	return nil
}

func sanitize(s string) string {
	out := []byte(s)
	for i, b := range out {
		if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '.') {
			out[i] = '-'
		}
	}
	return string(out)
}

// ControllerOptions start one Flux controller against the management server.
type ControllerOptions struct {
	Name string // process name, e.g. kustomize-controller-shard1
	Bin  string
	// Identity is the user name it runs as (a service account's).
	Identity string
	// Namespace is the controller's own (RUNTIME_NAMESPACE).
	Namespace string
	Args      []string
	// TempDir is its TMPDIR, where kustomize-controller extracts the
	// source's artifact for every reconcile; "" gives it a folder of its
	// own in dir.
	TempDir string
}

// StartController runs a Flux controller as its service account, with its
// probes on free loopback ports and no leader election, and waits until its
// health probe answers. A port found free can be taken by another process
// before the controller binds it (other suites share the machine): a
// controller that exits with "address already in use" is started again on
// other ports.
func StartController(t testing.TB, s *APIServer, dir string, o ControllerOptions) *Process {
	t.Helper()
	return startRetrying(t, o.Name, func() (*Process, string) {
		health := LoopbackAddr(t)
		return startController(t, s, dir, o, health), health
	})
}

func startController(t testing.TB, s *APIServer, dir string, o ControllerOptions, health string) *Process {
	t.Helper()
	kubeconfig := s.KubeconfigFile(t, o.Identity)
	metrics := LoopbackAddr(t)
	args := append([]string{
		"--metrics-addr=" + metrics,
		"--health-addr=" + health,
		"--enable-leader-election=false",
		"--log-level=debug",
	}, o.Args...)
	// A temporary folder of its own: nothing outside the suite cleans it
	// while the controller builds in it.
	tmp := o.TempDir
	if tmp == "" {
		tmp = filepath.Join(dir, "tmp-"+o.Name)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatalf("failed to create %s: %v", tmp, err)
	}
	p := Start(t, dir, o.Name, o.Bin, args, "KUBECONFIG="+kubeconfig, "RUNTIME_NAMESPACE="+o.Namespace, "TMPDIR="+tmp)
	p.MetricsAddr = metrics
	return p
}

// startRetrying starts a controller (start returns it and its health
// address) until its health probe answers, again when it lost a port race,
// at most three times.
func startRetrying(t testing.TB, name string, start func() (*Process, string)) *Process {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p, health := start()
		err := Poll(context.Background(), 60*time.Second, 200*time.Millisecond, func() (bool, string) {
			if exited, err := p.Exited(); exited {
				return false, fmt.Sprintf("exited: %v", err)
			}
			resp, err := http.Get("http://" + health + "/healthz")
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, resp.Status
		})
		if err == nil {
			return p
		}
		if exited, _ := p.Exited(); exited && attempt < 3 && strings.Contains(p.Tail(5), "address already in use") {
			t.Logf("%s lost a port to another process; starting it again", name)
			continue
		}
		t.Fatalf("%s did not become healthy: %v\n%s", name, err, p.Tail(20))
	}
}

// StartSourceWatcher runs source-watcher with its artifact storage in dir
// and served on 127.0.0.1, advertised there so that helm-controller fetches
// from it directly.
func StartSourceWatcher(t testing.TB, s *APIServer, dir, bin, identity, namespace string) *Process {
	t.Helper()
	storage := filepath.Join(dir, "source-watcher-storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		t.Fatalf("failed to create %s: %v", storage, err)
	}
	return startRetrying(t, "source-watcher", func() (*Process, string) {
		addr, health := LoopbackAddr(t), LoopbackAddr(t)
		return startController(t, s, dir, ControllerOptions{
			Name: "source-watcher", Bin: bin, Identity: identity, Namespace: namespace,
			Args: []string{"--storage-path=" + storage, "--storage-addr=" + addr, "--storage-adv-addr=" + addr},
		}, health), health
	})
}

// ControllerLogs formats the lines of the controllers' logs that mention
// all words, for a failure message.
func ControllerLogs(words []string, procs ...*Process) string {
	out := ""
	for _, p := range procs {
		if p == nil {
			continue
		}
		lines := p.Grep(words...)
		if len(lines) > 4 {
			lines = lines[len(lines)-4:]
		}
		for _, l := range lines {
			if len(l) > 400 {
				l = l[:400] + "..."
			}
			out += fmt.Sprintf("\n  %s: %s", p.Name, l)
		}
	}
	return out
}
