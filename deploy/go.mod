// Module deploy holds what turns thalweg into cluster artifacts — the image
// builder (mkimage) and the Kubernetes manifests with their tests — in a
// module of its own, so that their dependencies (go-containerregistry,
// k8s.io/api) never reach programs that embed github.com/thalweg/thalweg.
module github.com/thalweg/thalweg/deploy

go 1.26.0

toolchain go1.27.3

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/BurntSushi/toml v1.4.1-0.20240526193622-a339e1f7089c // indirect
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	golang.org/x/exp/typeparams v0.0.0-20231108232855-2478ac86f678 // indirect
	golang.org/x/mod v0.41.0 // indirect
	golang.org/x/sync v0.23.0 // indirect
	golang.org/x/tools v0.51.0 // indirect
	honnef.co/go/tools v0.8.2 // indirect
)

tool honnef.co/go/tools/cmd/staticcheck
