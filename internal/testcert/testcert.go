// Package testcert makes self-signed certificates for the tests of HTTPS:
// each is for 127.0.0.1, ::1 and localhost, with the serial number asked
// for, so that a test can tell which one a server presented.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"time"
)

// Pair is a self-signed certificate and its private key.
type Pair struct {
	// CertPEM and KeyPEM are the certificate and its PKCS #8 key, as the
	// files a server is given hold them.
	CertPEM, KeyPEM []byte
	// Leaf is the certificate, parsed.
	Leaf *x509.Certificate
}

// New returns a new pair whose certificate has the given serial number.
func New(serial int64) (*Pair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: "decoy test"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Pair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Leaf:    leaf,
	}, nil
}

// Write writes the certificate to certFile and the key to keyFile.
func (p *Pair) Write(certFile, keyFile string) error {
	if err := os.WriteFile(certFile, p.CertPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(keyFile, p.KeyPEM, 0o600)
}

// ClientConfig returns TLS settings for a client that trusts this
// certificate only.
func (p *Pair) ClientConfig() *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(p.Leaf)
	return &tls.Config{RootCAs: roots}
}

// Client returns an HTTP client that trusts this certificate and speaks
// HTTP/2 when the server offers it.
func (p *Pair) Client() *http.Client {
	return &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: p.ClientConfig(), ForceAttemptHTTP2: true},
	}
}
