package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Admin is the user name of the suite's own client, in system:masters.
const Admin = "e2e-admin"

// User is an identity the API server authenticates by a static token.
// Flux's controllers run as users named like their service accounts
// (system:serviceaccount:flux-system:<controller>), which is the name an
// admission policy sees; RBAC grants them what Flux's install grants.
type User struct {
	Name   string
	Groups []string
}

// APIServerOptions says how to start one kube-apiserver.
type APIServerOptions struct {
	Name string // also its etcd prefix and folder
	Bin  string
	Etcd *Etcd
	Dir  string
	// AdmissionConfigFile is passed as --admission-control-config-file.
	AdmissionConfigFile string
	Users               []User
	// ExtraArgs are more flags (an audit log, a FrontProxy's for aggregated
	// API servers).
	ExtraArgs []string
}

// APIServer is a running kube-apiserver on 127.0.0.1.
type APIServer struct {
	Name   string
	URL    string
	PKI    *PKI
	Proc   *Process
	tokens map[string]string
	dir    string
}

// StartAPIServer starts a kube-apiserver and waits until /readyz says ok.
// The `kubernetes` Service's endpoints cannot be 127.0.0.1 (the API refuses
// loopback endpoints), so the endpoint reconciler is off.
func StartAPIServer(t testing.TB, o APIServerOptions) *APIServer {
	t.Helper()
	dir := filepath.Join(o.Dir, o.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("failed to create %s: %v", dir, err)
	}
	pki, err := NewPKI(dir)
	if err != nil {
		t.Fatalf("API server %s: %v", o.Name, err)
	}
	s := &APIServer{Name: o.Name, PKI: pki, tokens: map[string]string{}, dir: dir}
	users := append([]User{{Name: Admin, Groups: []string{"system:masters"}}}, o.Users...)
	var lines []string
	for i, u := range users {
		tok := randomToken()
		s.tokens[u.Name] = tok
		lines = append(lines, fmt.Sprintf("%s,%s,uid-%d,%q", tok, u.Name, i, strings.Join(u.Groups, ",")))
	}
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatalf("failed to write %s: %v", tokenFile, err)
	}
	port := FreePort(t)
	s.URL = "https://127.0.0.1:" + strconv.Itoa(port)
	args := []string{
		"--etcd-servers=" + o.Etcd.URL,
		"--etcd-prefix=/" + o.Name,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + dir,
		"--tls-cert-file=" + pki.CertFile,
		"--tls-private-key-file=" + pki.KeyFile,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + pki.SAPubFile,
		"--service-account-signing-key-file=" + pki.SAKeyFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
	}
	if o.AdmissionConfigFile != "" {
		args = append(args, "--admission-control-config-file="+o.AdmissionConfigFile)
	}
	args = append(args, o.ExtraArgs...)
	s.Proc = Start(t, o.Dir, "kube-apiserver-"+o.Name, o.Bin, args)
	cfg := s.Config(Admin)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("failed to build a client for %s: %v", o.Name, err)
	}
	err = Poll(context.Background(), 120*time.Second, 250*time.Millisecond, func() (bool, string) {
		if exited, err := s.Proc.Exited(); exited {
			return false, fmt.Sprintf("kube-apiserver exited: %v", err)
		}
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background())
		if err != nil {
			return false, fmt.Sprintf("%v: %s", err, body)
		}
		return true, ""
	})
	if err != nil {
		t.Fatalf("kube-apiserver %s did not become ready: %v\n%s", o.Name, err, s.Proc.Tail(30))
	}
	return s
}

// Config is a client configuration for one of the server's users.
func (s *APIServer) Config(user string) *rest.Config {
	tok, ok := s.tokens[user]
	if !ok {
		panic(fmt.Sprintf("API server %s has no user %q", s.Name, user))
	}
	return &rest.Config{
		Host:            s.URL,
		BearerToken:     tok,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.PKI.CAData},
		QPS:             200,
		Burst:           400,
	}
}

// Impersonating is the admin's configuration acting as another identity,
// the way `kubectl --as --as-group` does: the request reaches admission with
// that user's name and groups.
func (s *APIServer) Impersonating(user string, groups ...string) *rest.Config {
	cfg := s.Config(Admin)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	return cfg
}

// Kubeconfig returns a kubeconfig file's bytes for one of the server's users.
func (s *APIServer) Kubeconfig(user string) []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[s.Name] = &clientcmdapi.Cluster{Server: s.URL, CertificateAuthorityData: s.PKI.CAData}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: s.tokens[user]}
	cfg.Contexts[s.Name] = &clientcmdapi.Context{Cluster: s.Name, AuthInfo: user}
	cfg.CurrentContext = s.Name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		panic(fmt.Sprintf("failed to write a kubeconfig: %v", err))
	}
	return data
}

// KubeconfigAt is Kubeconfig(user) reaching the server at another address
// (a forwarder of its port, server https://host:port) and checking its
// certificate for tlsServerName, which the certificate names (localhost):
// a client then keeps a connection of its own to that address, as it would
// to a cluster of its own.
func (s *APIServer) KubeconfigAt(user, server, tlsServerName string) []byte {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[s.Name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: s.PKI.CAData, TLSServerName: tlsServerName}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: s.tokens[user]}
	cfg.Contexts[s.Name] = &clientcmdapi.Context{Cluster: s.Name, AuthInfo: user}
	cfg.CurrentContext = s.Name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		panic(fmt.Sprintf("failed to write a kubeconfig: %v", err))
	}
	return data
}

// KubeconfigFile writes Kubeconfig(user) into the server's folder.
func (s *APIServer) KubeconfigFile(t testing.TB, user string) string {
	t.Helper()
	name := strings.NewReplacer(":", "-", "/", "-").Replace(user)
	path := filepath.Join(s.dir, "kubeconfig-"+name)
	if err := os.WriteFile(path, s.Kubeconfig(user), 0o600); err != nil {
		t.Fatalf("failed to write %s: %v", path, err)
	}
	return path
}

// Users lists the names the server authenticates.
func (s *APIServer) Users() []string {
	var out []string
	for u := range s.tokens {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

func randomToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
