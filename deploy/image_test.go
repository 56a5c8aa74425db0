package deploy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/thalweg/thalweg/deploy/internal/imagespec"
)

// The OCI image-spec structures the test reads, declared here from the
// specification's field names rather than taken from the library that wrote
// the image, so that a mistake of the writer is not mirrored by the reader.
type (
	ociDescriptor struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Size        int64             `json:"size"`
		Annotations map[string]string `json:"annotations"`
	}
	ociIndex struct {
		SchemaVersion int             `json:"schemaVersion"`
		Manifests     []ociDescriptor `json:"manifests"`
	}
	ociManifest struct {
		SchemaVersion int             `json:"schemaVersion"`
		MediaType     string          `json:"mediaType"`
		Config        ociDescriptor   `json:"config"`
		Layers        []ociDescriptor `json:"layers"`
	}
	ociConfig struct {
		Architecture string `json:"architecture"`
		OS           string `json:"os"`
		Config       struct {
			User         string              `json:"User"`
			Entrypoint   []string            `json:"Entrypoint"`
			Cmd          []string            `json:"Cmd"`
			Env          []string            `json:"Env"`
			WorkingDir   string              `json:"WorkingDir"`
			ExposedPorts map[string]struct{} `json:"ExposedPorts"`
			Volumes      map[string]struct{} `json:"Volumes"`
			Labels       map[string]string   `json:"Labels"`
		} `json:"config"`
		RootFS struct {
			Type    string   `json:"type"`
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
)

// buildImage runs mkimage as `make image` does and returns the archive.
// The Go build cache makes every build after the first a matter of seconds.
func buildImage(t *testing.T, version string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "image.tar")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", "./mkimage", "-repo", "..", "-o", out, "-version", version)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("mkimage: %v\n%s", err, stderr.String())
	}
	return out
}

// readArchive returns every regular file of a tar by name.
func readArchive(t *testing.T, r io.Reader) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[path.Clean(h.Name)] = b
		}
	}
}

// blob returns the blob d points at, checking its digest and size.
func blob(t *testing.T, files map[string][]byte, d ociDescriptor) []byte {
	t.Helper()
	hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
	if !ok {
		t.Fatalf("digest %q is not sha256", d.Digest)
	}
	b, ok := files["blobs/sha256/"+hexDigest]
	if !ok {
		t.Fatalf("blob %s (%s) is missing from the layout", d.Digest, d.MediaType)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hexDigest {
		t.Fatalf("blob %s has digest sha256:%x", d.Digest, sum)
	}
	if int64(len(b)) != d.Size {
		t.Fatalf("blob %s is %d bytes, its descriptor says %d", d.Digest, len(b), d.Size)
	}
	return b
}

func decodeJSON(t *testing.T, what string, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// unpack extracts the layer (a gzip tar) into dir and returns the digest of
// the uncompressed tar (the config's diff_id).
func unpack(t *testing.T, layer []byte, dir string) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(layer))
	if err != nil {
		t.Fatalf("layer is not gzip: %v", err)
	}
	h := sha256.New()
	tr := tar.NewReader(io.TeeReader(zr, h))
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		name := path.Clean(hd.Name)
		if name == ".." || strings.HasPrefix(name, "../") || path.IsAbs(name) {
			t.Fatalf("layer entry %q escapes the root", hd.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		switch hd.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dst, os.FileMode(hd.Mode).Perm()|modeBits(hd.Mode)); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, os.FileMode(hd.Mode).Perm()); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("unexpected layer entry %q of type %c", hd.Name, hd.Typeflag)
		}
		if os.Geteuid() == 0 {
			if err := os.Lchown(dst, hd.Uid, hd.Gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("sha256:%x", h.Sum(nil))
}

func modeBits(m int64) os.FileMode {
	if m&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// `make image`'s builder produces a valid OCI layout whose single layer
// holds a static thalweg that runs — as the image's non-root user, inside the
// unpacked root when the test may chroot — and prints the version the image
// is labelled with; the config has the entrypoint, user, ports and volume the
// Kubernetes manifests rely on; and a second build is bit-identical.
func TestImage(t *testing.T) {
	const version = "v0.0.0-imagetest"
	archive := buildImage(t, version)
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	files := readArchive(t, f)
	f.Close()

	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` &&
		!strings.Contains(string(files["oci-layout"]), `"imageLayoutVersion": "1.0.0"`) {
		t.Fatalf("oci-layout is %q", files["oci-layout"])
	}
	var idx ociIndex
	decodeJSON(t, "index.json", files["index.json"], &idx)
	if idx.SchemaVersion != 2 || len(idx.Manifests) != 1 {
		t.Fatalf("index.json: schemaVersion %d, %d manifests; want 2 and one image", idx.SchemaVersion, len(idx.Manifests))
	}
	md := idx.Manifests[0]
	if md.MediaType != "application/vnd.oci.image.manifest.v1+json" {
		t.Fatalf("manifest media type %q", md.MediaType)
	}
	if got := md.Annotations["org.opencontainers.image.ref.name"]; got != version {
		t.Errorf("ref.name annotation %q, want %q", got, version)
	}
	var man ociManifest
	decodeJSON(t, "manifest", blob(t, files, md), &man)
	if man.Config.MediaType != "application/vnd.oci.image.config.v1+json" || len(man.Layers) != 1 ||
		man.Layers[0].MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
		t.Fatalf("manifest: config %q, layers %+v; want an OCI config and one gzip OCI layer", man.Config.MediaType, man.Layers)
	}
	var cfg ociConfig
	decodeJSON(t, "config", blob(t, files, man.Config), &cfg)

	c := cfg.Config
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != imagespec.BinaryPath {
		t.Fatalf("entrypoint %q, want [%s]", c.Entrypoint, imagespec.BinaryPath)
	}
	if len(c.Cmd) != 3 || c.Cmd[0] != "run" || c.Cmd[1] != "--config" || c.Cmd[2] != imagespec.ConfigPath {
		t.Errorf("cmd %q, want run --config %s", c.Cmd, imagespec.ConfigPath)
	}
	if want := fmt.Sprintf("%d:%d", imagespec.UID, imagespec.GID); c.User != want || imagespec.UID == 0 {
		t.Errorf("user %q, want the non-root %s", c.User, want)
	}
	for _, p := range []string{fmt.Sprintf("%d/tcp", imagespec.MetricsPort), fmt.Sprintf("%d/tcp", imagespec.FlightPort)} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("exposed ports %v lack %s", c.ExposedPorts, p)
		}
	}
	if _, ok := c.Volumes[imagespec.DataDir]; !ok || c.WorkingDir != imagespec.DataDir {
		t.Errorf("volumes %v, working dir %q: want the data directory %s", c.Volumes, c.WorkingDir, imagespec.DataDir)
	}
	if got := c.Labels["org.opencontainers.image.version"]; got != version {
		t.Errorf("version label %q, want %q", got, version)
	}
	if c.Labels["org.opencontainers.image.title"] != "thalweg" || c.Labels["org.opencontainers.image.source"] == "" {
		t.Errorf("labels %v lack title/source", c.Labels)
	}
	if got := c.Labels["org.opencontainers.image.created"]; got != "2023-11-14T22:13:20Z" {
		t.Errorf("created label %q, want SOURCE_DATE_EPOCH 1700000000", got)
	}
	if cfg.OS != "linux" || cfg.Architecture == "" {
		t.Errorf("platform %s/%s", cfg.OS, cfg.Architecture)
	}

	root := t.TempDir()
	diffID := unpack(t, blob(t, files, man.Layers[0]), root)
	if cfg.RootFS.Type != "layers" || len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != diffID {
		t.Fatalf("rootfs %+v, want the one layer's diff_id %s", cfg.RootFS, diffID)
	}
	bin := filepath.Join(root, filepath.FromSlash(c.Entrypoint[0]))
	checkStatic(t, bin)
	for _, p := range []string{"etc/passwd", "etc/group"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s missing: %v", p, err)
		}
	}
	if st, err := os.Stat(filepath.Join(root, imagespec.DataDir)); err != nil || !st.IsDir() {
		t.Errorf("data directory missing: %v", err)
	} else if os.Geteuid() == 0 {
		if sys := st.Sys().(*syscall.Stat_t); sys.Uid != imagespec.UID {
			t.Errorf("data directory owned by %d, want the image's user %d", sys.Uid, imagespec.UID)
		}
	}

	// Run `thalweg version` from the unpacked root, as the image would.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		// Inside the root, as the image's user: nothing of the host is
		// visible, so this also proves the layer is self-sufficient.
		uid, gid := parseUser(t, c.User)
		if err := os.Chmod(root, 0o755); err != nil { // the image's "/"
			t.Fatal(err)
		}
		cmd = exec.CommandContext(ctx, bin, "version")
		cmd.Path = c.Entrypoint[0] // resolved by execve after the chroot
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		cmd.Dir = "/"
		cmd.Env = c.Env
	} else {
		t.Logf("not root: running %s directly (no chroot)", bin)
		cmd = exec.CommandContext(ctx, bin, "version")
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("thalweg version in the image: %v\n%s", err, out)
	}
	want := "thalweg " + version + " "
	if !strings.HasPrefix(string(out), want) || !strings.Contains(string(out), "linux/"+cfg.Architecture) {
		t.Fatalf("thalweg version printed %q, want %q... linux/%s", out, want, cfg.Architecture)
	}
	t.Logf("in the image: %s", strings.TrimSpace(string(out)))

	// Reproducible: the same sources give the same manifest digest.
	again := buildImage(t, version)
	f2, err := os.Open(again)
	if err != nil {
		t.Fatal(err)
	}
	files2 := readArchive(t, f2)
	f2.Close()
	var idx2 ociIndex
	decodeJSON(t, "index.json", files2["index.json"], &idx2)
	if idx2.Manifests[0].Digest != md.Digest {
		t.Errorf("second build has manifest %s, first %s: the image is not reproducible", idx2.Manifests[0].Digest, md.Digest)
	}
}

// checkStatic fails unless bin is an ELF executable without an interpreter
// or shared-library dependencies: FROM scratch has no libc.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("entrypoint is not an ELF binary: %v", err)
	}
	defer ef.Close()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatalf("%s has a program interpreter: not static (CGO_ENABLED=0)", bin)
		}
	}
	if libs, _ := ef.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("%s needs shared libraries %v", bin, libs)
	}
}

func parseUser(t *testing.T, user string) (uint32, uint32) {
	t.Helper()
	u, g, _ := strings.Cut(user, ":")
	uid, err := strconv.ParseUint(u, 10, 32)
	if err != nil {
		t.Fatalf("user %q is not numeric: Kubernetes' runAsNonRoot needs a numeric user", user)
	}
	gid := uid
	if g != "" {
		if gid, err = strconv.ParseUint(g, 10, 32); err != nil {
			t.Fatalf("group of %q is not numeric", user)
		}
	}
	return uint32(uid), uint32(gid)
}
