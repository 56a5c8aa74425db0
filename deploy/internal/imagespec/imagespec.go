// Package imagespec is what the thalweg image promises, in one place: the
// image builder (mkimage) writes it into the image, and the tests hold the
// image and the Kubernetes manifests to it.
package imagespec

const (
	// BinaryPath is the entrypoint.
	BinaryPath = "/usr/local/bin/thalweg"
	// ConfigPath is the default --config of the image's Cmd; the manifests
	// mount their ConfigMap there.
	ConfigPath = "/etc/thalweg/pipeline.yaml"
	// DataDir holds the offset store (worker) or the datasets (receiver):
	// a volume, writable by UID.
	DataDir = "/var/lib/thalweg"
	// UID and GID of the image's user: the conventional "nonroot" id of
	// distroless images, numeric so that runAsNonRoot can verify it.
	UID = 65532
	GID = 65532
	// MetricsPort serves /metrics, /healthz and /readyz (metrics.listen).
	MetricsPort = 9464
	// FlightPort is thalweg receive's conventional --listen port.
	FlightPort = 8815
)
