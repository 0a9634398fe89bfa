package harness

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"
)

// Etcd is an etcd member on 127.0.0.1 that the API servers of the suite
// share, each under its own key prefix.
type Etcd struct {
	URL  string
	Proc *Process
}

// StartEtcd starts etcd with its data in dir and waits until it is healthy.
func StartEtcd(t testing.TB, bin, dir string) *Etcd {
	t.Helper()
	client := "http://" + LoopbackAddr(t)
	peer := "http://" + LoopbackAddr(t)
	p := Start(t, dir, "etcd", bin, []string{
		"--name=e2e",
		"--data-dir=" + filepath.Join(dir, "etcd-data"),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=e2e=" + peer,
		"--unsafe-no-fsync",
		"--log-level=warn",
	})
	e := &Etcd{URL: client, Proc: p}
	err := Poll(context.Background(), 60*time.Second, 200*time.Millisecond, func() (bool, string) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Sprintf("etcd exited: %v", err)
		}
		resp, err := http.Get(client + "/health")
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	if err != nil {
		t.Fatalf("etcd did not become healthy: %v\n%s", err, p.Tail(20))
	}
	return e
}
