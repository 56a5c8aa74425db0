// Package config loads, checks and documents the YAML pipeline configuration
// of `thalweg run --config pipeline.yaml` and `thalweg validate`.
//
// # Loading
//
// Parse turns the bytes of one YAML document into a validated *Config in
// four steps. Interpolation problems are reported together with those of
// the later steps (a failed reference is left out of the text, and problems
// on its line are not reported twice); each later step must succeed before
// the next runs:
//
//  1. Interpolation on the raw text: ${VAR} is replaced by the value of the
//     environment variable VAR and ${VAR:-default} by default when VAR is
//     unset or empty (shell semantics). $$ is a literal $. A $ followed by
//     anything else is kept as is. Whole-line comments (first non-blank
//     character #) are left untouched so that comments may mention ${VAR}.
//     An unset variable without a default, an unterminated ${, an invalid
//     name or a value containing a newline is an error naming the variable
//     and its line; the value itself is never echoed. Values are inserted
//     verbatim, so quote the placeholder ("${VAR}") when a value may contain
//     characters YAML treats specially.
//  2. A strict schema walk over the yaml.v3 node tree: unknown keys,
//     duplicate keys, and values of the wrong shape (a list where a mapping
//     belongs, "8MB!" for a size, 100 for a duration, 1.5 for an integer) are
//     reported with their field path and line, all at once.
//  3. Decoding with a yaml.v3 Decoder in KnownFields(true) mode on top of
//     Default(), so absent keys keep their defaults. An explicit null
//     (`key:` with no value) counts as absent.
//  4. Validate: ranges, enums, cross-field rules (exactly one raw_anchor
//     destination, unique names, kind-specific fields: a key the selected
//     source kind, destination kind or zerobus mode does not use is an
//     error), again all at once.
//
// A YAML syntax error is reported at the line it is on (yaml.v3 reports the
// line where the enclosing block starts; Parse finds the real one). The
// keys' defaults and the options they set are listed in
// docs/configuration.md.
//
// A step reports at most 100 problems, then says how many it left out; a
// document too deep or, through aliases, too large stops the walk with one
// message instead of costing the machine.
//
// Every problem is a *FieldError carrying the dotted field path
// (destinations[1].lane.capacity) and, when it came from a file, the line.
// The problems of one step are returned together as an *Error, which
// unwraps to all of them (errors.As finds each *FieldError) and matches
// ErrInvalid with errors.Is. Its message puts one problem on each line:
//
//	pipeline.yaml:14: destinations[1].endpoint: required (host:port)
//	pipeline.yaml:20: batching.max_rows: must be > 0, got -3
//
// # Secrets
//
// Tokens are never written in the file: a token is named by the environment
// variable that holds it (token_env) or a file that contains it
// (token_file). A literal `token:` key is rejected with a hint. Token
// resolution happens on demand (DestinationConfig.Token, AuthConfig.Token,
// Config.CheckSecrets) and yields a Secret, whose String, GoString, Format,
// MarshalText and LogValue all redact the value; Reveal is the only way to
// read it. Error messages name the variable or file, never the content.
//
// # Goroutine safety
//
// A *Config is plain data: safe for concurrent reads, and not safe to
// mutate while anything else reads it. Parse and Load keep no references to
// their inputs.
package config
