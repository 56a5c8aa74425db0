package main

import (
	"context"
	"fmt"

	"github.com/thalweg/thalweg/batch"
	"github.com/thalweg/thalweg/cmd/thalweg/internal/config"
	"github.com/thalweg/thalweg/internal/pulsaradmin"
	"github.com/thalweg/thalweg/internal/pulsarschema"
)

// registrySchemas builds schema.mode pulsar's resolver: the topic's schema
// versions from the registry at schema.registry_url (default
// source.admin_url), through the admin client `thalweg offsets reset` uses,
// with the same source.auth token (a token_file is reread on every request)
// and CA (adminClientOptions).
func registrySchemas(cfg *config.Config, token string) (func(context.Context, string, []byte) (batch.RowSchema, error), error) {
	url := cfg.Schema.RegistryURL
	if url == "" {
		url = cfg.Source.AdminURL
	}
	o := adminClientOptions(cfg.Source, url, token)
	o.Timeout = pulsarschema.DefaultRegistryTimeout
	// The worker never closes the registry: hold no idle connection.
	o.DisableKeepAlives = true
	admin, err := pulsaradmin.New(o)
	if err != nil {
		return nil, fmt.Errorf("schema.registry_url: %w", err)
	}
	reg, err := pulsarschema.NewRegistry(pulsarschema.RegistryOptions{Admin: admin, JSONBytes: jsonBytes(cfg.Schema.JSONBytes)})
	if err != nil {
		return nil, fmt.Errorf("schema.registry_url: %w", err)
	}
	return pulsarschema.NewResolver(reg).Resolve, nil
}

// jsonBytes maps schema.json_bytes (validated) to the registry's option.
func jsonBytes(m config.JSONBytesMode) pulsarschema.JSONBytes {
	switch m {
	case config.JSONBytesBase64:
		return pulsarschema.JSONBytesBase64
	case config.JSONBytesText:
		return pulsarschema.JSONBytesText
	}
	return pulsarschema.JSONBytesAuto
}
