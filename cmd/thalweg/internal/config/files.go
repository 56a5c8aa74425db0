package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// ErrFile matches every problem CheckFiles reports: a file the config
// names is missing, unreadable, or does not hold what its field needs.
var ErrFile = errors.New("file unusable")

// maxPEMFile bounds the reads of certificate and key files: a PEM bundle
// is small, and a wrong path must not read a disk image into memory.
const maxPEMFile = 4 << 20

// CheckFiles reads every file the config names — source.auth.token_file
// and tls_ca_file, and every destination's tls.ca_file, cert_file and
// key_file — and reports each one that is missing, unreadable or does not
// hold what its field needs (a token; PEM certificates; a certificate and
// the private key that matches it), all of them in one *Error with field
// paths and lines. Problems wrap ErrFile (a token file's also ErrSecret).
//
// A file that is missing now is an error, not something to wait for: a
// worker started before its secret volume holds the file exits (code 2)
// and its supervisor's restart finds it, the way a bad config is handled;
// nothing is read from the source before every file is usable.
func (c *Config) CheckFiles() error {
	ck := checker{lines: c.lines}
	c.checkFiles(&ck)
	return c.fileErr(ck.err())
}

// fileErr names the config file in err's problems, as Load's do.
func (c *Config) fileErr(err error) error {
	var e *Error
	if errors.As(err, &e) {
		e.File = c.file // "pipeline.yaml:7: source.auth.token_file: ..."
	}
	return err
}

func (c *Config) checkFiles(ck *checker) {
	if c.Source.Kind == SourcePulsar {
		a := c.Source.Auth
		if a.TokenFile != "" {
			if _, err := tokenFromFile(a.TokenFile); err != nil {
				ck.addErr("source.auth.token_file", fileError{err})
			}
		}
		if a.TLSCAFile != "" {
			checkCAFile(ck, "source.auth.tls_ca_file", a.TLSCAFile)
		}
	}
	for i := range c.Destinations {
		t := c.Destinations[i].TLS
		if !t.Enabled {
			continue
		}
		path := indexPath("destinations", i) + ".tls"
		if t.CAFile != "" {
			checkCAFile(ck, path+".ca_file", t.CAFile)
		}
		var cert, key []byte
		if t.CertFile != "" {
			cert = readFile(ck, path+".cert_file", t.CertFile)
		}
		if t.KeyFile != "" {
			key = readFile(ck, path+".key_file", t.KeyFile)
		}
		if cert != nil && key != nil {
			checkKeyPair(ck, path, t.CertFile, cert, key)
		}
	}
}

// fileError makes a token file's problem match ErrFile too.
type fileError struct{ err error }

func (e fileError) Error() string   { return e.err.Error() }
func (e fileError) Unwrap() []error { return []error{ErrFile, e.err} }

// readFile returns the contents of name, or records why it cannot be read
// under path and returns nil.
func readFile(ck *checker, path, name string) []byte {
	f, err := os.Open(name)
	if err != nil {
		ck.addErr(path, fileProblem(name, err))
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		ck.addErr(path, fmt.Errorf("%w: %s is a directory", ErrFile, name))
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPEMFile+1))
	switch {
	case err != nil:
		ck.addErr(path, fileProblem(name, err))
		return nil
	case len(b) > maxPEMFile:
		ck.addErr(path, fmt.Errorf("%w: %s is larger than %d bytes", ErrFile, name, maxPEMFile))
		return nil
	}
	return b
}

// fileProblem names the file and the reason once ("/etc/tls/ca.pem: no
// such file or directory"); errors.Is(err, fs.ErrNotExist) and the like
// still hold.
func fileProblem(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%w: %s: %w", ErrFile, name, err)
}

func checkCAFile(ck *checker, path, name string) {
	b := readFile(ck, path, name)
	if b != nil && !x509.NewCertPool().AppendCertsFromPEM(b) {
		ck.addErr(path, fmt.Errorf("%w: %s holds no PEM certificate", ErrFile, name))
	}
}

// checkKeyPair checks that cert and key parse and belong together, and
// records the problem under the field it lies in (path is the tls block).
func checkKeyPair(ck *checker, path, certName string, cert, key []byte) {
	_, err := tls.X509KeyPair(cert, key)
	if err == nil {
		return
	}
	msg := strings.TrimPrefix(err.Error(), "tls: ")
	switch {
	case strings.Contains(msg, "certificate input"), strings.Contains(msg, "failed to parse certificate"):
		ck.addErr(path+".cert_file", fmt.Errorf("%w: %s: %s", ErrFile, certName, msg))
	case strings.Contains(msg, "does not match"):
		ck.addErr(path+".key_file", fmt.Errorf("%w: the private key does not match the certificate of cert_file %s", ErrFile, certName))
	default:
		ck.addErr(path+".key_file", fmt.Errorf("%w: %s", ErrFile, msg))
	}
}
