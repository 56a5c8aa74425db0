package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/internal/config"
	"github.com/thalweg/thalweg/internal/pulsarschema"
)

// registrySchemas builds schema.mode pulsar's resolver: the topic's schema
// versions from the registry at schema.registry_url (default
// source.admin_url), with source.auth's
// token (a token_file is read here, once) and CA.
func registrySchemas(cfg *config.Config, token string) (func(context.Context, string, []byte) (batch.RowSchema, error), error) {
	a := cfg.Source.Auth
	if a.TokenFile != "" {
		b, err := os.ReadFile(a.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("source.auth.token_file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	tr := &http.Transport{DisableKeepAlives: true}
	if a.TLSCAFile != "" {
		pem, err := os.ReadFile(a.TLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("source.auth.tls_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("source.auth.tls_ca_file %s: no PEM certificate", a.TLSCAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	admin := cfg.Schema.RegistryURL
	if admin == "" {
		admin = cfg.Source.AdminURL
	}
	reg, err := pulsarschema.NewRegistry(pulsarschema.RegistryOptions{AdminURL: admin, Token: token,
		Client: &http.Client{Timeout: pulsarschema.DefaultRegistryTimeout, Transport: tr}})
	if err != nil {
		return nil, fmt.Errorf("schema.registry_url: %w", err)
	}
	return pulsarschema.NewResolver(reg).Resolve, nil
}
