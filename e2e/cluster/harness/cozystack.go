package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// Cozystack's own components, run against the suite's management API
// server: flux-shard-operator (a controller and a mutating webhook) and
// cozystack-api (an aggregated API server). Both are served on 127.0.0.1 and
// reached by the API server through Services of type ExternalName, which
// the API server resolves to the name itself and the port the caller names
// (an APIService's or a webhook's service port).

// The namespaces and identities Cozystack runs them with.
const (
	CozyFluxNamespace   = "cozy-fluxcd"
	CozySystemNamespace = "cozy-system"
	ShardOperatorName   = "flux-shard-operator"
	CozystackAPIName    = "cozystack-api"
	// ShardOperatorWebhookPort is fixed: controller-runtime's default,
	// which the operator does not let a flag change.
	ShardOperatorWebhookPort = 9443
)

// ShardOperatorIdentity and CozystackAPIIdentity are their service accounts'
// user names.
var (
	ShardOperatorIdentity = ServiceAccount(CozyFluxNamespace, ShardOperatorName)
	CozystackAPIIdentity  = ServiceAccount(CozySystemNamespace, CozystackAPIName)
)

// ServingCert is a CA and a serving certificate it signed for a Service's
// DNS names and 127.0.0.1: the API server verifies a webhook or an
// aggregated API server by <service>.<namespace>.svc whatever address it
// dials.
type ServingCert struct {
	CertFile, KeyFile string
	CAData            []byte
}

// NewServingCert writes cert.pem and key.pem (or tls.crt and tls.key, as
// controller-runtime's webhook server wants them, when tlsNames) into dir.
func NewServingCert(dir string, tlsNames bool, dnsNames ...string) (*ServingCert, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", dir, err)
	}
	caTmpl := certificateTemplate(1, "e2e-serving-ca", x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature)
	caTmpl.BasicConstraintsValid, caTmpl.IsCA = true, true
	caKey, caDER, err := issue(caTmpl, nil, nil, "serving CA")
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	tmpl := certificateTemplate(2, dnsNames[0], x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.DNSNames = append([]string{"localhost"}, dnsNames...)
	tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	key, der, err := issue(tmpl, ca, caKey, "serving")
	if err != nil {
		return nil, err
	}
	return writeKeyPair(dir, tlsNames, key, der, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
}

// FrontProxy is what lets the API server proxy to aggregated API servers
// and vouch for its users there: a client CA, the client certificate it
// presents, and the flags that name them.
type FrontProxy struct {
	Args []string
}

// NewFrontProxy writes the front proxy's CA and client certificate into dir.
func NewFrontProxy(dir string) (*FrontProxy, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("failed to create %s: %w", dir, err)
	}
	caTmpl := certificateTemplate(1, "e2e-front-proxy-ca", x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature)
	caTmpl.BasicConstraintsValid, caTmpl.IsCA = true, true
	caKey, caDER, err := issue(caTmpl, nil, nil, "front-proxy CA")
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	tmpl := certificateTemplate(2, "front-proxy-client", x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	key, der, err := issue(tmpl, ca, caKey, "front-proxy client")
	if err != nil {
		return nil, err
	}
	caFile := filepath.Join(dir, "front-proxy-ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o600); err != nil {
		return nil, fmt.Errorf("failed to write %s: %w", caFile, err)
	}
	sc, err := writeKeyPair(dir, false, key, der, nil)
	if err != nil {
		return nil, err
	}
	return &FrontProxy{Args: []string{
		"--requestheader-client-ca-file=" + caFile,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + sc.CertFile,
		"--proxy-client-key-file=" + sc.KeyFile,
	}}, nil
}

func writeKeyPair(dir string, tlsNames bool, key any, der, caData []byte) (*ServingCert, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("failed to encode a key: %w", err)
	}
	certName, keyName := "cert.pem", "key.pem"
	if tlsNames {
		certName, keyName = "tls.crt", "tls.key"
	}
	sc := &ServingCert{CertFile: filepath.Join(dir, certName), KeyFile: filepath.Join(dir, keyName), CAData: caData}
	for name, data := range map[string][]byte{
		sc.CertFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		sc.KeyFile:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	} {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", name, err)
		}
	}
	return sc, nil
}

// ExternalNameService is a Service that sends its callers to 127.0.0.1.
func ExternalNameService(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"type": "ExternalName", "externalName": "127.0.0.1"},
	}}
}

// ChartObjects reads templates of a Cozystack chart whose only templating
// is {{ .Release.Namespace }} (and cert-manager's CA-injection annotation,
// dropped: the suite sets the CA bundle itself).
func ChartObjects(namespace string, paths ...string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", p, err)
		}
		text := strings.ReplaceAll(string(data), "{{ .Release.Namespace }}", namespace)
		if strings.Contains(text, "{{") {
			return nil, fmt.Errorf("%s has templating beyond .Release.Namespace", p)
		}
		objs, err := Decode([]byte(text))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		for _, o := range objs {
			ann := o.GetAnnotations()
			delete(ann, "cert-manager.io/inject-ca-from")
			if len(ann) == 0 {
				unstructured.RemoveNestedField(o.Object, "metadata", "annotations")
			} else {
				o.SetAnnotations(ann)
			}
		}
		out = append(out, objs...)
	}
	return out, nil
}

// StartShardOperator runs flux-shard-operator as its service account with
// Cozystack's flags (--flux-namespace=cozy-fluxcd) and args, its webhook
// serving certificate where controller-runtime looks for it
// ($TMPDIR/k8s-webhook-server/serving-certs), and waits until the webhook
// serves TLS. It returns the CA that signed the webhook's certificate.
func StartShardOperator(t testing.TB, s *APIServer, dir, bin string, args ...string) (*Process, []byte) {
	t.Helper()
	tmp := filepath.Join(dir, "tmp-"+ShardOperatorName)
	cert, err := NewServingCert(filepath.Join(tmp, "k8s-webhook-server", "serving-certs"), true,
		ShardOperatorName+"."+CozyFluxNamespace+".svc")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := s.KubeconfigFile(t, ShardOperatorIdentity)
	args = append([]string{
		"--flux-namespace=" + CozyFluxNamespace,
		"--health-probe-bind-address=" + LoopbackAddr(t),
		"--metrics-bind-address=0",
		"--zap-log-level=debug",
	}, args...)
	p := Start(t, dir, ShardOperatorName, bin, args, "KUBECONFIG="+kubeconfig, "TMPDIR="+tmp)
	waitTLS(t, p, "127.0.0.1:"+strconv.Itoa(ShardOperatorWebhookPort), cert.CAData)
	return p, cert.CAData
}

// StartCozystackAPI runs cozystack-api as its service account on a
// loopback port, delegating authentication and authorization to s (which
// must run with a FrontProxy), and waits until it serves TLS. It reads the
// ApplicationDefinitions once, when it starts. It returns the CA that
// signed its serving certificate.
func StartCozystackAPI(t testing.TB, s *APIServer, dir, bin string, port int) (*Process, []byte) {
	t.Helper()
	tmp := filepath.Join(dir, "tmp-"+CozystackAPIName)
	cert, err := NewServingCert(tmp, false, CozystackAPIName+"."+CozySystemNamespace+".svc")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := s.KubeconfigFile(t, CozystackAPIIdentity)
	args := []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + cert.CertFile,
		"--tls-private-key-file=" + cert.KeyFile,
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--cert-dir=" + tmp,
		"-v=2",
	}
	p := Start(t, dir, CozystackAPIName, bin, args, "TMPDIR="+tmp, "KUBECONFIG="+kubeconfig)
	waitTLS(t, p, "127.0.0.1:"+strconv.Itoa(port), cert.CAData)
	return p, cert.CAData
}

// waitTLS waits until addr completes a TLS handshake with a certificate
// that ca signed, or the process exits.
func waitTLS(t testing.TB, p *Process, addr string, ca []byte) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	err := Poll(context.Background(), 90*time.Second, 250*time.Millisecond, func() (bool, string) {
		if exited, err := p.Exited(); exited {
			return false, fmt.Sprintf("%s exited: %v", p.Name, err)
		}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		return true, ""
	})
	if err != nil {
		t.Fatalf("%s does not serve on %s: %v\n%s", p.Name, addr, err, p.Tail(30))
	}
}

// CABundle is ca as a webhook's or APIService's caBundle field.
func CABundle(ca []byte) string { return base64.StdEncoding.EncodeToString(ca) }

// Event is one change of an object seen by Watch.
type Event struct {
	Type   watch.EventType
	Object *unstructured.Unstructured
	At     time.Time
}

// Watch streams the changes of a kind in a namespace ("" for all) from the
// server's current state on, until ctx ends.
func (c *Client) Watch(ctx context.Context, apiVersion, kind, namespace string) (<-chan Event, error) {
	ri, err := c.resourceFor(apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	w, err := ri.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to watch %s in %q: %w", kind, namespace, err)
	}
	out := make(chan Event, 1024)
	go func() {
		defer close(out)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				u, ok := ev.Object.(*unstructured.Unstructured)
				if !ok {
					continue
				}
				select {
				case out <- Event{Type: ev.Type, Object: u, At: time.Now()}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// MergePatch sends a JSON merge patch to an object.
func (c *Client) MergePatch(ctx context.Context, apiVersion, kind, namespace, name string, patch []byte) (*unstructured.Unstructured, error) {
	ri, err := c.resourceFor(apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	got, err := ri.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, fmt.Errorf("failed to patch %s %s/%s as %s: %w", kind, namespace, name, c.Identity, err)
	}
	return got, nil
}

// ResetDiscovery forgets the resources discovered so far: an aggregated
// API server restarted with other kinds may serve another plural for a
// kind.
func (c *Client) ResetDiscovery() { c.mapper.Reset() }
