package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is what one API server needs: a CA, a serving certificate for
// 127.0.0.1 and localhost signed by it, and a service-account signing key.
type PKI struct {
	CAFile, CertFile, KeyFile, SAKeyFile, SAPubFile string
	CAData                                          []byte
}

// NewPKI writes a fresh PKI into dir.
func NewPKI(dir string) (*PKI, error) {
	caTmpl := certificateTemplate(1, "e2e-ca", x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature)
	caTmpl.BasicConstraintsValid, caTmpl.IsCA = true, true
	caKey, caDER, err := issue(caTmpl, nil, nil, "CA")
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	tmpl := certificateTemplate(2, "kube-apiserver", x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.DNSNames = []string{"localhost"}
	tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	key, der, err := issue(tmpl, ca, caKey, "serving")
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the serving key: %w", err)
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("failed to generate the service-account key: %w", err)
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("failed to encode the service-account key: %w", err)
	}
	p := &PKI{
		CAFile:    filepath.Join(dir, "ca.crt"),
		CertFile:  filepath.Join(dir, "apiserver.crt"),
		KeyFile:   filepath.Join(dir, "apiserver.key"),
		SAKeyFile: filepath.Join(dir, "sa.key"),
		SAPubFile: filepath.Join(dir, "sa.pub"),
		CAData:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
	}
	files := map[string][]byte{
		p.CAFile:    p.CAData,
		p.CertFile:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		p.KeyFile:   pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		p.SAKeyFile: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),
		p.SAPubFile: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
	}
	for name, data := range files {
		if err := os.WriteFile(name, data, 0o600); err != nil {
			return nil, fmt.Errorf("failed to write %s: %w", name, err)
		}
	}
	return p, nil
}

// certificateTemplate is a certificate valid from an hour ago for a day:
// long enough for a run, and already valid on a clock a little behind.
func certificateTemplate(serial int64, commonName string, usage x509.KeyUsage) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     usage,
	}
}

// issue generates a P-256 key and the certificate of tmpl for it, signed by
// parent's key, or by its own when parent is nil (a CA). what names the
// certificate in errors.
func issue(tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, what string) (*ecdsa.PrivateKey, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to generate the %s key: %w", what, err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create the %s certificate: %w", what, err)
	}
	return key, der, nil
}
