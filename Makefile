# thalweg — build, test, demo, bench, lint, generate.
# Every target works on a fresh machine with Go 1.26+, Python 3.11 and Java 17 + Maven
# (Pulsar is fetched from Maven Central on first use; see README).

# Every target builds and tests with Go 1.27.3: Go 1.26.8 has standard-library
# vulnerabilities (govulncheck, part of `make lint`) fixed only in later releases,
# and 1.27.3 is the one this project's machines may fetch. The go command
# downloads it from the module proxy on first use (~76 MB, once). The module
# itself still requires only go 1.26, for programs that embed it.
export GOTOOLCHAIN ?= go1.27.3

GO        ?= go
PKGS      ?= ./...
BIN       := bin/thalweg
TESTFLAGS ?= -race -count=1 -timeout 20m
BENCHFLAGS ?= -run '^$$' -bench . -benchmem -count 1

.PHONY: vulncheck all build image test chaos test-unit demo demo-pulsar demo-iceberg bench lint generate check-generate pyenv pulsar-start pulsar-stop fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/thalweg

# The worker's OCI image, without a container daemon: deploy/mkimage builds a
# static thalweg (CGO_ENABLED=0) into a FROM-scratch image and writes it as an
# OCI layout tarball (load it with `podman load -i`, `skopeo copy
# oci-archive:...` or `crane push`). deploy/ is a module of its own.
IMAGE ?= bin/thalweg-image.tar
image:
	cd deploy && $(GO) run ./mkimage -repo .. -o $(abspath $(IMAGE))

# The full suite: provisions the Python peers and a Pulsar broker (started here
# when PULSAR_URL is unset, stopped afterwards), then runs every test with the
# race detector. Nothing skips: THALWEG_REQUIRE_PEERS=1 turns a missing peer
# into a failure.
test:
	scripts/test.sh $(TESTFLAGS) $(PKGS)
	cd deploy && $(GO) test $(TESTFLAGS) ./...

# Only the SIGKILL chaos suite (part of `make test` too): real broker, real processes.
chaos:
	scripts/test.sh -race -count=1 -timeout 20m -v ./chaos/

# Unit tests only, no peers (integration tests skip with a message).
test-unit:
	$(GO) test $(TESTFLAGS) $(PKGS)
	cd deploy && $(GO) test $(TESTFLAGS) ./...

demo: build
	$(BIN) demo

demo-pulsar: build
	scripts/demo-pulsar.sh

demo-iceberg: build
	$(BIN) demo --anchor iceberg

bench:
	scripts/test.sh $(BENCHFLAGS) $(PKGS)

fuzz:
	scripts/fuzz.sh $${FUZZTIME:-10s}

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) tool staticcheck $(PKGS)
	cd deploy && $(GO) vet ./... && $(GO) tool staticcheck ./...
	scripts/vulncheck.sh

# govulncheck (also the last step of lint) against a database built offline from
# golang.org/x/vulndb (module proxy).
vulncheck:
	scripts/vulncheck.sh

generate:
	$(GO) generate ./...

# Regenerates the committed code and fails if anything changed.
check-generate: generate
	@git diff --exit-code -- '*.pb.go' || { echo "generated code is stale: run make generate"; exit 1; }

pyenv:
	@scripts/pyenv.sh

pulsar-start:
	scripts/pulsar.sh start

pulsar-stop:
	scripts/pulsar.sh stop

clean:
	rm -rf bin data
